// /metrics (docs/api.md §12.2): Prometheus text from a registry per context, on both listeners; never counted,
// rate-limited or cached; labels are fixed enums only; counts are `_total` counters; its own listener with
// METRICS_PORT, nowhere with METRICS=false.
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { buildMetricsApp } from '../../src/app.ts'
import { build, qs, type Built } from '../helpers/build.ts'
import { freePort } from '../setup/global-setup.ts'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'
import { parseMetrics, valueOf, type Sample } from '../helpers/metrics.ts'

const ROOT = path.resolve(import.meta.dirname, '../..')
const VERSION = (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version

let fx: FixtureServer
let a: Built
let b: Built

beforeAll(async () => {
  fx = await startFixtureServer()
  const env = { ALLOW_PRIVATE_HOSTS: fx.host, API_KEYS: 'metrics-key-secret', FREE_DAILY_LIMIT: '3' }
  // Two apps in one process: each has its own registry, so neither sees the other's counts.
  a = await build(env)
  b = await build(env)
}, 60_000)

afterAll(async () => {
  await a?.close()
  await b?.close()
  await fx?.close()
})

async function scrape (app: Built, listener: 'free' | 'pro' = 'free'): Promise<{ samples: Sample[], text: string, headers: Record<string, unknown>, status: number }> {
  const res = await app[listener].inject({ url: '/metrics', remoteAddress: '203.0.113.9' })
  return { samples: parseMetrics(res.body), text: res.body, headers: res.headers, status: res.statusCode }
}

describe('/metrics', () => {
  it('counts requests, cache statuses, fetch modes and quota refusals, per context', async () => {
    const query = `/?${qs({ url: `${fx.origin}/plain/?secret-marker-in-url=1`, 'meta.title': true })}`
    const miss = await a.free.inject({ url: query, remoteAddress: '203.0.113.5' })
    expect(miss.headers['x-cache-status']).toBe('MISS')
    const hit = await a.free.inject({ url: query, remoteAddress: '203.0.113.5' })
    expect(hit.headers['x-cache-status']).toBe('HIT')
    const bypass = await a.pro.inject({ url: `${query}&force`, headers: { 'x-api-key': 'metrics-key-secret' } })
    expect(bypass.headers['x-cache-status']).toBe('BYPASS')
    expect((await a.free.inject({ url: '/no/such/path-marker', remoteAddress: '203.0.113.6' })).statusCode).toBe(404)
    expect((await a.pro.inject({ url: query, headers: { 'x-api-key': 'wrong-key-secret' } })).json().code).toBe('EAUTH')
    // The quota of 3: the third counts, the fourth is refused.
    await a.free.inject({ url: query, remoteAddress: '203.0.113.5' })
    const refused = await a.free.inject({ url: query, remoteAddress: '203.0.113.5' })
    expect(refused.json().code).toBe('ERATE')

    const { samples, text, headers, status } = await scrape(a)
    expect(status).toBe(200)
    expect(headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/)
    expect(headers['cache-control']).toBe('no-store')
    // Never rate-limited: the quota headers are not sent, though 203.0.113.5 is out of quota.
    expect(headers['x-rate-limit-limit']).toBeUndefined()

    expect(valueOf(samples, 'pagecast_requests_total', { listener: 'free', status: '200', code: 'none' })).toBe(3)
    expect(valueOf(samples, 'pagecast_requests_total', { listener: 'free', status: '404', code: 'ENOTFOUND' })).toBe(1)
    expect(valueOf(samples, 'pagecast_requests_total', { listener: 'free', status: '429', code: 'ERATE' })).toBe(1)
    expect(valueOf(samples, 'pagecast_requests_total', { listener: 'pro', status: '200', code: 'none' })).toBe(1)
    expect(valueOf(samples, 'pagecast_requests_total', { listener: 'pro', status: '403', code: 'EAUTH' })).toBe(1)
    expect(valueOf(samples, 'pagecast_request_duration_seconds_count', { listener: 'free' })).toBe(5)
    expect(valueOf(samples, 'pagecast_request_duration_seconds_bucket', { listener: 'free', le: '+Inf' })).toBe(5)
    expect(valueOf(samples, 'pagecast_cache_total', { status: 'MISS' })).toBe(1)
    expect(valueOf(samples, 'pagecast_cache_total', { status: 'HIT' })).toBe(2)
    expect(valueOf(samples, 'pagecast_cache_total', { status: 'BYPASS' })).toBe(1)
    expect(valueOf(samples, 'pagecast_fetch_total', { mode: 'fetch' })).toBe(2)
    expect(valueOf(samples, 'pagecast_fetch_duration_seconds_count', { outcome: 'ok' })).toBe(2)
    expect(valueOf(samples, 'pagecast_quota_refusals_total', { reason: 'limit' })).toBe(1)
    expect(valueOf(samples, 'pagecast_browser_pages_active')).toBe(0)
    expect(valueOf(samples, 'pagecast_browser_queue_length')).toBe(0)
    expect(valueOf(samples, 'pagecast_browser_launches_total')).toBe(0)
    // Process metrics, in this context's registry.
    expect(valueOf(samples, 'process_cpu_user_seconds_total')).toBeGreaterThan(0)
    expect(samples.some(s => s.name.startsWith('nodejs_heap_size_used_bytes'))).toBe(true)

    // Labels are fixed enums: no URL, path, address or key reaches the text.
    for (const secret of ['secret-marker-in-url', 'path-marker', '203.0.113', 'metrics-key-secret', 'wrong-key-secret', fx.host]) {
      expect(text).not.toContain(secret)
    }

    // The other context counted nothing of this.
    const other = await scrape(b)
    expect(other.samples.filter(s => s.name === 'pagecast_requests_total')).toEqual([])
    expect(valueOf(other.samples, 'pagecast_cache_total', { status: 'HIT' })).toBe(0)
  })

  it('is served on both listeners, never counted and never cached', async () => {
    const before = await scrape(a, 'pro')
    expect(before.status).toBe(200)
    const total = (samples: Sample[]): number => samples.filter(s => s.name === 'pagecast_requests_total').reduce((n, s) => n + s.value, 0)
    await scrape(a, 'free')
    await scrape(a, 'pro')
    const after = await scrape(a, 'pro')
    expect(total(after.samples)).toBe(total(before.samples))
    expect(after.headers['cache-control']).toBe('no-store')
    // /health is an ordinary counted route, so counting still works between the scrapes.
    await a.pro.inject({ url: '/health' })
    expect(total((await scrape(a, 'pro')).samples)).toBe(total(before.samples) + 1)
  })

  it('times renders and reads the browser pool at scrape time', async () => {
    const res = await a.pro.inject({
      url: `/?${qs({ url: `${fx.origin}/red/`, prerender: true, waitUntil: 'load' })}`,
      headers: { 'x-api-key': 'metrics-key-secret' }
    })
    expect(res.statusCode).toBe(200)
    expect(res.headers['x-fetch-mode']).toBe('prerender')
    const { samples } = await scrape(a)
    expect(valueOf(samples, 'pagecast_fetch_total', { mode: 'prerender' })).toBe(1)
    expect(valueOf(samples, 'pagecast_render_duration_seconds_count', { outcome: 'ok' })).toBe(1)
    expect(valueOf(samples, 'pagecast_render_duration_seconds_sum', { outcome: 'ok' })).toBeGreaterThan(0)
    expect(valueOf(samples, 'pagecast_browser_launches_total')).toBe(1)
    expect(valueOf(samples, 'pagecast_browser_jobs_total')).toBe(1)

    // A render in progress shows up in the gauge at scrape time, and leaves it once done.
    fx.route('/slow', (_req, res) => { setTimeout(() => { res.writeHead(200, { 'content-type': 'text/html' }); res.end('<title>Slow</title>') }, 1500) })
    const slow = a.pro.inject({
      url: `/?${qs({ url: `${fx.origin}/slow`, prerender: true, waitUntil: 'load' })}`,
      headers: { 'x-api-key': 'metrics-key-secret' }
    })
    await vi.waitFor(() => { expect(fx.hitsOf('/slow')).toBe(1) }, { timeout: 10_000 })
    expect(valueOf((await scrape(a)).samples, 'pagecast_browser_pages_active')).toBe(1)
    expect((await slow).statusCode).toBe(200)
    await vi.waitFor(async () => { expect(valueOf((await scrape(a)).samples, 'pagecast_browser_pages_active')).toBe(0) })
  }, 60_000)
})

describe('metric names', () => {
  it('are counters named _total for every monotonic count, and pagecast_build_info carries the version', async () => {
    const { text, samples } = await scrape(a)
    const types = new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map(m => [m[1] ?? '', m[2] ?? '']))
    for (const name of [
      'pagecast_requests_total', 'pagecast_cache_total', 'pagecast_fetch_total', 'pagecast_quota_refusals_total',
      'pagecast_browser_launches_total', 'pagecast_browser_jobs_total'
    ]) {
      expect(types.get(name), name).toBe('counter')
    }
    // Every counter, ours and the process's, is named _total; nothing else is.
    for (const [name, type] of types) {
      if (type === 'counter') expect(name, name).toMatch(/_total$/)
      if (name.startsWith('pagecast_') && name.endsWith('_total')) expect(type, name).toBe('counter')
    }
    for (const gone of ['pagecast_browser_launches', 'pagecast_browser_jobs']) expect(types.has(gone), gone).toBe(false)
    expect(types.get('pagecast_build_info')).toBe('gauge')
    expect(samples.filter(s => s.name === 'pagecast_build_info')).toEqual([{ name: 'pagecast_build_info', labels: { version: VERSION }, value: 1 }])
  })
})

describe('METRICS_PORT', () => {
  it('moves /metrics to its own listener: the public ones answer 404 ENOTFOUND', async () => {
    const own = await build({ METRICS_PORT: '0' })
    const metrics = await buildMetricsApp(own.ctx)
    try {
      expect(metrics).toBeDefined()
      const metricsUrl = await metrics?.listen({ port: 0, host: '127.0.0.1' }) ?? ''
      const freeUrl = await own.free.listen({ port: 0, host: '127.0.0.1' })
      const proUrl = await own.pro.listen({ port: 0, host: '127.0.0.1' })
      for (const base of [freeUrl, proUrl]) {
        const res = await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(5_000) })
        expect(res.status).toBe(404)
        expect(((await res.json()) as { code: string }).code).toBe('ENOTFOUND')
      }
      const res = await fetch(`${metricsUrl}/metrics`, { signal: AbortSignal.timeout(5_000) })
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
      expect(res.headers.get('cache-control')).toBe('no-store')
      const samples = parseMetrics(await res.text())
      expect(valueOf(samples, 'pagecast_build_info', { version: VERSION })).toBe(1)
      // The two 404s above were counted, by the public listeners.
      expect(valueOf(samples, 'pagecast_requests_total', { listener: 'free', status: '404', code: 'ENOTFOUND' })).toBe(1)
      // Nothing else lives on the metrics listener.
      for (const route of ['/', '/health', '/ready', '/docs']) {
        const other = await fetch(`${metricsUrl}${route}`, { signal: AbortSignal.timeout(5_000) })
        expect(other.status, route).toBe(404)
        expect(((await other.json()) as { code: string }).code).toBe('ENOTFOUND')
      }
      const posted = await fetch(`${metricsUrl}/metrics`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' }, signal: AbortSignal.timeout(5_000) })
      expect(posted.status).toBe(404)
    } finally {
      await metrics?.close()
      await own.close()
    }
  })

  it('METRICS=false turns /metrics off everywhere, METRICS_PORT or not', async () => {
    const off = await build({ METRICS: 'false', METRICS_PORT: '0' })
    try {
      expect(await buildMetricsApp(off.ctx)).toBeUndefined()
      for (const listener of [off.free, off.pro]) {
        const res = await listener.inject('/metrics')
        expect(res.statusCode).toBe(404)
        expect(res.json().code).toBe('ENOTFOUND')
      }
    } finally {
      await off.close()
    }
    const noPort = await build({ METRICS: 'false' })
    try {
      expect(await buildMetricsApp(noPort.ctx)).toBeUndefined()
      expect((await noPort.free.inject('/metrics')).statusCode).toBe(404)
    } finally {
      await noPort.close()
    }
  })

  it('the process serves it on METRICS_PORT, bound to HOST, and not on the public ports', async () => {
    const [free, pro, metrics] = [await freePort(), await freePort(), await freePort()]
    const child = spawn(process.execPath, ['src/server.ts'], {
      cwd: ROOT,
      env: { ...process.env, FREE_PORT: String(free), PRO_PORT: String(pro), METRICS_PORT: String(metrics), HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe']
    })
    const exited = new Promise<number | null>(resolve => child.on('exit', resolve))
    // What the process wrote (warnings and errors), shown if it does not exit cleanly.
    let output = ''
    child.stdout.on('data', (d: Buffer) => { output += d.toString() })
    child.stderr.on('data', (d: Buffer) => { output += d.toString() })
    try {
      await vi.waitFor(async () => {
        expect((await fetch(`http://127.0.0.1:${metrics}/metrics`)).status).toBe(200)
      }, { timeout: 20_000, interval: 100 })
      const text = await (await fetch(`http://127.0.0.1:${metrics}/metrics`)).text()
      expect(valueOf(parseMetrics(text), 'pagecast_build_info', { version: VERSION })).toBe(1)
      expect((await fetch(`http://127.0.0.1:${free}/metrics`)).status).toBe(404)
      expect((await fetch(`http://127.0.0.1:${pro}/metrics`)).status).toBe(404)
      child.kill('SIGTERM')
      expect(await exited, output).toBe(0)
      await expect(fetch(`http://127.0.0.1:${metrics}/metrics`)).rejects.toThrow()
    } finally {
      child.kill('SIGKILL')
    }
  }, 60_000)
})
