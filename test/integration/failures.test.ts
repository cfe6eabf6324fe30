// Failing dependencies: Redis down at start or gone mid-run (QUOTA_FAIL_MODE open and closed), S3
// unreachable, Chromium killed mid-request. Each scenario owns the dependency it breaks (a redis-server
// and an s3rver started here on free ports), never the run's shared ones. The process never crashes and
// recovers by itself.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { build, qs, type Built } from '../helpers/build.ts'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'
import { parseMetrics, valueOf } from '../helpers/metrics.ts'

async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = net.createServer()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => { resolve(port) })
    })
  })
}

async function listening (port: number): Promise<boolean> {
  return await new Promise(resolve => {
    const socket = net.connect(port, '127.0.0.1')
    socket.once('connect', () => { socket.end(); resolve(true) })
    socket.once('error', () => { resolve(false) })
  })
}

/** A redis-server of this test's own, which it may kill and start again on the same port. */
class OwnRedis {
  readonly port: number
  readonly url: string
  private child: ChildProcess | undefined
  private readonly dir = mkdtempSync(path.join(os.tmpdir(), 'pagecast-own-redis-'))
  constructor (port: number) { this.port = port; this.url = `redis://127.0.0.1:${port}` }
  async start (): Promise<void> {
    this.child = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', this.dir], { stdio: 'ignore' })
    await vi.waitFor(async () => { expect(await listening(this.port)).toBe(true) }, { timeout: 10_000, interval: 50 })
  }
  async kill (): Promise<void> {
    const child = this.child
    if (child === undefined || child.exitCode !== null) return
    const exited = new Promise(resolve => child.once('exit', resolve))
    child.kill('SIGKILL')
    await exited
    this.child = undefined
  }
  async dispose (): Promise<void> {
    await this.kill()
    rmSync(this.dir, { recursive: true, force: true })
  }
}

interface S3rverInstance { run (): Promise<net.AddressInfo>, close (): Promise<void> }
type S3rverConstructor = new (options: { address: string, port: number, directory: string, silent: boolean, configureBuckets: Array<{ name: string }> }) => S3rverInstance
const S3rver = createRequire(import.meta.url)('s3rver') as S3rverConstructor

let fx: FixtureServer
const apps: Built[] = []
const redises: OwnRedis[] = []

beforeAll(async () => {
  fx = await startFixtureServer()
  // Never ends on its own: a request for it is in the browser until something breaks.
  fx.route('/hang', () => {})
})
afterAll(async () => { await fx?.close() })
afterEach(async () => {
  await Promise.all(apps.splice(0).map(async app => { await app.close() }))
  await Promise.all(redises.splice(0).map(async r => { await r.dispose() }))
})

async function newApp (env: Record<string, string>): Promise<Built> {
  const app = await build({ ALLOW_PRIVATE_HOSTS: fx.host, API_KEYS: 'k', ...env })
  apps.push(app)
  return app
}

async function newRedis (): Promise<OwnRedis> {
  const redis = new OwnRedis(await freePort())
  redises.push(redis)
  return redis
}

const IP = '198.51.100.77'
function freeQuery (tag: string): string {
  return `/?${qs({ url: `${fx.origin}/plain/?${tag}`, 'meta.title': true })}`
}

describe('Redis', () => {
  it('down at start, QUOTA_FAIL_MODE=open (default): serves uncounted, /ready names the store; recovers when it comes', async () => {
    const redis = await newRedis()
    const app = await newApp({ REDIS_URL: redis.url })
    expect(app.config.quotaFailMode).toBe('open')

    // Served around (docs/api.md §12.2): 200 degraded, the store named, on both listeners.
    for (const listener of [app.free, app.pro]) {
      const ready = await listener.inject('/ready')
      expect(ready.statusCode).toBe(200)
      expect(ready.json()).toEqual({ status: 'degraded', checks: { browser: 'ok', store: 'error', storage: 'ok' } })
    }

    const served = await app.free.inject({ url: freeQuery('open'), remoteAddress: IP })
    expect(served.statusCode).toBe(200)
    expect(served.json().data.title).toBe('A plain page')
    expect(served.headers['x-rate-limit-remaining']).toBeUndefined()
    expect(app.logs.some(l => l.msg === 'quota store unavailable; request not counted' && l.level === 40)).toBe(true)
    // Nothing could be cached: the same request is computed again, and fast: store calls fail at once
    // while Redis is known to be away instead of each waiting out a reconnect attempt.
    const t = performance.now()
    expect((await app.free.inject({ url: freeQuery('open'), remoteAddress: IP })).headers['x-cache-status']).toBe('MISS')
    expect(performance.now() - t).toBeLessThan(2000)

    await redis.start()
    await vi.waitFor(async () => {
      expect((await app.free.inject('/ready')).json()).toEqual({ status: 'ok', checks: { browser: 'ok', store: 'ok', storage: 'ok' } })
    }, { timeout: 15_000, interval: 200 })
    const counted = await app.free.inject({ url: freeQuery('open'), remoteAddress: IP })
    expect(counted.statusCode).toBe(200)
    expect(counted.headers['x-rate-limit-remaining']).toBe('49')
    const hit = await app.free.inject({ url: freeQuery('open'), remoteAddress: IP })
    expect(hit.headers['x-cache-status']).toBe('HIT')
    expect(hit.headers['x-rate-limit-remaining']).toBe('48')
  }, 60_000)

  it('gone mid-run, QUOTA_FAIL_MODE=closed: 503 EBUSY with Retry-After, no crash; back to normal when it returns', async () => {
    const redis = await newRedis()
    await redis.start()
    const app = await newApp({ REDIS_URL: redis.url, QUOTA_FAIL_MODE: 'closed' })
    const first = await app.free.inject({ url: freeQuery('closed'), remoteAddress: IP })
    expect(first.statusCode).toBe(200)
    expect(first.headers['x-rate-limit-remaining']).toBe('49')

    await redis.kill()
    const t = performance.now()
    const refused = await app.free.inject({ url: freeQuery('closed'), remoteAddress: IP })
    expect(performance.now() - t).toBeLessThan(2000)
    expect(refused.statusCode).toBe(503)
    expect(refused.json()).toMatchObject({ status: 'error', code: 'EBUSY', data: { quota: expect.any(String) } })
    expect(refused.headers['retry-after']).toBe('5')
    expect(refused.headers['cache-control']).toBe('no-store')
    // The pro listener has no quota and keeps serving (uncached) while Redis is away.
    const pro = await app.pro.inject({ url: freeQuery('closed-pro'), headers: { 'x-api-key': 'k' } })
    expect(pro.statusCode).toBe(200)
    expect((await app.free.inject('/health')).statusCode).toBe(200)
    // The free listener cannot serve (every request is refused): 503. The pro listener has no quota: degraded.
    const freeReady = await app.free.inject('/ready')
    expect(freeReady.statusCode).toBe(503)
    expect(freeReady.json()).toEqual({ status: 'error', checks: { browser: 'ok', store: 'error', storage: 'ok' } })
    const proReady = await app.pro.inject('/ready')
    expect(proReady.statusCode).toBe(200)
    expect(proReady.json()).toEqual({ status: 'degraded', checks: { browser: 'ok', store: 'error', storage: 'ok' } })
    const metrics = parseMetrics((await app.free.inject('/metrics')).body)
    expect(valueOf(metrics, 'pagecast_quota_refusals_total', { reason: 'store_unavailable' })).toBe(1)
    expect(valueOf(metrics, 'pagecast_requests_total', { listener: 'free', status: '503', code: 'EBUSY' })).toBe(1)

    await redis.start()
    // The counter died with that Redis (no persistence): counting starts again, and the cache fills again.
    await vi.waitFor(async () => {
      const res = await app.free.inject({ url: freeQuery('closed'), remoteAddress: IP })
      expect(res.statusCode).toBe(200)
    }, { timeout: 15_000, interval: 200 })
    const hit = await app.free.inject({ url: freeQuery('closed'), remoteAddress: IP })
    expect(hit.headers['x-cache-status']).toBe('HIT')
    expect(Number(hit.headers['x-rate-limit-remaining'])).toBeLessThan(50)
    expect((await app.free.inject('/ready')).json()).toMatchObject({ status: 'ok' })
  }, 60_000)

  it('gone mid-run: one warning with the error for the whole outage, not four a request; the count once it is back', async () => {
    const redis = await newRedis()
    await redis.start()
    const app = await newApp({ REDIS_URL: redis.url })
    expect((await app.free.inject({ url: freeQuery('outage-0'), remoteAddress: IP })).statusCode).toBe(200)
    await redis.kill()
    await vi.waitFor(async () => {
      expect((await app.free.inject('/ready')).json().checks.store).toBe('error')
    }, { timeout: 20_000, interval: 200 })
    const from = app.logs.length
    // Each of these asks the store four times (quota, cache read, lock, cache write), and each is refused.
    for (let i = 1; i <= 5; i++) {
      expect((await app.free.inject({ url: freeQuery(`outage-${i}`), remoteAddress: IP })).statusCode).toBe(200)
    }
    const during = app.logs.slice(from)
    // One warning in all, from any of the service's Redis connections (the job system's queues, workers and job store
    // included: under load they see the outage after /ready does), and it carries the error's stack.
    const warnings = during.filter(line => Number(line.level) >= 40)
    expect(warnings.map(line => `${String(line.msg)}: ${String((line.err as { message?: unknown } | undefined)?.message)}`)).toHaveLength(1)
    expect(typeof (warnings[0]?.err as { stack?: unknown } | undefined)?.stack).toBe('string')
    expect(JSON.stringify(warnings[0]?.err)).toContain('StoreUnavailableError')
    await redis.start()
    await vi.waitFor(() => {
      expect(app.logs.find(line => line.msg === 'redis is back')).toMatchObject({ level: 30, refusedCalls: expect.any(Number) })
    }, { timeout: 20_000, interval: 200 })
    expect(Number(app.logs.find(line => line.msg === 'redis is back')?.refusedCalls)).toBeGreaterThanOrEqual(20)
  }, 90_000)

  it('gone and back: the service still closes, its job worker between two reconnect attempts (bullmq#4656)', async () => {
    const redis = await newRedis()
    await redis.start()
    const app = await newApp({ REDIS_URL: redis.url })
    expect((await app.free.inject({ url: freeQuery('close-0'), remoteAddress: IP })).statusCode).toBe(200)
    await redis.kill()
    // Long enough for the clients' reconnect attempts to be a second or more apart (redis-connect.ts).
    await new Promise(resolve => setTimeout(resolve, 4_000))
    await redis.start()
    // At once: the worker's blocking connection is still waiting for its next attempt. BullMQ's graceful close
    // waited for that connection's 'end', which never came.
    apps.splice(apps.indexOf(app), 1)
    const closing = app.close()
    const outcome = await Promise.race([closing.then(() => 'closed'), new Promise(resolve => setTimeout(resolve, 30_000, 'hung'))])
    expect(outcome).toBe('closed')
  }, 90_000)

  it('QUOTA_FAIL_MODE accepts open or closed only', async () => {
    await expect(newApp({ QUOTA_FAIL_MODE: 'ajar' })).rejects.toThrow(/QUOTA_FAIL_MODE must be open or closed/)
  })
})

describe('S3', () => {
  it('unreachable: a screenshot answers 500 EFATAL, nothing is cached, and the retry after it returns stores', async () => {
    const port = await freePort()
    const dir = mkdtempSync(path.join(os.tmpdir(), 'pagecast-own-s3-'))
    const endpoint = `http://127.0.0.1:${port}`
    const app = await newApp({
      S3_BUCKET: 'own-bucket',
      S3_ENDPOINT: endpoint,
      S3_ACCESS_KEY_ID: 'S3RVER',
      S3_SECRET_ACCESS_KEY: 'S3RVER',
      S3_FORCE_PATH_STYLE: 'true',
      CDN_URL: `${endpoint}/own-bucket`
    })
    const query = `/?${qs({ url: `${fx.origin}/red/`, screenshot: true, waitUntil: 'load', 'viewport.deviceScaleFactor': 1 })}`
    let s3: S3rverInstance | undefined
    try {
      const failed = await app.pro.inject({ url: query, headers: { 'x-api-key': 'k' } })
      expect(failed.statusCode).toBe(500)
      expect(failed.json()).toMatchObject({ status: 'error', code: 'EFATAL' })
      expect(failed.body).not.toContain(endpoint)
      // Metadata is still served without storage: degraded (200), storage named.
      const ready = await app.pro.inject('/ready')
      expect(ready.statusCode).toBe(200)
      expect(ready.json()).toEqual({ status: 'degraded', checks: { browser: 'ok', store: 'ok', storage: 'error' } })
      const metadata = await app.pro.inject({ url: `/?${qs({ url: `${fx.origin}/plain/?no-storage`, 'meta.title': true })}`, headers: { 'x-api-key': 'k' } })
      expect(metadata.statusCode).toBe(200)

      s3 = new S3rver({ address: '127.0.0.1', port, directory: dir, silent: true, configureBuckets: [{ name: 'own-bucket' }] })
      await s3.run()
      await vi.waitFor(async () => { expect((await app.pro.inject('/ready')).json().status).toBe('ok') }, { timeout: 15_000, interval: 200 })
      // Not a HIT: the failed computation left nothing in the cache.
      const stored = await app.pro.inject({ url: query, headers: { 'x-api-key': 'k' } })
      expect(stored.statusCode).toBe(200)
      expect(stored.headers['x-cache-status']).toBe('MISS')
      const object = await fetch(stored.json().data.screenshot.url)
      expect(object.status).toBe(200)
      expect(Buffer.from(await object.arrayBuffer()).subarray(0, 4)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47]))
      expect((await app.pro.inject({ url: query, headers: { 'x-api-key': 'k' } })).headers['x-cache-status']).toBe('HIT')
    } finally {
      await s3?.close()
      rmSync(dir, { recursive: true, force: true })
    }
  }, 90_000)
})

/** Processes that are zombies (state Z) and whose parent is this test process. */
function zombieChildren (): number[] {
  const zombies: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    let stat: string
    try { stat = readFileSync(`/proc/${name}/stat`, 'utf8') } catch { continue }
    const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    if (state === 'Z' && Number(ppid) === process.pid) zombies.push(Number(name))
  }
  return zombies
}

/** Live (non-zombie) processes still in the group the browser led. */
function groupMembers (pgid: number): number[] {
  const members: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    let stat: string
    try { stat = readFileSync(`/proc/${name}/stat`, 'utf8') } catch { continue }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    if (Number(fields[2]) === pgid && fields[0] !== 'Z') members.push(Number(name))
  }
  return members
}

describe('Chromium', () => {
  it('killed mid-request: that request fails with a code, the next succeeds, no zombie is left', async () => {
    const app = await newApp({ BROWSER_CONCURRENCY: '1' })
    const hanging = app.pro.inject({
      url: `/?${qs({ url: `${fx.origin}/hang`, prerender: true, retry: 0, timeout: '20s' })}`,
      headers: { 'x-api-key': 'k' }
    })
    await vi.waitFor(() => { expect(fx.hitsOf('/hang')).toBeGreaterThanOrEqual(1) }, { timeout: 20_000, interval: 50 })
    const pid = app.ctx.browser.browserPid()
    expect(pid).toBeGreaterThan(0)
    process.kill(pid as number, 'SIGKILL')

    const failed = await hanging
    expect(failed.statusCode).toBe(500)
    expect(failed.json()).toMatchObject({ status: 'error', code: 'EFATAL' })

    const next = await app.pro.inject({
      url: `/?${qs({ url: `${fx.origin}/red/`, prerender: true, waitUntil: 'load' })}`,
      headers: { 'x-api-key': 'k' }
    })
    expect(next.statusCode).toBe(200)
    expect(next.json().data.title).toBe('Red')
    expect(app.ctx.browser.browserPid()).not.toBe(pid)
    expect(app.ctx.browser.health()).toBe(true)
    const metrics = parseMetrics((await app.pro.inject('/metrics')).body)
    expect(valueOf(metrics, 'pagecast_browser_launches_total')).toBe(2)
    expect(valueOf(metrics, 'pagecast_render_duration_seconds_count', { outcome: 'error' })).toBe(1)
    await vi.waitFor(() => {
      expect(zombieChildren()).toEqual([])
      expect(groupMembers(pid as number)).toEqual([])
    }, { timeout: 10_000, interval: 100 })
  }, 90_000)
})

/** A CHROMIUM_PATH that runs Debian's chromium, unless told to fail (`fail` exists) or to start slowly (`slow`). */
function launcher (): { path: string, fail: string, slow: string, dispose (): void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pagecast-launcher-'))
  const file = path.join(dir, 'chromium')
  const fail = path.join(dir, 'fail')
  const slow = path.join(dir, 'slow')
  writeFileSync(file, `#!/bin/sh\n[ -e '${fail}' ] && exit 1\n[ -e '${slow}' ] && sleep 1\nexec /usr/bin/chromium "$@"\n`, { mode: 0o755 })
  return { path: file, fail, slow, dispose () { rmSync(dir, { recursive: true, force: true }) } }
}

describe('/ready and the browser (docs/api.md §12.2)', () => {
  it('stays ok through a planned relaunch (BROWSER_MAX_JOBS)', async () => {
    const chromium = launcher()
    try {
      const app = await newApp({ CHROMIUM_PATH: chromium.path, BROWSER_MAX_JOBS: '1' })
      await app.ctx.browser.warm()
      const firstPid = app.ctx.browser.browserPid()
      // The next browser takes a second longer to start, so the relaunch is seen.
      writeFileSync(chromium.slow, '')
      const render = app.pro.inject({ url: `/?${qs({ url: `${fx.origin}/red/`, prerender: true, waitUntil: 'load' })}`, headers: { 'x-api-key': 'k' } })
      const samples: Array<{ up: boolean, status: number, body: unknown }> = []
      let rendered: Awaited<typeof render> | undefined
      void render.then(res => { rendered = res })
      const until = Date.now() + 20_000
      while (Date.now() < until && (rendered === undefined || !app.ctx.browser.health() || app.ctx.browser.browserPid() === firstPid)) {
        const up = app.ctx.browser.health()
        for (const listener of [app.free, app.pro]) {
          const res = await listener.inject('/ready')
          samples.push({ up, status: res.statusCode, body: res.json() })
        }
        await new Promise(resolve => setTimeout(resolve, 25))
      }
      expect((await render).statusCode).toBe(200)
      expect(app.ctx.browser.browserPid()).not.toBe(firstPid)
      expect(app.ctx.browser.stats().launches).toBe(2)
      // Some answers came while no browser was up, and every answer was ok.
      expect(samples.filter(s => !s.up).length).toBeGreaterThan(0)
      for (const sample of samples) {
        expect(sample).toMatchObject({ status: 200, body: { status: 'ok', checks: { browser: 'ok', store: 'ok', storage: 'ok' } } })
      }
    } finally {
      chromium.dispose()
    }
  }, 60_000)

  it('is degraded while relaunches fail, 503 once the browser is unrecoverable, and ok again when a relaunch succeeds', async () => {
    const chromium = launcher()
    try {
      const app = await newApp({ CHROMIUM_PATH: chromium.path })
      await app.ctx.browser.warm()
      expect((await app.pro.inject('/ready')).json()).toMatchObject({ status: 'ok' })
      writeFileSync(chromium.fail, '')
      process.kill(app.ctx.browser.browserPid() as number, 'SIGKILL')

      // Relaunch attempts fail (with their backoff); nobody needs to ask for a render for them to go on.
      const seen: string[] = []
      await vi.waitFor(async () => {
        const res = await app.pro.inject('/ready')
        const summary = `${res.statusCode} ${(res.json() as { status: string }).status}`
        if (seen.at(-1) !== summary) seen.push(summary)
        expect(res.statusCode).toBe(503)
      }, { timeout: 20_000, interval: 50 })
      expect(seen).toContain('200 degraded')
      expect(seen.indexOf('200 degraded')).toBeLessThan(seen.indexOf('503 error'))
      for (const listener of [app.free, app.pro]) {
        const res = await listener.inject('/ready')
        expect(res.statusCode).toBe(503)
        expect(res.json()).toEqual({ status: 'error', checks: { browser: 'error', store: 'ok', storage: 'ok' } })
      }
      // /health still says the process runs: a load balancer stops routing here, nobody restarts it.
      expect((await app.pro.inject('/health')).statusCode).toBe(200)

      rmSync(chromium.fail)
      await vi.waitFor(async () => {
        expect((await app.pro.inject('/ready')).json()).toEqual({ status: 'ok', checks: { browser: 'ok', store: 'ok', storage: 'ok' } })
      }, { timeout: 20_000, interval: 200 })
      const next = await app.pro.inject({ url: `/?${qs({ url: `${fx.origin}/red/`, prerender: true, waitUntil: 'load' })}`, headers: { 'x-api-key': 'k' } })
      expect(next.statusCode).toBe(200)
      expect(next.json().data.title).toBe('Red')
    } finally {
      chromium.dispose()
    }
  }, 60_000)
})

describe('/ready while draining', () => {
  it('answers 503 error with the service named, on both listeners', async () => {
    const app = await newApp({})
    expect((await app.free.inject('/ready')).statusCode).toBe(200)
    // What server.ts sets when SIGTERM arrives, before the listeners close.
    app.ctx.closing = true
    for (const listener of [app.free, app.pro]) {
      const res = await listener.inject('/ready')
      expect(res.statusCode).toBe(503)
      expect(res.json()).toEqual({ status: 'error', checks: { browser: 'ok', store: 'ok', storage: 'ok', service: 'error' } })
    }
  })
})
