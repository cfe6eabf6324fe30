// npm run docs: writes the generated reference (docs/reference/*.md) from the parameter table and the
// error catalog. Run by Node 24, which strips the types; the rendering lives in src/docs/reference.ts.
import { mkdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { REFERENCE_FILES } from '../src/docs/reference.ts'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
for (const file of REFERENCE_FILES) {
  const target = path.join(root, file.path)
  mkdirSync(path.dirname(target), { recursive: true })
  writeFileSync(target, file.render())
  process.stdout.write(`wrote ${file.path}\n`)
}
