// The tenant directory (src/tenants/directory.ts): KEYS_FILE checked with messages that name the place and never a
// value, keys only as sha256: digests, a lookup by the key's hash, API_KEYS as the tenant `default`, reloads.
import { createHash } from 'node:crypto'
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import pino from 'pino'
import { ConfigError } from '../../src/config.ts'
import { declarationsOf, keyDigest, loadTenantDirectory } from '../../src/tenants/directory.ts'
import type { TenantDirectory } from '../../src/tenants/types.ts'

const hashed = (key: string): string => `sha256:${createHash('sha256').update(key).digest('hex')}`
const silent = pino({ level: 'silent' })

describe('declarationsOf', () => {
  it('builds tenants with plans (maxTtl as ms), secrets, and a lookup by digest', () => {
    const d = declarationsOf({
      tenants: {
        acme: { keys: [hashed('k1'), hashed('k2')], plan: { daily: 10, monthly: 100, concurrency: 2, maxTtl: '7d', deny: ['insights', 'proxy'] }, signing: ['a-long-random-secret'] },
        beta: { keys: [hashed('k3')] }
      }
    })
    expect(d.byDigest.get(keyDigest('k1'))?.name).toBe('acme')
    expect(d.byDigest.get(keyDigest('k2'))?.name).toBe('acme')
    expect(d.byDigest.get(keyDigest('k3'))?.plan).toEqual({})
    expect(d.byName.get('acme')?.plan).toEqual({ daily: 10, monthly: 100, concurrency: 2, maxTtl: 7 * 86_400_000, deny: ['insights', 'proxy'] })
  })

  it('makes API_KEYS the tenant `default` without limits, beside the file\'s', () => {
    const d = declarationsOf({ tenants: { acme: { keys: [hashed('k1')] } } }, ['plain', hashed('other')])
    expect(d.byDigest.get(keyDigest('plain'))?.name).toBe('default')
    expect(d.byDigest.get(keyDigest('other'))?.name).toBe('default')
    expect(d.byName.get('default')?.plan).toEqual({})
  })

  it.each([
    [{}, 'the file must hold'],
    [{ tenants: { 'a b': {} } }, 'tenants.a b has a name'],
    [{ tenants: { acme: { keys: ['plain-key-in-the-file'] } } }, 'tenants.acme.keys[0] must be "sha256:"'],
    [{ tenants: { acme: { keys: [hashed('x').toUpperCase()] } } }, 'tenants.acme.keys[0]'],
    [{ tenants: { acme: { plan: { daily: 0 } } } }, 'tenants.acme.plan.daily must be a whole number'],
    [{ tenants: { acme: { plan: { hourly: 1 } } } }, 'tenants.acme.plan.hourly is not a plan field'],
    [{ tenants: { acme: { plan: { maxTtl: 'soon' } } } }, 'tenants.acme.plan.maxTtl must be a duration'],
    [{ tenants: { acme: { plan: { deny: ['ok', 3] } } } }, 'tenants.acme.plan.deny must be a list'],
    [{ tenants: { acme: { signing: ['short'] } } }, 'tenants.acme.signing must be a list of secrets'],
    [{ tenants: { acme: { key: [] } } }, 'tenants.acme.key is not a tenant field'],
    [{ tenants: { a: { keys: [hashed('same')] }, b: { keys: [hashed('same')] } } }, 'tenants.b.keys[0] is a key that another entry declares']
  ])('refuses %j naming the place', (document, message) => {
    expect(() => declarationsOf(document)).toThrow(message)
  })

  it('never quotes a value in its message (a plain key or a secret written by mistake)', () => {
    let message = ''
    try { declarationsOf({ tenants: { acme: { keys: ['my-plain-secret-key'], signing: ['tiny'] } } }) } catch (err) { message = (err as Error).message }
    expect(message).not.toBe('')
    expect(message).not.toContain('my-plain-secret-key')
  })
})

describe('loadTenantDirectory', () => {
  const dirs: string[] = []
  const opened: TenantDirectory[] = []
  afterEach(() => {
    for (const d of opened.splice(0)) d.close()
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
  })
  function folder (): string {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'pagecast-keys-'))
    dirs.push(dir)
    return dir
  }

  it('stops startup on an invalid file with a ConfigError naming KEYS_FILE and the place, not the text', () => {
    const file = path.join(folder(), 'keys.json')
    writeFileSync(file, '{"tenants": {"acme": {"keys": ["sk-plain-oops"]}}}')
    expect(() => loadTenantDirectory({ apiKeys: [], keysFile: file, log: silent })).toThrow(ConfigError)
    expect(() => loadTenantDirectory({ apiKeys: [], keysFile: file, log: silent })).toThrow(/KEYS_FILE tenants\.acme\.keys\[0\]/)
    writeFileSync(file, '{"tenants": {"acme": {"keys": ["sk-plain-oops"')
    expect(() => loadTenantDirectory({ apiKeys: [], keysFile: file, log: silent })).toThrow(/KEYS_FILE the file is not valid JSON/)
    expect(() => loadTenantDirectory({ apiKeys: [], keysFile: path.join(folder(), 'absent.json'), log: silent })).toThrow(/KEYS_FILE could not be read \(ENOENT\)/)
  })

  it('reads YAML by the file name', () => {
    const file = path.join(folder(), 'keys.yaml')
    writeFileSync(file, `tenants:\n  acme:\n    keys: ["${hashed('yaml-key')}"]\n    plan: {daily: 5}\n`)
    const dir = loadTenantDirectory({ apiKeys: [], keysFile: file, log: silent })
    opened.push(dir)
    expect(dir.byKey('yaml-key')?.plan.daily).toBe(5)
    expect(dir.byKey(hashed('yaml-key'))).toBeUndefined()
    expect(dir.byKey('')).toBeUndefined()
  })

  it('takes a change within 2 s (a rename over the file included) and keeps the previous declarations on a bad one', async () => {
    const dir0 = folder()
    const file = path.join(dir0, 'keys.json')
    writeFileSync(file, JSON.stringify({ tenants: { acme: { keys: [hashed('old')] } } }))
    const lines: string[] = []
    const log = pino({ level: 'info' }, { write: (line: string) => { lines.push(line) } })
    const dir = loadTenantDirectory({ apiKeys: [], keysFile: file, log })
    opened.push(dir)
    expect(dir.byKey('old')?.name).toBe('acme')

    const tmp = path.join(dir0, 'keys.json.tmp')
    writeFileSync(tmp, JSON.stringify({ tenants: { acme: { keys: [hashed('new')] } } }))
    renameSync(tmp, file)
    const t0 = Date.now()
    while (dir.byKey('new') === undefined && Date.now() - t0 < 5000) await new Promise(resolve => setTimeout(resolve, 20))
    expect(Date.now() - t0).toBeLessThan(2000)
    expect(dir.byKey('old')).toBeUndefined()

    writeFileSync(file, JSON.stringify({ tenants: { acme: { keys: ['plain-key-by-mistake'] } } }))
    const t1 = Date.now()
    while (!lines.some(l => l.includes('not reloaded')) && Date.now() - t1 < 5000) await new Promise(resolve => setTimeout(resolve, 20))
    expect(dir.byKey('new')?.name).toBe('acme')
    const logged = lines.find(l => l.includes('not reloaded')) ?? ''
    expect(logged).toContain('tenants.acme.keys[0]')
    expect(logged).not.toContain('plain-key-by-mistake')
  })

  it('finds one of 10,000 tenants by its key without a scan (a lookup costs about the same as with one tenant)', () => {
    const tenants: Record<string, { keys: string[] }> = {}
    for (let i = 0; i < 10_000; i++) tenants[`t${i}`] = { keys: [hashed(`key-${i}`)] }
    const file = path.join(folder(), 'keys.json')
    writeFileSync(file, JSON.stringify({ tenants }))
    const dir = loadTenantDirectory({ apiKeys: [], keysFile: file, log: silent })
    opened.push(dir)
    expect(dir.size).toBe(10_000)
    expect(dir.byKey('key-9999')?.name).toBe('t9999')
    expect(dir.byKey('key-10000')).toBeUndefined()
  })
})
