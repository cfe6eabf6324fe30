// Tenants on one instance (docs/api.md §16, docs/tenants.md): KEYS_FILE's keys and plans against the real app, its
// store in memory and its clock injected: EPLAN, ERATE by day and by month (the month rolls over at its start),
// x-rate-limit-* headers, GET /usage, metrics by tenant name, a key added or removed within 2 s, and no key or hash
// in a log line, a metric or an answer. The same limits across three instances on Redis: tenants-replicas.test.ts.
import { createHash } from 'node:crypto'
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { build, qs, type Built } from '../helpers/build.ts'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'

const KEYS = { acme: 'acme-key-3c1f9e', beta: 'beta-key-77d2a0', gamma: 'gamma-key-5e0b41', late: 'late-key-0aa7c3' }
const hashed = (key: string): string => `sha256:${createHash('sha256').update(key).digest('hex')}`
const DAY = 86_400_000

let fx: FixtureServer
let app: Built
let dir: string
let file: string
// The app's clock for days and months: 2026-11-30 23:59:00 UTC, moved by the month test.
let clock = Date.UTC(2026, 10, 30, 23, 59, 0)

function declare (tenants: Record<string, unknown>): void {
  // Written aside and renamed over, as an operator's tool (or a ConfigMap) replaces it.
  writeFileSync(`${file}.tmp`, JSON.stringify({ tenants }))
  renameSync(`${file}.tmp`, file)
}

const TENANTS = {
  acme: { keys: [hashed(KEYS.acme)], plan: { daily: 5, deny: ['insights', 'proxy'], maxTtl: '2d' } },
  beta: { keys: [hashed(KEYS.beta)], plan: { monthly: 3 } },
  gamma: { keys: [hashed(KEYS.gamma)] }
}

beforeAll(async () => {
  fx = await startFixtureServer()
  dir = mkdtempSync(path.join(os.tmpdir(), 'pagecast-tenants-'))
  file = path.join(dir, 'keys.json')
  declare(TENANTS)
  app = await build({ ALLOW_PRIVATE_HOSTS: fx.host, KEYS_FILE: file, BROWSER_CONCURRENCY: '1' }, { now: () => clock })
}, 60_000)

afterAll(async () => {
  await app?.close()
  await fx?.close()
  rmSync(dir, { recursive: true, force: true })
})

async function get (key: string | undefined, query: Record<string, string | number | boolean>) {
  return await app.pro.inject({ url: `/?${qs({ prerender: false, ...query })}`, headers: key === undefined ? {} : { 'x-api-key': key } })
}

async function usage (key: string) {
  return await app.pro.inject({ url: '/usage', headers: { 'x-api-key': key } })
}

describe('plans', () => {
  it('refuses a denied parameter (a dotted prefix) and a ttl over maxTtl with EPLAN naming it, uncounted', async () => {
    const url = `${fx.origin}/plain/`
    const lighthouse = await get(KEYS.acme, { url, 'insights.lighthouse': true })
    expect(lighthouse.statusCode).toBe(403)
    expect(lighthouse.json()).toMatchObject({ status: 'fail', code: 'EPLAN', data: { 'insights.lighthouse': expect.stringContaining('insights') } })
    const proxy = await get(KEYS.acme, { url, proxy: 'http://127.0.0.1:9' })
    expect(proxy.json()).toMatchObject({ code: 'EPLAN', data: { proxy: expect.any(String) } })
    const ttl = await get(KEYS.acme, { url, ttl: '3d' })
    expect(ttl.statusCode).toBe(403)
    expect(ttl.json()).toMatchObject({ code: 'EPLAN', data: { ttl: expect.any(String) } })
    // gamma's plan has none of these limits.
    expect((await get(KEYS.gamma, { url, ttl: '3d' })).statusCode).toBe(200)
    expect((await usage(KEYS.acme)).json().data.day.used).toBe(0)
  })

  it('counts a daily limit exactly, cache hits included, with x-rate-limit-* headers, then ERATE naming daily', async () => {
    const url = `${fx.origin}/plain/?daily`
    const statuses: number[] = []
    const remaining: string[] = []
    for (let i = 0; i < 5; i++) {
      const res = await get(KEYS.acme, { url })
      statuses.push(res.statusCode)
      remaining.push(String(res.headers['x-rate-limit-remaining']))
      expect(res.headers['x-rate-limit-limit']).toBe('5')
      // The next UTC midnight after the injected clock.
      expect(res.headers['x-rate-limit-reset']).toBe(String(Date.UTC(2026, 11, 1) / 1000))
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200])
    expect(remaining).toEqual(['4', '3', '2', '1', '0'])
    const refused = await get(KEYS.acme, { url })
    expect(refused.statusCode).toBe(429)
    expect(refused.json()).toMatchObject({ code: 'ERATE', data: { daily: expect.stringContaining('5') } })
    expect(Number(refused.headers['retry-after'])).toBe(60)
    expect(refused.headers['x-rate-limit-remaining']).toBe('0')
    // A tenant without a daily limit gets no x-rate-limit-* headers.
    expect((await get(KEYS.gamma, { url })).headers['x-rate-limit-limit']).toBeUndefined()
  })

  it('rolls the month over at its start (injected clock), and GET /usage shows day, month and 31 days of history', async () => {
    const url = `${fx.origin}/plain/?monthly`
    for (let i = 0; i < 3; i++) expect((await get(KEYS.beta, { url })).statusCode).toBe(200)
    const spent = await get(KEYS.beta, { url })
    expect(spent.statusCode).toBe(429)
    expect(spent.json()).toMatchObject({ code: 'ERATE', data: { monthly: expect.any(String) } })
    expect(Number(spent.headers['retry-after'])).toBe(60)

    const before = (await usage(KEYS.beta)).json().data
    expect(before).toMatchObject({ tenant: 'beta', plan: { monthly: 3 }, day: { used: 3, limit: null, remaining: null }, month: { used: 3, limit: 3, remaining: 0, reset: Date.UTC(2026, 11, 1) / 1000 }, concurrency: { limit: null, inFlight: 0 } })

    clock = Date.UTC(2026, 11, 1, 0, 0, 1)
    expect((await get(KEYS.beta, { url })).statusCode).toBe(200)
    const after = await usage(KEYS.beta)
    expect(after.headers['cache-control']).toBe('no-store')
    const data = after.json().data
    expect(data.month).toEqual({ used: 1, limit: 3, remaining: 2, reset: Date.UTC(2027, 0, 1) / 1000 })
    expect(data.day).toEqual({ used: 1, limit: null, remaining: null, reset: Date.UTC(2026, 11, 2) / 1000 })
    expect(data.history).toHaveLength(31)
    expect(data.history.at(-1)).toEqual({ date: '2026-12-01', requests: 1 })
    expect(data.history.at(-2)).toEqual({ date: '2026-11-30', requests: 3 })
    expect(data.history[0]).toEqual({ date: new Date(clock - 30 * DAY).toISOString().slice(0, 10), requests: 0 })
    // GET /usage is not counted.
    expect((await usage(KEYS.beta)).json().data.month.used).toBe(1)
    // acme's day rolled over too: the daily limit is new.
    expect((await get(KEYS.acme, { url })).headers['x-rate-limit-remaining']).toBe('4')
  })

  it('answers /usage only with a tenant\'s key, and not on the free listener', async () => {
    expect((await app.pro.inject('/usage')).json().code).toBe('EAUTH')
    expect((await usage('not-a-key')).json().code).toBe('EAUTH')
    expect((await app.free.inject('/usage')).statusCode).toBe(404)
  })
})

describe('KEYS_FILE changes', () => {
  it('takes a new key within 2 s and refuses a removed one within 2 s, without a restart', async () => {
    const url = `${fx.origin}/plain/?reload`
    expect((await get(KEYS.late, { url })).json().code).toBe('EAUTH')
    declare({ ...TENANTS, late: { keys: [hashed(KEYS.late)] } })
    let t0 = Date.now()
    while ((await get(KEYS.late, { url })).statusCode !== 200 && Date.now() - t0 < 5000) await sleep(50)
    expect(Date.now() - t0).toBeLessThan(2000)

    declare(TENANTS)
    t0 = Date.now()
    while ((await get(KEYS.late, { url })).statusCode === 200 && Date.now() - t0 < 5000) await sleep(50)
    expect(Date.now() - t0).toBeLessThan(2000)
    expect((await get(KEYS.late, { url })).json().code).toBe('EAUTH')
  })

  it('keeps the previous declarations when the new file is invalid, and says why without quoting it', async () => {
    writeFileSync(file, JSON.stringify({ tenants: { gamma: { keys: [KEYS.gamma] } } }))
    const t0 = Date.now()
    while (!app.rawLogs.some(l => l.includes('KEYS_FILE not reloaded')) && Date.now() - t0 < 5000) await sleep(50)
    expect(app.rawLogs.find(l => l.includes('KEYS_FILE not reloaded'))).toContain('tenants.gamma.keys[0]')
    expect((await get(KEYS.acme, { url: `${fx.origin}/plain/?kept` })).statusCode).toBe(200)
    declare(TENANTS)
  })
})

describe('metrics and secrets', () => {
  it('labels metrics by tenant name, and no key or key hash reaches a log line, a metric or an answer', async () => {
    const metrics = (await app.pro.inject('/metrics')).body
    expect(metrics).toMatch(/pagecast_tenant_requests_total\{tenant="acme"\} [1-9]/)
    expect(metrics).toMatch(/pagecast_tenant_cache_hits_total\{tenant="acme"\} [1-9]/)
    expect(metrics).toMatch(/pagecast_tenant_requests_total\{tenant="beta"\} 4/)
    const answers = [
      (await get('wrong-key-e3b0', { url: `${fx.origin}/plain/` })).body,
      (await get(KEYS.acme, { url: `${fx.origin}/plain/`, proxy: 'http://127.0.0.1:9' })).body,
      (await usage(KEYS.acme)).body
    ].join('\n')
    const everything = [app.rawLogs.join('\n'), metrics, answers].join('\n')
    for (const key of [...Object.values(KEYS), 'wrong-key-e3b0']) {
      expect(everything).not.toContain(key)
      expect(everything).not.toContain(hashed(key).slice(7))
    }
  })
})
