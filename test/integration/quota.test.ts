// The free quota: 50 a day per client IP by default, shared through Redis by every instance.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { build, qs, type Built } from '../helpers/build.ts'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'

let fx: FixtureServer
beforeAll(async () => { fx = await startFixtureServer() })
afterAll(async () => { await fx.close() })

describe('free quota (in memory, default limit)', () => {
  let app: Built
  beforeAll(async () => { app = await build({ ALLOW_PRIVATE_HOSTS: fx.host }) })
  afterAll(async () => { await app.close() })

  it('refuses the 51st request of a client with ERATE and Retry-After; EPRO is not counted', async () => {
    const query = `/?${qs({ url: `${fx.origin}/plain/`, 'meta.title': true })}`
    const first = await app.free.inject({ url: query, remoteAddress: '198.51.100.10' })
    expect(first.headers['x-rate-limit-limit']).toBe('50')
    expect(first.headers['x-rate-limit-remaining']).toBe('49')
    const reset = Number(first.headers['x-rate-limit-reset'])
    expect(reset).toBeGreaterThan(Date.now() / 1000 + 86_000)
    expect(reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 86_400)

    // Refused before the quota step: not counted.
    const epro = await app.free.inject({ url: query, remoteAddress: '198.51.100.10', headers: { 'x-api-key': 'k' } })
    expect(epro.json().code).toBe('EPRO')
    expect(epro.headers['x-rate-limit-remaining']).toBeUndefined()
    // Failed requests count too.
    const failed = await app.free.inject({ url: '/?url=nope', remoteAddress: '198.51.100.10' })
    expect(failed.json().code).toBe('EINVALURL')
    expect(failed.headers['x-rate-limit-remaining']).toBe('48')

    for (let i = 3; i <= 50; i++) {
      const res = await app.free.inject({ url: query, remoteAddress: '198.51.100.10' })
      expect(res.statusCode).toBe(200)
      expect(res.headers['x-rate-limit-remaining']).toBe(String(50 - i))
    }
    const refused = await app.free.inject({ url: query, remoteAddress: '198.51.100.10' })
    expect(refused.statusCode).toBe(429)
    expect(refused.json()).toMatchObject({ status: 'fail', code: 'ERATE' })
    expect(refused.headers['x-rate-limit-remaining']).toBe('0')
    expect(refused.headers['x-rate-limit-reset']).toBe(String(reset))
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(86_000)
    expect(refused.headers['cache-control']).toBe('no-store')

    // Another client is not affected; the pro listener has no quota.
    expect((await app.free.inject({ url: query, remoteAddress: '198.51.100.11' })).statusCode).toBe(200)
    // /health is never counted.
    expect((await app.free.inject({ url: '/health', remoteAddress: '198.51.100.10' })).statusCode).toBe(200)
  })

  it('counts IPv6 clients per /64', async () => {
    const query = `/?${qs({ url: `${fx.origin}/plain/`, 'meta.title': true })}`
    const a = await app.free.inject({ url: query, remoteAddress: '2001:db8:5:6::1' })
    const b = await app.free.inject({ url: query, remoteAddress: '2001:db8:5:6:ffff::2' })
    expect(Number(b.headers['x-rate-limit-remaining'])).toBe(Number(a.headers['x-rate-limit-remaining']) - 1)
  })
})

describe('TRUST_PROXY', () => {
  it('believes x-forwarded-for only when trusted', async () => {
    const trusting = await build({ ALLOW_PRIVATE_HOSTS: fx.host, TRUST_PROXY: 'true', FREE_DAILY_LIMIT: '2' })
    const plain = await build({ ALLOW_PRIVATE_HOSTS: fx.host, FREE_DAILY_LIMIT: '2' })
    try {
      const query = `/?${qs({ url: `${fx.origin}/plain/`, meta: false })}`
      for (const ip of ['192.0.2.1', '192.0.2.2', '192.0.2.3']) {
        const res = await trusting.free.inject({ url: query, headers: { 'x-forwarded-for': ip } })
        expect(res.headers['x-rate-limit-remaining']).toBe('1')
      }
      const r1 = await plain.free.inject({ url: query, headers: { 'x-forwarded-for': '192.0.2.1' } })
      const r2 = await plain.free.inject({ url: query, headers: { 'x-forwarded-for': '192.0.2.2' } })
      expect([r1.headers['x-rate-limit-remaining'], r2.headers['x-rate-limit-remaining']]).toEqual(['1', '0'])
    } finally {
      await trusting.close()
      await plain.close()
    }
  })
})

describe('two instances on one Redis', () => {
  let a: Built
  let b: Built
  beforeAll(async () => {
    const env = { ALLOW_PRIVATE_HOSTS: fx.host, REDIS_URL: inject('redisUrl'), FREE_DAILY_LIMIT: '3', REGION: `r${Date.now()}` }
    a = await build(env)
    b = await build(env)
  })
  afterAll(async () => { await a.close(); await b.close() })

  it('share one quota', async () => {
    const query = `/?${qs({ url: `${fx.origin}/plain/`, meta: false })}`
    const ip = `203.0.113.${Math.floor(Math.random() * 200) + 1}`
    expect((await a.free.inject({ url: query, remoteAddress: ip })).headers['x-rate-limit-remaining']).toBe('2')
    expect((await b.free.inject({ url: query, remoteAddress: ip })).headers['x-rate-limit-remaining']).toBe('1')
    expect((await a.free.inject({ url: query, remoteAddress: ip })).headers['x-rate-limit-remaining']).toBe('0')
    expect((await b.free.inject({ url: query, remoteAddress: ip })).statusCode).toBe(429)
  })

  it('share one cache entry', async () => {
    const query = `/?${qs({ url: `${fx.origin}/plain/?shared=${Date.now()}`, 'meta.title': true })}`
    const first = await a.pro.inject({ url: query, headers: { 'x-api-key': 'none' } })
    expect(first.json().code).toBe('EAUTH')
    const miss = await a.free.inject({ url: query, remoteAddress: '203.0.113.250' })
    expect(miss.headers['x-cache-status']).toBe('MISS')
    const hit = await b.free.inject({ url: query, remoteAddress: '203.0.113.251' })
    expect(hit.headers['x-cache-status']).toBe('HIT')
    expect(hit.body).toBe(miss.body)
  })

  it('compute an identical request once across instances', async () => {
    const path = `/shared-slow-${Date.now()}`
    fx.route(path, (_req, res) => { setTimeout(() => { res.writeHead(200, { 'content-type': 'text/html' }); res.end('<title>Once</title>') }, 400) })
    const query = `/?${qs({ url: `${fx.origin}${path}`, 'meta.title': true })}`
    const [ra, rb] = await Promise.all([
      a.free.inject({ url: query, remoteAddress: '203.0.113.252' }),
      b.free.inject({ url: query, remoteAddress: '203.0.113.253' })
    ])
    expect(ra.json().data.title).toBe('Once')
    expect(rb.json().data.title).toBe('Once')
    expect(ra.headers['x-timestamp']).toBe(rb.headers['x-timestamp'])
    expect(fx.hitsOf(path)).toBe(1)
  })
})
