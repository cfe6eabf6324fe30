// Issue 20, finding 1: a page whose reading would take the service's only thread for minutes (50,000 nested
// elements, 100,000 for /markdown, megabytes of ordinary markup) is read in the page reader's worker, held to the DOM
// bounds, and ended at its request's deadline; meanwhile /health and a cache hit on the other listener answer at
// once (docs/security.md, "deep and huge pages").
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { build, qs, type Built } from '../helpers/build.ts'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'

let fx: FixtureServer
let app: Built

const deep = (levels: number): string =>
  '<!doctype html><html><head><title>Deep page</title><meta name="description" content="Nested all the way down">' +
  '<meta property="og:site_name" content="Deep site"></head><body><h1>Deep heading</h1>' +
  '<div class="logo publisher author">'.repeat(levels) + 'the bottom' + '</div>'.repeat(levels) + '</body></html>'

/** About `mib` MiB of ordinary markup: paragraphs, links, images, classes. */
const huge = (mib: number): string => {
  const block = '<div class="post entry"><h2 class="entry-title"><a href="/p">A title</a></h2><p class="byline author">' +
    'by <a rel="author" href="/a">Someone</a> on <time datetime="2025-01-01">1 Jan</time></p><p>Some text with ' +
    '<img src="/i.png" alt="x"> and <span>more</span> words.</p></div>\n'
  return '<!doctype html><html><head><title>Huge page</title></head><body>' +
    block.repeat(Math.ceil(mib * 1024 * 1024 / block.length)) + '</body></html>'
}

/** `GET /health` on the free listener and a cache hit on the pro listener, every 50 ms until `done`: their latencies. */
async function sampleWhile (done: Promise<unknown>): Promise<number[]> {
  let over = false
  void done.finally(() => { over = true })
  const latencies: number[] = []
  while (!over) {
    const t = performance.now()
    const [health, hit] = await Promise.all([
      app.free.inject('/health'),
      app.pro.inject({ url: `/?${qs({ url: `${fx.origin}/plain` })}`, headers: { 'x-api-key': 'k' } })
    ])
    latencies.push(performance.now() - t)
    expect(health.statusCode).toBe(200)
    expect(hit.headers['x-cache-status']).toBe('HIT')
    await new Promise(resolve => setTimeout(resolve, 50))
  }
  return latencies
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Infinity

async function timed (request: Promise<{ statusCode: number, body: string }>): Promise<{ ms: number, status: number, text: string, body: any }> {
  const t = performance.now()
  const response = await request
  const json = (): unknown => { try { return JSON.parse(response.body) } catch { return undefined } }
  return { ms: performance.now() - t, status: response.statusCode, text: response.body, body: json() }
}

beforeAll(async () => {
  fx = await startFixtureServer()
  const pages: Record<string, string> = {
    '/plain': '<!doctype html><title>Plain</title><p>plain',
    '/deep': deep(50_000),
    '/deeper': deep(100_000),
    '/huge': huge(9.5)
  }
  for (const [path, html] of Object.entries(pages)) {
    const body = Buffer.from(html)
    fx.route(path, (_req, res) => { res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': body.length }); res.end(body) })
  }
  app = await build({ ALLOW_PRIVATE_HOSTS: fx.host, API_KEYS: 'k', FREE_DAILY_LIMIT: '1000' })
  const seeded = await app.pro.inject({ url: `/?${qs({ url: `${fx.origin}/plain` })}`, headers: { 'x-api-key': 'k' } })
  expect(seeded.statusCode).toBe(200)
})

afterAll(async () => {
  await app?.close()
  await fx?.close()
})

describe('hostile pages (issue 20, finding 1)', () => {
  it('reads 50,000 nested elements with default parameters within the timeout, the service answering meanwhile', async () => {
    // A few seconds on a quiet machine; the timeout leaves room for a loaded one.
    const hostile = timed(app.free.inject(`/?${qs({ url: `${fx.origin}/deep`, timeout: '25s' })}`))
    const latencies = await sampleWhile(hostile)
    const { ms, status, body } = await hostile
    expect(ms).toBeLessThan(26_000)
    expect(status).toBe(200)
    expect(body.data.title).toBe('Deep page')
    expect(body.data.description).toBe('Nested all the way down')
    expect(body.data.publisher).toBe('Deep site')
    expect(median(latencies)).toBeLessThan(100)
  })

  it('answers /markdown of 100,000 nested elements within the timeout, the service answering meanwhile', async () => {
    const hostile = timed(app.free.inject(`/markdown?${qs({ url: `${fx.origin}/deeper`, timeout: '8s' })}`))
    const latencies = await sampleWhile(hostile)
    const { ms, status, text, body } = await hostile
    expect(ms).toBeLessThan(9_000)
    // The page is cut at MAX_DOM_ELEMENTS, so its last words are gone; what is read is converted, or the deadline says so.
    if (status === 200) expect(text).toContain('Deep heading')
    else expect([status, body?.code]).toEqual([504, 'ETIMEOUT'])
    expect(median(latencies)).toBeLessThan(100)
  })

  it('ends the reading of megabytes of markup at the deadline with ETIMEOUT, or answers before it', async () => {
    const query = qs({ url: `${fx.origin}/huge`, timeout: '3s', 'data.main.selector': 'body', 'data.main.attr': 'markdown', 'data.main.type': 'string', mainContent: 'true' })
    const hostile = timed(app.free.inject(`/?${query}`))
    const latencies = await sampleWhile(hostile)
    const { ms, status, body } = await hostile
    expect(ms).toBeLessThan(4_000)
    if (status !== 200) {
      expect(status).toBe(504)
      expect(body.code).toBe('ETIMEOUT')
    }
    expect(median(latencies)).toBeLessThan(100)
    // The reader is whole again: the next page is read as usual.
    const next = await app.free.inject(`/?${qs({ url: `${fx.origin}/plain`, force: 'true' })}`)
    expect(next.json().data.title).toBe('Plain')
  })
})
