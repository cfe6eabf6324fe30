// The README leads with what a user needs and stays inside the repository: the two commands first, a
// compatibility table that names every parameter of the table (docs/reference/parameters.md comes from the
// same rows), links and images that resolve to files here, and no internal issue numbers.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { PARAMETER_ROWS } from '../../src/docs/parameters.ts'

const ROOT = path.resolve(import.meta.dirname, '../..')
const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8')

function section (title: string): string {
  const start = README.indexOf(`\n## ${title}\n`)
  expect(start, title).toBeGreaterThan(-1)
  const end = README.indexOf('\n## ', start + 1)
  return README.slice(start, end === -1 ? undefined : end)
}

describe('README.md', () => {
  it('opens with the two commands', () => {
    const first = /```sh\n([\s\S]*?)```/.exec(README)?.[1] ?? ''
    expect(first).toMatch(/^npm ci && npm start\b/m)
    expect(first).toMatch(/^npm ci && npm test\b/m)
    expect(README.indexOf('```sh')).toBeLessThan(README.indexOf('\n## '))
  })

  it('names every parameter in the compatibility table, each with a status', () => {
    const table = section('Microlink compatibility')
    for (const row of PARAMETER_ROWS) {
      const shown = row.name.startsWith(`${row.parent}.`) ? row.name.slice(row.parent.length) : row.name
      expect(table.includes(`\`${shown}\``) || table.includes(`\`${row.name}\``), row.name).toBe(true)
    }
    const statuses = [...table.matchAll(/^\| `[^\n]*? \| ([^|]+) \|[^\n]*\|$/gm)].map((m) => (m[1] ?? '').trim())
    expect(statuses.length).toBeGreaterThan(25)
    for (const status of statuses) expect(['works', '**not yet**', '—']).toContain(status)
  })

  it('links and shows only files of the repository', () => {
    const targets = [...README.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] ?? '')
    expect(targets.length).toBeGreaterThan(5)
    for (const target of targets) {
      expect(target, target).not.toMatch(/^([a-z][a-z0-9+.-]*:|\/\/)/i)
      expect(existsSync(path.join(ROOT, target.split('#')[0] ?? '')), target).toBe(true)
    }
    expect(README).not.toMatch(/<https?:/)
    expect(README).not.toMatch(/microlink\.io/i)
    expect(README).toContain('](docs/screenshot-example.png)')
  })

  it('holds no internal issue numbers', () => {
    expect(README).not.toMatch(/\bissues?\s*#?\d+/i)
    expect(README).not.toMatch(/(^|[\s(])#\d+\b/m)
  })
})

describe('the README repository map', () => {
  const map = /## Repository map\n+```\n([\s\S]*?)```/.exec(README)?.[1] ?? ''

  // What is not part of the repository: git's own folder and what .gitignore names (node_modules/, storage/, ...).
  const ignored = new Set(['.git', ...readFileSync(path.join(ROOT, '.gitignore'), 'utf8').split('\n')
    .map((line) => line.trim().replace(/^\/|\/$/g, '')).filter((line) => line !== '' && !line.includes('*'))])
  /** The folders under `dir` (relative to the root), `depth` levels deep (Infinity: all). */
  const folders = (dir: string, depth: number): string[] => depth === 0
    ? []
    : readdirSync(path.join(ROOT, dir), { withFileTypes: true })
      .filter(entry => entry.isDirectory() && !ignored.has(entry.name))
      .flatMap(entry => {
        const folder = dir === '' ? entry.name : `${dir}/${entry.name}`
        return [folder, ...folders(folder, depth - 1)]
      })
  const named = (folder: string): boolean => {
    const depth = folder.split('/').length - 1
    const name = folder.split('/').at(-1) ?? ''
    return new RegExp(`^${' '.repeat(2 * depth)}${name.replace(/[.]/g, '\\.')}/( |$)`, 'm').test(map)
  }

  it('names every folder of src/, each under its parent', () => {
    expect(map).toContain('src/ ')
    const found = folders('src', Infinity)
    expect(found.length).toBeGreaterThan(20)
    for (const folder of found) expect(named(folder), folder).toBe(true)
  })

  it('names every folder of the repository and the folders in them, each under its parent', () => {
    const found = folders('', 2)
    expect(found).toEqual(expect.arrayContaining(['.ci', 'bench', 'docs', 'docs/reference', 'src', 'test', 'test/unit']))
    expect(found).not.toContain('node_modules')
    for (const folder of found) expect(named(folder), folder).toBe(true)
  })
})
