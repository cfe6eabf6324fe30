#!/usr/bin/env node
// Refreshes the bundled cookie-notice hiding rules in data/cookie-notices/adguard/ (docs/bundled-data.md) from the
// npm package @adguard/dnr-rulesets, unpacked by a developer, so nothing is downloaded when pagecast runs. Run by
// hand, never at install:
//
//   mkdir /tmp/ag && cd /tmp/ag && npm pack @adguard/dnr-rulesets && tar xzf adguard-dnr-rulesets-*.tgz
//   node scripts/update-cookie-notices.mjs /tmp/ag/package
//
// The package carries each AdGuard filter list's source text next to its declarative rules; filter 18 is the
// "AdGuard Cookie Notices filter" (GPL-3.0). Only its element-hiding rules (`##` and their `#@#` exceptions, in the
// syntax Ghostery's engine reads) are kept, with the list's own header; the network rules, scriptlets, CSS injections
// and AdGuard-only modifiers are dropped, unchanged otherwise. The package's licence is copied beside them.
import { createHash } from 'node:crypto'
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'

const OUT = path.resolve(import.meta.dirname, '../data/cookie-notices/adguard')
const FILTER_ID = 18

/** An element-hiding rule or exception, in the syntax shared with EasyList (no AdGuard-only markers). */
function isElementHiding (line) {
  if (line.startsWith('!') || line.startsWith('[$') || line.includes('$$')) return false
  const at = line.search(/#@?#/)
  if (at < 0) return false
  // `#?#` (extended CSS), `#$#` (CSS injection), `#%#` (scriptlets) and their exceptions are AdGuard's own.
  return !/#@?[?$%]#/.test(line)
}

const dir = process.argv[2]
if (dir === undefined) {
  console.error('usage: node scripts/update-cookie-notices.mjs <unpacked @adguard/dnr-rulesets package>')
  process.exit(2)
}
const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'))
const ruleset = JSON.parse(readFileSync(path.join(dir, `dist/filters/declarative/ruleset_${FILTER_ID}/ruleset_${FILTER_ID}.json`), 'utf8'))
const raw = ruleset[0]?.metadata?.rawFilterList
if (typeof raw !== 'string') throw new Error(`ruleset_${FILTER_ID}.json: no rawFilterList in its first rule's metadata`)

const lines = raw.split(/\r?\n/)
const header = []
for (const line of lines) {
  if (!line.startsWith('!')) break
  if (/^! (Title|Description|Version|TimeUpdated|Homepage|License):/.test(line)) header.push(line)
}
const rules = lines.filter(isElementHiding)
const text = [
  ...header,
  `! Element-hiding rules only, taken from ${pkg.name}@${pkg.version} (ruleset_${FILTER_ID}) by scripts/update-cookie-notices.mjs.`,
  ...rules,
  ''
].join('\n')
writeFileSync(path.join(OUT, 'cookie-notices.txt'), text)
copyFileSync(path.join(dir, 'LICENSE'), path.join(OUT, 'LICENSE'))
const field = (name) => header.find((l) => l.startsWith(`! ${name}:`))?.slice(name.length + 3).trim()
const source = {
  package: pkg.name,
  version: pkg.version,
  packageLicense: pkg.license,
  filter: FILTER_ID,
  title: field('Title'),
  listVersion: field('Version'),
  listUpdated: field('TimeUpdated'),
  rules: rules.length,
  sha256: createHash('sha256').update(text).digest('hex')
}
writeFileSync(path.join(OUT, 'SOURCE.json'), JSON.stringify(source, null, 2) + '\n')
console.log(`${rules.length} element-hiding rules written to ${path.relative(process.cwd(), OUT)}/cookie-notices.txt`)
