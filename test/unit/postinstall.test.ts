// scripts/postinstall.mjs building re2 (docs/operations.md#installing), run for real in a scratch project whose re2
// is a stand-in: its install script prints compiler-like output by the hundred lines, as re2's build from source
// does, and succeeds or fails. The terminal gets a few lines when it succeeds, and the build's last lines when it
// fails; the whole output is kept in a log file.
import { spawnSync } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'

const ROOT = path.resolve(import.meta.dirname, '../..')
const dirs: string[] = []
afterAll(() => { for (const dir of dirs) rmSync(dir, { recursive: true, force: true }) })

/** A project with the real postinstall script and a stand-in re2 that is not built yet. */
function project (buildExitCode: number): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pagecast-postinstall-'))
  dirs.push(dir)
  mkdirSync(path.join(dir, 'scripts'))
  copyFileSync(path.join(ROOT, 'scripts/postinstall.mjs'), path.join(dir, 'scripts/postinstall.mjs'))
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'scratch', private: true, type: 'module' }))
  const re2 = path.join(dir, 'node_modules', 're2')
  mkdirSync(re2, { recursive: true })
  writeFileSync(path.join(re2, 'package.json'), JSON.stringify({ name: 're2', version: '0.0.0', main: 'index.js', scripts: { install: 'node build.js' } }))
  writeFileSync(path.join(re2, 'index.js'), "if (!require('fs').existsSync(__dirname + '/built')) throw new Error('re2 is not built')\n")
  writeFileSync(path.join(re2, 'build.js'), `
for (let i = 0; i < 400; i++) console.log('  CXX(target) Release/obj.target/re2/lib/file' + i + '.o')
for (let i = 0; i < 100; i++) console.error('../lib/file' + i + '.cc:12:5: warning: unused variable [-Wunused-variable]')
if (${buildExitCode} === 0) require('fs').writeFileSync(__dirname + '/built', '')
else console.error('gyp ERR! build error: make failed with exit code 2')
process.exit(${buildExitCode})
`)
  return dir
}

function postinstall (dir: string): { status: number | null, lines: string[] } {
  // This process's Node is 24 or later (npm test runs on one), so nothing is fetched.
  const env = { PATH: process.env.PATH, HOME: process.env.HOME }
  const result = spawnSync(process.execPath, ['scripts/postinstall.mjs'], { cwd: dir, env, encoding: 'utf8', timeout: 120_000 })
  return { status: result.status, lines: `${result.stdout}${result.stderr}`.split('\n').filter(line => line.trim() !== '') }
}

describe('postinstall building re2', () => {
  it('keeps the compiler quiet when the build succeeds: a few lines, the whole output in a log file', () => {
    const dir = project(0)
    const { status, lines } = postinstall(dir)
    expect(status).toBe(0)
    expect(lines.length, lines.join('\n')).toBeLessThanOrEqual(6)
    expect(lines.join('\n')).not.toMatch(/CXX\(target\)|warning: unused/)
    expect(lines.at(-1)).toMatch(/re2 ok \(built in \d+ s\)/)
    expect(lines.join('\n')).toContain('takes 2 to 10 minutes')
    const log = readFileSync(path.join(dir, 'node_modules', '.pagecast-re2-build.log'), 'utf8')
    expect(log.split('\n').filter(line => line.includes('CXX(target)'))).toHaveLength(400)
  }, 150_000)

  it('shows the build\'s last lines when it fails, and still lets the install finish', () => {
    const dir = project(1)
    const { status, lines } = postinstall(dir)
    expect(status).toBe(0)
    const text = lines.join('\n')
    expect(text).toContain("re2's build failed (exit code 1)")
    expect(text).toContain('gyp ERR! build error: make failed with exit code 2')
    expect(text).toContain('re2 does not load')
    expect(lines.length, text).toBeLessThan(60)
  }, 150_000)
})
