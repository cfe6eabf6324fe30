// Isolation between jobs that share a slot (docs/api.md §3.6: no shared cookies or storage). The pool reuses one context
// and page per slot and resets them between jobs; these tests set every kind of state in job 1 on a loopback origin
// and check that job 2, on the same origin and the same slot (concurrency 1), sees none of it. They also check
// that job 2 really reused the context (stats().contexts), so what is proven is the reset, not a new context.
// What a reset cannot clear (Chromium's HTTP auth cache, client-hint opt-ins) retires the context instead: a job that
// used credentials or got an opt-in leaves nothing to the next one, with one slot or several. A request still in
// flight when its job ends (keepalive fetch, beacon) reaches nothing during the next job. And each context's egress
// proxy refuses any local client without its credential (407) while the browser goes through.
import { readFile } from 'node:fs/promises'
import http from 'node:http'
import path from 'node:path'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createAddressGuard } from '../../src/net/guard.ts'
import { createBrowserPool } from '../../src/browser/pool/index.ts'
import type { BrowserPool, JobInfo } from '../../src/browser/pool/index.ts'
import type { Emulation } from '../../src/browser/emulation.ts'
import { startFixtureServer } from '../helpers/fixture-server.ts'
import type { FixtureServer } from '../helpers/fixture-server.ts'
import { watchListening } from '../helpers/processes.ts'

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/browser')

let site: FixtureServer
let thirdParty: FixtureServer
let pool: BrowserPool
let cachedHits = 0
let memoryHits = 0
const siteRequests: http.IncomingMessage[] = []
/** The Authorization header of each request for /secret ('' when none). */
const secretAuthorizations: string[] = []
/** The headers of each request for /echo. */
const echoed: http.IncomingHttpHeaders[] = []
/** Requests for /late-cookie (the query says which), and what holds their answers back. */
const lateArrivals: string[] = []
let releaseLate = (): void => {}
let lateReleased = Promise.resolve()

const ALICE = `Basic ${Buffer.from('alice:pw').toString('base64')}`

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

/** Runs a job, then waits for its lease's reset: the next job then gets the same page (the most recently used one). */
async function runThenReset<T> (job: (page: Page, info: JobInfo) => Promise<T>, emulation: Emulation = BASE): Promise<T> {
  const value = await run(job, emulation)
  // At rest: no job holds a slot (a slot is held until the job's lease is reset and parked).
  await vi.waitFor(() => { expect(pool.stats().active).toBe(0) }, { timeout: 15_000, interval: 20 })
  return value
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
  // Alice's private page behind Basic authentication; anyone else gets the challenge.
  site.route('/secret', (req, res) => {
    const authorization = req.headers.authorization ?? ''
    secretAuthorizations.push(authorization)
    const body = authorization === ALICE ? '<title>Alice private</title><p>alice-only</p>' : '<title>Locked</title>'
    res.writeHead(authorization === ALICE ? 200 : 401, {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      ...(authorization === ALICE ? {} : { 'www-authenticate': 'Basic realm="private"' })
    })
    res.end(body)
  })
  // A page that opts its origin into high-entropy client hints (secure context: loopback counts).
  site.route('/hints', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'accept-ch': 'Sec-CH-UA-Platform-Version, Sec-CH-UA-Model' })
    res.end('<title>hints</title>')
  })
  site.route('/echo', (req, res) => { echoed.push({ ...req.headers }); html(res, '<title>echo</title>') })
  // Answers only when the test lets it, with a cookie: a request still in flight when its job ends.
  site.route('/late-cookie', async (req, res) => {
    const which = new URL(req.url ?? '/', 'http://x').searchParams.get('via') ?? ''
    lateArrivals.push(which)
    await lateReleased
    res.writeHead(200, { 'content-type': 'text/plain', 'set-cookie': `late-${which}=1; Path=/; Max-Age=3600` })
    res.end('late')
  })
  site.route('/keepalive.html', (_req, res) => {
    html(res, `<title>keepalive</title><script>
      fetch('/late-cookie?via=keepalive', { method: 'POST', body: 'x', keepalive: true })
      addEventListener('pagehide', () => { navigator.sendBeacon('/late-cookie?via=beacon', 'x') })
    </script>`)
  })
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
    let job1Page: Page | undefined

    const set = await runThenReset(async (page) => {
      job1Page = page
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
      expect(page).toBe(job1Page)
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
    let closed = false
    await run(async (page) => {
      page.context().once('close', () => { closed = true })
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
    // The tainted context is closed, not reset; the next job had a new one.
    await vi.waitFor(() => { expect(closed).toBe(true) })
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

/**
 * What a job that asks for /secret without credentials gets: the challenge's page, or the navigation failing on it
 * (ERR_INVALID_AUTH_CREDENTIALS, what Chromium does in a context that never had credentials); and the
 * Authorization header the server saw.
 */
async function secretWithoutCredentials (on: BrowserPool = pool): Promise<{ title: string, authorization: string | undefined }> {
  const title = await on.run(async (page) => {
    await page.goto(`${site.origin}/secret`)
    return await page.title()
  }, { signal: AbortSignal.timeout(20_000), emulation: BASE }).catch((err: unknown) => {
    if (/ERR_INVALID_AUTH_CREDENTIALS/.test(String((err as Error).cause))) return 'Locked'
    throw err
  })
  return { title, authorization: secretAuthorizations.at(-1) }
}

const LOCKED = { title: 'Locked', authorization: '' }

describe('credentials a job used never reach the next job (Chromium\'s HTTP auth cache cannot be cleared)', () => {
  it('a target URL with user:password: the next job on the same slot gets the challenge, not the private page', async () => {
    const opened = await run(async (page) => {
      const response = await page.goto(`http://alice:pw@${site.host}/secret`)
      return { status: response?.status(), title: await page.title() }
    })
    expect(opened).toEqual({ status: 200, title: 'Alice private' })
    expect(secretAuthorizations.at(-1)).toBe(ALICE)
    expect(await secretWithoutCredentials()).toEqual(LOCKED)
  })

  it('an XHR with a user and password: the next job gets the challenge', async () => {
    const status = await run(async (page) => {
      await page.goto(`${site.origin}/plain.html`)
      return await page.evaluate(`new Promise((resolve) => {
        const xhr = new XMLHttpRequest()
        xhr.open('GET', '/secret?xhr', true, 'alice', 'pw')
        xhr.onload = () => { resolve(xhr.status) }
        xhr.send()
      })`)
    })
    expect(status).toBe(200)
    expect(secretAuthorizations.at(-1)).toBe(ALICE)
    expect(await secretWithoutCredentials()).toEqual(LOCKED)
  })

  it('with several slots: no job after the one with credentials gets them, on any context', async () => {
    const guard = createAddressGuard({ allowPrivateHosts: [site.host] })
    const wide = await createBrowserPool({ concurrency: 3, queueLimit: 8 }, { guard })
    try {
      const warm = (): Promise<void> => wide.run(async (page) => {
        await page.goto(`${site.origin}/plain.html`)
        await page.waitForTimeout(300)
      }, { signal: AbortSignal.timeout(20_000), emulation: BASE })
      // Three contexts reset and idle, then the job with credentials on one of them.
      await Promise.all([warm(), warm(), warm()])
      const title = await wide.run(async (page) => {
        await page.goto(`http://alice:pw@${site.host}/secret`)
        return await page.title()
      }, { signal: AbortSignal.timeout(20_000), emulation: BASE })
      expect(title).toBe('Alice private')
      const after = await Promise.all([secretWithoutCredentials(wide), secretWithoutCredentials(wide), secretWithoutCredentials(wide)])
      for (const seen of after) expect(seen.title).toBe('Locked')
      expect(secretAuthorizations.slice(-3)).toEqual(['', '', ''])
    } finally {
      await wide.close()
    }
  })
})

describe('state a job\'s origin opted into, and requests that outlive their job', () => {
  it('client hints an origin asked for (Accept-CH) are not sent in the next job', async () => {
    const hinted = await run(async (page) => {
      await page.goto(`${site.origin}/hints`)
      await page.goto(`${site.origin}/echo`)
      return echoed.at(-1)?.['sec-ch-ua-platform-version']
    })
    // The opt-in held within the job (else the check below proves nothing).
    expect(hinted).toBeDefined()
    await run(async (page) => { await page.goto(`${site.origin}/echo`) })
    expect(echoed.at(-1)?.['sec-ch-ua-platform-version']).toBeUndefined()
    expect(echoed.at(-1)?.['sec-ch-ua-model']).toBeUndefined()
  })

  it('a keepalive fetch or a beacon of one job cannot set a cookie during the next', async () => {
    lateArrivals.length = 0
    lateReleased = new Promise((resolve) => { releaseLate = resolve })
    const keepalivePage = await runThenReset(async (page) => {
      await page.goto(`${site.origin}/keepalive.html`)
      // The keepalive request is at the server, waiting for its answer, when the job ends.
      for (let i = 0; i < 100 && !lateArrivals.includes('keepalive'); i++) await page.waitForTimeout(50)
      expect(lateArrivals).toContain('keepalive')
      return page
    })
    const before = pool.stats()
    const cookies = await run(async (page) => {
      expect(page).toBe(keepalivePage)
      await page.goto(`${site.origin}/plain.html`)
      releaseLate()
      // Time for a late answer to arrive and set its cookie, were it still connected.
      await page.waitForTimeout(1500)
      await page.goto(`${site.origin}/echo`)
      return { document: await page.evaluate('document.cookie'), sent: echoed.at(-1)?.cookie }
    })
    expect(cookies).toEqual({ document: '', sent: undefined })
    // The reset did it: the context was not replaced.
    expect(pool.stats().contexts).toBe(before.contexts)
  })
})

/** A request sent straight to a proxy on 127.0.0.1:`port`, as any local process could: its status, or the error. */
function askProxy (port: number, options: { method: 'GET' | 'CONNECT', path: string }): Promise<number | string> {
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, ...options, timeout: 5000 })
    req.on('response', (res) => { res.resume(); resolve(res.statusCode ?? 0) })
    req.on('connect', (res, socket) => { socket.destroy(); resolve(res.statusCode ?? 0) })
    req.on('timeout', () => { req.destroy(new Error('timeout')) })
    req.on('error', (err) => { resolve(err.message) })
    req.end()
  })
}

describe('the pool\'s browser and egress proxies are its own', () => {
  it('refuses a local client without the context\'s credential (407), while the browser uses its proxy as before', async () => {
    const watch = watchListening('127.0.0.1')
    const guard = createAddressGuard({ allowPrivateHosts: [site.host] })
    const logged: string[] = []
    const log = { debug: (o: object, m: string) => { logged.push(JSON.stringify([o, m])) }, info: (o: object, m: string) => { logged.push(JSON.stringify([o, m])) }, warn: (o: object, m: string) => { logged.push(JSON.stringify([o, m])) }, error: (o: object, m: string) => { logged.push(JSON.stringify([o, m])) } }
    const own = await createBrowserPool({ concurrency: 1, queueLimit: 8 }, { guard, log })
    try {
      siteRequests.length = 0
      const job = (): Promise<string> => own.run(async (page) => {
        await page.goto(`${site.origin}/plain.html`)
        return await page.title()
      }, { signal: AbortSignal.timeout(20_000), emulation: BASE })
      // While a job runs on it: this pool's proxies (the browser-level one and the context's), listening in this process.
      const answers = await own.run(async (page) => {
        await page.goto(`${site.origin}/plain.html`)
        const proxies = watch.ports()
        const asked: Array<number | string> = []
        for (const port of proxies) {
          asked.push(await askProxy(port, { method: 'GET', path: `${site.origin}/plain.html` }))
          asked.push(await askProxy(port, { method: 'CONNECT', path: site.host }))
        }
        return asked
      }, { signal: AbortSignal.timeout(20_000), emulation: BASE })
      expect(answers.length).toBeGreaterThanOrEqual(4)
      expect(new Set(answers)).toEqual(new Set([407]))
      // The browser still goes through: its own requests arrived, and the next job's on the reused context.
      expect(await job()).toBe('Plain fixture')
      expect(siteRequests.length).toBe(2)
      // The credential went to the proxy only: never to the target, never to a log.
      for (const req of siteRequests) expect(req.headers['proxy-authorization']).toBeUndefined()
      expect(logged.join('\n')).not.toMatch(/pagecast-[0-9a-f]{12}|proxy-authorization|Basic /i)
    } finally {
      watch.stop()
      await own.close()
    }
  })
})
