import { describe, expect, it } from 'vitest'
import { re2Status } from '../../src/util/re2.ts'

describe('re2Status', () => {
  it('finds re2 working under the Node that runs the tests, which is the one that runs the service', () => {
    // npm test and npm start both go through scripts/node.sh, and npm ci built re2 for that Node
    // (docs/operations.md#installing): a failure here means url matching would fall back to RegExp.
    expect(re2Status()).toEqual({ active: true })
  })

  it('reports why it is not active', () => {
    const missing = re2Status(() => { throw new Error("Cannot find module 're2'\nRequire stack:\n- x") })
    expect(missing).toEqual({ active: false, reason: "Cannot find module 're2'" })
    expect(re2Status(() => ({}))).toMatchObject({ active: false })
    expect(re2Status(() => function RE2 () {})).toEqual({ active: true })
  })
})
