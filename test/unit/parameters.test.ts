// The parameter table and what is derived from it: the derived lists are the ones the service had before
// the table existed, and a misspelt parameter or sub-key name does not compile.
import { describe, expect, it } from 'vitest'
import { BROWSER_NEEDS, CACHE_KEY_RULES, KNOWN_ROOT, PLAN_GATES } from '../../src/schemas/derived.ts'
import { newNode } from '../../src/schemas/grammar.ts'
import { rootKid, sub } from '../../src/schemas/readers.ts'
import { SCREENSHOT_SHAPE } from '../../src/schemas/shapes.ts'

describe('the parameter table', () => {
  it('gates the pro-only parameters in the order of the error catalog', () => {
    expect(PLAN_GATES.map(({ name, gate }) => [name, gate.code])).toEqual([
      ['ttl', 'ETTL'], ['staleTtl', 'ESTTL'], ['cacheKey', 'ECACHEKEY'], ['headers', 'EHEADERS'], ['proxy', 'EPROXY'], ['filename', 'EFILENAME']
    ])
  })

  it('leaves out of the cache key what never changes the output, and hashes what must not sit in it in clear', () => {
    const by = (rule: string): string[] => [...CACHE_KEY_RULES].filter(([, r]) => r === rule).map(([name]) => name).sort()
    expect(by('leave-out')).toEqual(['embed', 'filter', 'force', 'retry', 'staleTtl', 'timeout'])
    expect(by('hash')).toEqual(['proxy'])
    expect(by('hash-values')).toEqual(['headers'])
    expect(by('with-function')).toEqual(['args'])
  })

  it('knows which parameters can need the browser', () => {
    expect(BROWSER_NEEDS.map(({ name }) => name).sort()).toEqual([
      'actions', 'click', 'data', 'function', 'insights', 'modules', 'pdf', 'screenshot', 'scripts', 'scroll', 'styles', 'waitForSelector', 'waitForTimeout', 'waitUntil'
    ])
  })

  it('gives the grammar every root name: parameters, aliases, legacy names and refused ones, but not args', () => {
    for (const name of ['url', 'stream', 'fullPage', 'pageRanges', 'path', 'waitForSelector']) expect(KNOWN_ROOT.has(name), name).toBe(true)
    expect(KNOWN_ROOT.has('args')).toBe(false)
  })

  it('reaches nodes by typed names only', () => {
    const node = newNode()
    // @ts-expect-error a misspelt parameter name does not compile
    expect(rootKid(node, 'waitForSelectr')).toBeUndefined()
    // @ts-expect-error a misspelt sub-key does not compile
    expect(sub(node, SCREENSHOT_SHAPE, 'fullPag')).toBeUndefined()
    expect(sub(node, SCREENSHOT_SHAPE, 'fullPage')).toBeUndefined()
  })
})
