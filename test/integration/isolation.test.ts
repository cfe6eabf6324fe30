// Isolation between jobs that share a slot (docs/api.md §3.6: no shared cookies or storage). The pool reuses one context
// and page per slot and resets them between jobs; these tests set every kind of state in job 1 on a loopback origin
// and check that job 2, on the same origin and the same slot (concurrency 1), sees none of it. They also check
// that job 2 really reused the context (stats().contexts), so what is proven is the reset, not a new context.
import { readFile } from 'node:fs/promises'
import type http from 'node:http'
import path from 'node:path'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAddressGuard } from '../../src/net/guard.ts'
import { createBrowserPool } from '../../src/browser/pool/index.ts'
import type { BrowserPool, JobInfo } from '../../src/browser/pool/index.ts'
import type { Emulation } from '../../src/browser/emulation.ts'
import { startFixtureServer } from '../helpers/fixture-server.ts'
import type { FixtureServer } from '../helpers/fixture-server.ts'

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/browser')

let site: FixtureServer
let thirdParty: FixtureServer
let pool: BrowserPool
let cachedHits = 0
let memoryHits = 0
const siteRequests: http.IncomingMessage[] = []

const BASE: Emulation = {
  viewport: { width: 800, height: 600 },
  deviceScaleFactor: 1,
  isMobile: false,
  hasTouch: false,
  userAgent: 'pagecast-isolation-test',
  javaScriptEnabled: true,
  colorScheme: 'no-preference',
  reducedMotion: false,
  extraHTTPHeaders: {}
}

function run<T> (job: (page: Page, info: JobInfo) => Promise<T>, emulation: Emulation = BASE): Promise<T> {
  return pool.run(job, { signal: AbortSignal.timeout(20_000), emulation })
}

function html (res: http.ServerResponse, body: string): void {
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(body) })
  res.end(body)
}

beforeAll(async () => {
  site = await startFixtureServer()
  thirdParty = await startFixtureServer()
  const plain = await readFile(path.join(FIXTURES, 'plain.html'), 'utf8')
  const host = (await readFile(path.join(FIXTURES, 'frame-host.html'), 'utf8')).replaceAll('{{FRAME}}', `${thirdParty.origin}/storage-writer.html`)
  const writer = await readFile(path.join(FIXTURES, 'storage-writer.html'), 'utf8')
  site.route('/plain.html', (req, res) => { siteRequests.push(req); html(res, plain) })
  site.route('/frame-host.html', (_req, res) => { html(res, host) })
  site.route('/set-cookie', (_req, res) => {
    res.writeHead(200, { 'set-cookie': 'server=1; Path=/; Max-Age=3600', 'content-type': 'text/plain' })
    res.end('ok')
  })
  // Cacheable for an hour: a second fetch that reaches the server proves the HTTP cache was emptied.
  site.route('/cached', (_req, res) => {
    cachedHits += 1
    res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'public, max-age=3600' })
    res.end(`token-${cachedHits}`)
  })
  site.route('/memory.js', (_req, res) => {
    memoryHits += 1
    res.writeHead(200, { 'content-type': 'text/javascript', 'cache-control': 'public, max-age=3600' })
    res.end(`window.__memory = ${memoryHits}`)
  })
  thirdParty.route('/storage-writer.html', (_req, res) => { html(res, writer) })
  const guard = createAddressGuard({ allowPrivateHosts: [site.host, thirdParty.host] })
  pool = await createBrowserPool({ concurrency: 1, queueLimit: 8 }, { guard })
})

afterAll(async () => {
  await pool?.close()
  await Promise.all([site?.close(), thirdParty?.close()])
})

describe('state set by one job is invisible to the next on the same slot', () => {
  it('cookies, storage of every kind, HTTP cache, permissions, history, window.name, listeners, routes and per-job emulation', async () => {
    const A = site.origin
    const requestsSeenByJob1: string[] = []

    const set = await run(async (page) => {
      // Job-level changes a careless pipeline could leave behind.
      page.on('request', (request) => { requestsSeenByJob1.push(request.url()) })
      await page.goto(`${A}/plain.html`)
      await page.evaluate(async () => { await fetch('/set-cookie') })
      const state = await page.evaluate(`(async () => {
        document.cookie = 'js=1; Max-Age=3600'
        localStorage.setItem('local', '1')
        sessionStorage.setItem('session', '1')
        window.name = 'job-1'
        history.pushState({}, '', '/plain.html?step=1')
        history.pushState({}, '', '/plain.html?step=2')
        await new Promise((resolve, reject) => {
          const open = indexedDB.open('job1', 1)
          open.onupgradeneeded = () => open.result.createObjectStore('things')
          open.onsuccess = () => {
            const tx = open.result.transaction('things', 'readwrite')
            tx.objectStore('things').put('secret', 'key')
            tx.oncomplete = () => { open.result.close(); resolve() }
            tx.onerror = () => reject(tx.error)
          }
          open.onerror = () => reject(open.error)
        })
        const cache = await caches.open('job1')
        await cache.put('/cache-api', new Response('stored'))
        const token = await (await fetch('/cached')).text()
        const again = await (await fetch('/cached')).text()
        await new Promise((resolve) => { const s = document.createElement('script'); s.src = '/memory.js'; s.onload = resolve; document.head.append(s) })
        return { cookie: document.cookie, token, again, databases: (await indexedDB.databases()).map((d) => d.name), caches: await caches.keys() }
      })()`) as { cookie: string, token: string, again: string, databases: string[], caches: string[] }
      await page.context().grantPermissions(['geolocation', 'notifications'], { origin: A })
      await page.emulateMedia({ media: 'print' })
      await page.setViewportSize({ width: 500, height: 400 })
      await page.goto(`${A}/frame-host.html`)
      await page.frameLocator('#frame').locator('body').waitFor({ state: 'attached' })
      const geolocation = await page.evaluate("navigator.permissions.query({ name: 'geolocation' }).then((s) => s.state)")
      // A route left in place would answer job 2's requests.
      await page.route('**/plain.html', async (route) => { await route.fulfill({ contentType: 'text/html', body: '<title>hijacked</title>' }) })
      return { ...state, geolocation, dark: await page.evaluate("matchMedia('(prefers-color-scheme: dark)').matches") }
    }, { ...BASE, colorScheme: 'dark', reducedMotion: true, extraHTTPHeaders: { 'x-secret': 'job-1', 'accept-language': 'de-DE' } })

    // Job 1 really set everything (else the checks below prove nothing).
    expect(set.cookie).toContain('js=1')
    expect(set.cookie).toContain('server=1')
    expect(set.databases).toContain('job1')
    expect(set.caches).toContain('job1')
    expect(set.token).toBe(set.again)
    expect(set.geolocation).toBe('granted')
    expect(set.dark).toBe(true)
    const hitsAfterJob1 = { cached: cachedHits, memory: memoryHits }
    expect(hitsAfterJob1).toEqual({ cached: 1, memory: 1 })
    const job1Requests = requestsSeenByJob1.length
    siteRequests.length = 0
    const between = pool.stats()

    const seen = await run(async (page) => {
      const response = await page.goto(`${A}/plain.html`)
      const state = await page.evaluate(`(async () => {
        const token = await (await fetch('/cached')).text()
        await new Promise((resolve) => { const s = document.createElement('script'); s.src = '/memory.js'; s.onload = resolve; document.head.append(s) })
        return {
          title: document.title,
          cookie: document.cookie,
          local: localStorage.getItem('local'),
          session: sessionStorage.getItem('session'),
          name: window.name,
          historyLength: history.length,
          databases: (await indexedDB.databases()).map((d) => d.name),
          caches: await caches.keys(),
          token,
          memory: window.__memory,
          geolocation: (await navigator.permissions.query({ name: 'geolocation' })).state,
          notifications: (await navigator.permissions.query({ name: 'notifications' })).state,
          print: matchMedia('print').matches,
          dark: matchMedia('(prefers-color-scheme: dark)').matches,
          reducedMotion: matchMedia('(prefers-reduced-motion: reduce)').matches,
          width: innerWidth,
          height: innerHeight,
          languages: navigator.languages
        }
      })()`) as { historyLength: number, languages: string[] } & Record<string, unknown>
      await page.goto(`${A}/frame-host.html`)
      const frame = page.frameLocator('#frame')
      await frame.locator('body').waitFor({ state: 'attached' })
      const thirdPartyPrevious = await page.frames()[1]?.evaluate('window.__previous')
      return { ...state, status: response?.status(), thirdPartyPrevious }
    })

    expect(seen).toEqual({
      status: 200,
      title: 'Plain fixture',
      cookie: '',
      local: null,
      session: null,
      name: '',
      historyLength: expect.any(Number),
      databases: [],
      caches: [],
      token: 'token-2',
      memory: 2,
      geolocation: 'prompt',
      notifications: 'prompt',
      print: false,
      dark: false,
      reducedMotion: false,
      width: 800,
      height: 600,
      languages: expect.any(Array),
      thirdPartyPrevious: null
    })
    expect(seen.historyLength).toBeLessThanOrEqual(2)
    expect(seen.languages).not.toContain('de-DE')
    expect({ cached: cachedHits, memory: memoryHits }).toEqual({ cached: 2, memory: 2 })
    // Nothing of job 1's forwarded headers, and its request listener saw nothing of job 2.
    expect(siteRequests.length).toBeGreaterThan(0)
    for (const req of siteRequests) {
      expect(req.headers['x-secret']).toBeUndefined()
      expect(req.headers['accept-language']).not.toBe('de-DE')
    }
    expect(requestsSeenByJob1.length).toBe(job1Requests)
    // The same context and page served both jobs: the reset did the work.
    const after = pool.stats()
    expect(after.contexts).toBe(between.contexts)
    expect(after.pages).toBe(between.pages)
  })

  it('reuses the context and page between jobs with the same profile', async () => {
    await run(async (page) => { await page.goto(`${site.origin}/plain.html`) })
    const before = pool.stats()
    for (let i = 0; i < 3; i++) await run(async (page) => { await page.goto(`${site.origin}/plain.html?i=${i}`) })
    const after = pool.stats()
    expect(after.contexts).toBe(before.contexts)
    expect(after.pages).toBe(before.pages)
    expect(after.jobs - before.jobs).toBe(3)
  })

  it('keeps a reset context per profile, so alternating devices do not start over each time', async () => {
    const tablet: Emulation = { ...BASE, viewport: { width: 768, height: 1024 }, deviceScaleFactor: 2, userAgent: 'Tablet-Agent/1.0' }
    const before = pool.stats()
    const agents: string[] = []
    for (let i = 0; i < 6; i++) {
      agents.push(await run(async (page) => {
        await page.goto(`${site.origin}/plain.html?alternate=${i}`)
        return await page.evaluate('navigator.userAgent') as string
      }, i % 2 === 0 ? tablet : BASE))
    }
    expect(agents).toEqual(['Tablet-Agent/1.0', BASE.userAgent, 'Tablet-Agent/1.0', BASE.userAgent, 'Tablet-Agent/1.0', BASE.userAgent])
    // Six jobs, two profiles: at most one new context per profile.
    expect(pool.stats().contexts - before.contexts).toBeLessThanOrEqual(2)
  })

  it('a job that changes its context in ways a reset cannot undo gets a new context next time', async () => {
    await run(async (page) => {
      await page.context().addInitScript('window.__tainted = true')
      await page.context().setExtraHTTPHeaders({ 'x-context': 'job-1' })
      await page.goto(`${site.origin}/plain.html`)
      expect(await page.evaluate('window.__tainted')).toBe(true)
    })
    const before = pool.stats()
    siteRequests.length = 0
    const tainted = await run(async (page) => {
      await page.goto(`${site.origin}/plain.html`)
      return await page.evaluate('window.__tainted === true')
    })
    expect(tainted).toBe(false)
    expect(siteRequests[0]?.headers['x-context']).toBeUndefined()
    expect(pool.stats().contexts).toBe(before.contexts + 1)
  })

  it('a job with another emulation profile gets its own context, and the next job none of its emulation', async () => {
    const mobile: Emulation = {
      ...BASE,
      viewport: { width: 390, height: 700 },
      deviceScaleFactor: 3,
      isMobile: true,
      hasTouch: true,
      userAgent: 'Mobile-Agent/1.0',
      locale: 'ja-JP'
    }
    const probe = "({ dpr: devicePixelRatio, touch: navigator.maxTouchPoints, ua: navigator.userAgent, width: innerWidth, lang: navigator.language, screen: screen.width })"
    const first = await run(async (page) => {
      await page.goto(`${site.origin}/plain.html`)
      return await page.evaluate(probe)
    }, mobile)
    // A mobile viewport without <meta name=viewport> lays the page out 980 px wide, as phones do.
    expect(first).toEqual({ dpr: 3, touch: expect.any(Number), ua: 'Mobile-Agent/1.0', width: 980, lang: 'ja-JP', screen: 390 })
    expect((first as { touch: number }).touch).toBeGreaterThan(0)
    const second = await run(async (page) => {
      await page.goto(`${site.origin}/plain.html`)
      return await page.evaluate(probe)
    })
    expect(second).toEqual({ dpr: 1, touch: 0, ua: 'pagecast-isolation-test', width: 800, lang: expect.any(String), screen: 800 })
    expect((second as { lang: string }).lang).not.toBe('ja-JP')
  })
})
