// The generated reference (docs/reference/*.md) must be what the table and the catalog render today:
// when this fails, run `npm run docs` and commit the result.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { REFERENCE_FILES } from '../../src/docs/reference.ts'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

describe('generated reference', () => {
  for (const file of REFERENCE_FILES) {
    it(`${file.path} is up to date (else run npm run docs)`, () => {
      let committed = ''
      try {
        committed = readFileSync(path.join(root, file.path), 'utf8')
      } catch {}
      expect(committed, `${file.path} is out of date: run \`npm run docs\``).toBe(file.render())
    })
  }
})
