// Answers computed under a shortened deadline, or whose waits gave up, are incomplete (docs/api.md §7): answered
// with `cache-control: no-store`, never stored, and their files never replace the complete entry's. So a free client
// with a short `timeout` (or `force=true` and a short `timeout`) cannot plant the page's loading state for others.
// Real Chromium, real HTTP fixture on loopback; the fixture page shows "loading" until its `load` event, which a
// held image delays for as long as the test wants.
import type http from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { build, qs, type Built } from '../helpers/build.ts'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'

const PAGE = `<!doctype html><html><head><title>loading</title>
<style>html, body { margin: 0; height: 100%; background: rgb(200, 0, 0) } body.ready { background: rgb(0, 160, 0) }</style>
</head><body><h1 id="state">loading</h1><img src="/held.png" width="10" height="10" alt="">
<script>addEventListener('load', () => {
  document.title = 'ready'; document.getElementById('state').textContent = 'ready'; document.body.className = 'ready'
})</script></body></html>`

let fx: FixtureServer
let app: Built
/** While true, the page's image is not answered (its `load` event waits); answered at once otherwise. */
let holdImage = false
const held: http.ServerResponse[] = []

beforeAll(async () => {
  fx = await startFixtureServer()
  fx.route('/progressive', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    res.end(PAGE)
  })
  fx.route('/held.png', (_req, res) => {
    if (holdImage) { held.push(res); return }
    res.writeHead(404, { 'content-type': 'text/plain' })
    res.end()
  })
  app = await build({ ALLOW_PRIVATE_HOSTS: fx.host, FREE_DAILY_LIMIT: '0' })
  // The browser started before the short deadlines below are measured.
  const warm = await free({ url: `${fx.origin}/progressive?warm`, prerender: true, 'meta.title': true })
  expect(warm.json().data.title).toBe('ready')
}, 60_000)

afterAll(async () => {
  for (const res of held) res.destroy()
  await app?.close()
  await fx?.close()
})

async function free (query: Record<string, string | number | boolean>) {
  return await app.free.inject({ url: `/?${qs(query)}` })
}

describe('incomplete answers', () => {
  it('a short timeout gets the page as loaded, not cached: a later request computes it whole and gets no HIT of it', async () => {
    const query = { url: `${fx.origin}/progressive?case=timeout`, prerender: true, 'meta.title': true }
    holdImage = true
    const short = await free({ ...query, timeout: '6s' })
    expect(short.statusCode).toBe(200)
    expect(short.json().data.title).toBe('loading')
    expect(short.headers['x-cache-status']).toBe('MISS')
    expect(short.headers['cache-control']).toBe('no-store')

    holdImage = false
    const normal = await free(query)
    expect(normal.headers['x-cache-status']).toBe('MISS')
    expect(normal.json().data.title).toBe('ready')
    expect(normal.headers['cache-control']).toMatch(/^public, immutable, max-age=\d+$/)
    const again = await free(query)
    expect(again.headers['x-cache-status']).toBe('HIT')
    expect(again.json().data.title).toBe('ready')
  }, 60_000)

  it('force=true with a short timeout leaves the complete entry and its screenshot file as they were', async () => {
    const query = { url: `${fx.origin}/progressive?case=force`, prerender: true, 'meta.title': true, screenshot: true }
    holdImage = false
    const good = await free(query)
    expect(good.headers['x-cache-status']).toBe('MISS')
    expect(good.json().data.title).toBe('ready')
    const goodUrl = good.json().data.screenshot.url as string
    const fileOf = async (url: string): Promise<Buffer> => {
      const res = await app.free.inject({ url: new URL(url).pathname })
      expect(res.statusCode).toBe(200)
      return res.rawPayload
    }
    const goodBytes = await fileOf(goodUrl)

    holdImage = true
    const forced = await free({ ...query, force: true, timeout: '6s' })
    expect(forced.statusCode).toBe(200)
    expect(forced.headers['x-cache-status']).toBe('BYPASS')
    expect(forced.headers['cache-control']).toBe('no-store')
    expect(forced.json().data.title).toBe('loading')
    // Its own screenshot (the red page), under a key of its own.
    const forcedUrl = forced.json().data.screenshot.url as string
    expect(forcedUrl).not.toBe(goodUrl)
    expect((await fileOf(forcedUrl)).equals(goodBytes)).toBe(false)

    holdImage = false
    const after = await free(query)
    expect(after.headers['x-cache-status']).toBe('HIT')
    expect(after.json().data.title).toBe('ready')
    expect(after.json().data.screenshot.url).toBe(goodUrl)
    expect((await fileOf(goodUrl)).equals(goodBytes)).toBe(true)
  }, 60_000)

  it('a waitForSelector that gave up is not cached either', async () => {
    const query = { url: `${fx.origin}/progressive?case=selector`, 'meta.title': true, waitForSelector: '#never', timeout: '4s' }
    holdImage = false
    for (let i = 0; i < 2; i++) {
      const res = await free(query)
      expect(res.statusCode).toBe(200)
      expect(res.headers['x-cache-status']).toBe('MISS')
      expect(res.headers['cache-control']).toBe('no-store')
    }
    // A selector that is met is cached as usual.
    const met = { ...query, waitForSelector: '#state' }
    expect((await free(met)).headers['x-cache-status']).toBe('MISS')
    expect((await free(met)).headers['x-cache-status']).toBe('HIT')
  }, 60_000)
})
