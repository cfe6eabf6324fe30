// `retry` (docs/api.md §3.6) against a real failure: the renderer is killed while it loads the target (the page's
// image route kills every renderer process of the service's Chromium when the request reaches it). A retry
// loads the page again in a fresh page and answers 200; with `retry=0` the crash is the request's failure (400
// EPAGECRASH), as is a page that crashes its renderer itself by exhausting its memory. Target statuses are never
// retried: a 503 is fetched once.
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { build, qs, type Built } from '../helpers/build.ts'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'
import { rendererProcesses } from '../helpers/processes.ts'

let fx: FixtureServer
let app: Built
/** Requests that reached each route. */
const hits = new Map<string, number>()

function count (path: string): number {
  const n = (hits.get(path) ?? 0) + 1
  hits.set(path, n)
  return n
}

/** Renderer processes the trigger killed. */
const killed: number[] = []

beforeAll(async () => {
  fx = await startFixtureServer()
  // The page loads an image; the first time the image is asked for (per query), every renderer of the service's
  // Chromium is killed, so the committed page crashes while it waits for its load event.
  fx.route('/crash-once', (req, res) => {
    count(req.url ?? '')
    const query = new URL(req.url ?? '/', 'http://x').search
    res.writeHead(200, { 'content-type': 'text/html' })
    res.end(`<!doctype html><html><head><title>Survived</title></head><body><p>Loaded.</p><img src="/crash-trigger${query}"></body></html>`)
  })
  fx.route('/crash-trigger', (req, res) => {
    if (count(req.url ?? '') === 1) {
      const browserPid = app.ctx.browser.browserPid()
      for (const pid of browserPid === undefined ? [] : rendererProcesses(browserPid)) {
        try {
          process.kill(pid, 'SIGKILL')
          killed.push(pid)
        } catch {}
      }
    }
    void sleep(300).then(() => { res.writeHead(404); res.end() })
  })
  // A page that exhausts its renderer's memory (some 4 GB, in 256 MB arrays): Chromium ends the renderer.
  fx.route('/memory-hog', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' })
    res.end('<!doctype html><html><head><title>Hog</title></head><body><script>const held = []; for (;;) held.push(new Array(1 << 25).fill(0.5))</script></body></html>')
  })
  fx.route('/unavailable', (req, res) => {
    count(req.url ?? '')
    res.writeHead(503, { 'content-type': 'text/html' })
    res.end('<!doctype html><title>Down</title><p>Try later.</p>')
  })
  app = await build({ ALLOW_PRIVATE_HOSTS: fx.host, API_KEYS: 'k', BROWSER_CONCURRENCY: '1' })
  // A render first, so the browser and a renderer are up when the crash test starts.
  await app.pro.inject({ url: `/?${qs({ url: `${fx.origin}/plain/`, prerender: true })}`, headers: { 'x-api-key': 'k' } })
}, 120_000)

afterAll(async () => {
  await app?.close()
  await fx?.close()
})

async function render (path: string, query: Record<string, string | number | boolean>) {
  return await app.pro.inject({
    url: `/?${qs({ url: `${fx.origin}${path}`, prerender: true, force: true, timeout: 20_000, waitUntil: 'load', ...query })}`,
    headers: { 'x-api-key': 'k' }
  })
}

describe('retry', () => {
  it('loads the page again after its renderer is killed mid-navigation, and answers 200', async () => {
    const res = await render('/crash-once?case=retried', { retry: 2 })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json().data.title).toBe('Survived')
    expect(killed.length).toBeGreaterThan(0)
    expect(hits.get('/crash-once?case=retried')).toBe(2)
  }, 60_000)

  it('with retry=0 the crash fails the request with a code, and the next request is served', async () => {
    const res = await render('/crash-once?case=once', { retry: 0 })
    // The page's renderer died and the browser went on: the page's doing as far as the service can tell (issue 20).
    expect(res.statusCode).toBe(400)
    expect(res.json().code).toBe('EPAGECRASH')
    expect(res.body).not.toMatch(/at .*\.ts:\d+/)
    expect(hits.get('/crash-once?case=once')).toBe(1)
    const next = await render('/crash-once?case=once', { retry: 0 })
    expect(next.statusCode, next.body).toBe(200)
    expect(next.json().data.title).toBe('Survived')
  }, 60_000)

  it('a page that exhausts its renderer\'s memory gets a 4xx code, not a 500 (issue 20), and the next request is served', async () => {
    const res = await render('/memory-hog', { retry: 0, timeout: 50_000 })
    expect(res.statusCode, res.body.slice(0, 300)).toBe(400)
    expect(res.json()).toMatchObject({ status: 'fail', code: 'EPAGECRASH' })
    expect(res.body).not.toMatch(/at .*\.ts:\d+/)
    const next = await render('/crash-once?case=after-hog', { retry: 2 })
    expect(next.statusCode, next.body).toBe(200)
  }, 90_000)

  it('never retries a target status', async () => {
    const res = await render('/unavailable?case=status', { retry: 5 })
    expect(res.statusCode).toBe(200)
    expect(res.json().statusCode).toBe(503)
    expect(hits.get('/unavailable?case=status')).toBe(1)
  }, 60_000)
})
