// Isolation defined by what it guarantees (issue 25), one test per guarantee that isolation.test.ts does not already
// hold: no script of a job runs while a later job runs (timers, a worker, a third-party frame); what a job's page does
// as it is left (pagehide, unload) leaves nothing for the next; nothing of a job's document appears in a later job's
// output, not even when the later job's navigation does not commit; the history does not lead back to it; a service
// worker is neither kept nor in control. Every test runs job B on the very page object job A used (the pool reuses it
// after the reset), so what is proven is the reset, not a new page; each says which part of the reset it fails without.
import type http from 'node:http'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createAddressGuard } from '../../src/net/guard.ts'
import { createBrowserPool } from '../../src/browser/pool/index.ts'
import type { BrowserPool, JobInfo } from '../../src/browser/pool/index.ts'
import type { Emulation } from '../../src/browser/emulation.ts'
import { startFixtureServer } from '../helpers/fixture-server.ts'
import type { FixtureServer } from '../helpers/fixture-server.ts'

let site: FixtureServer
let thirdParty: FixtureServer
let pool: BrowserPool
/** Pings the pages send (`/ping?from=...`), with when they arrived. */
const pings: Array<{ from: string, at: number }> = []

const BASE: Emulation = {
  viewport: { width: 800, height: 600 },
  deviceScaleFactor: 1,
  isMobile: false,
  hasTouch: false,
  userAgent: 'pagecast-isolation-guarantees',
  javaScriptEnabled: true,
  colorScheme: 'no-preference',
  reducedMotion: false,
  extraHTTPHeaders: {}
}

function html (res: http.ServerResponse, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', ...headers })
  res.end(body)
}

function run<T> (job: (page: Page, info: JobInfo) => Promise<T>): Promise<T> {
  return pool.run(job, { signal: AbortSignal.timeout(20_000), emulation: BASE })
}

/** Runs job A, then waits for its lease's reset: job B then gets the same page (the most recently used one). */
async function runA<T> (job: (page: Page, info: JobInfo) => Promise<T>): Promise<T> {
  const value = await run(job)
  // At rest: no job holds a slot (a slot is held until the job's lease is reset and parked).
  await vi.waitFor(() => { expect(pool.stats().active).toBe(0) }, { timeout: 15_000, interval: 20 })
  return value
}

/** Job A: loads `path` on the site and lets it run `settleMs`; returns its page. */
async function jobA (path: string, settleMs = 300): Promise<Page> {
  return await runA(async (page) => {
    await page.goto(`${site.origin}${path}`)
    await page.waitForTimeout(settleMs)
    return page
  })
}

beforeAll(async () => {
  site = await startFixtureServer()
  thirdParty = await startFixtureServer()
  for (const server of [site, thirdParty]) {
    server.route('/ping', (req, res) => {
      pings.push({ from: new URL(req.url ?? '/', 'http://x').searchParams.get('from') ?? '', at: Date.now() })
      res.writeHead(204, { 'access-control-allow-origin': '*' })
      res.end()
    })
  }
  const ping = (from: string): string => `fetch('/ping?from=${from}', { cache: 'no-store' }).catch(() => {})`
  site.route('/plain', (_req, res) => { html(res, '<title>plain</title><p>plain page</p>') })
  site.route('/timers', (_req, res) => {
    html(res, `<title>timers</title><script>
      setInterval(() => { ${ping('interval')} }, 50)
      const tick = () => { ${ping('timeout')}; setTimeout(tick, 50) }; tick()
      const frame = () => { ${ping('raf')}; requestAnimationFrame(frame) }; requestAnimationFrame(frame)
      new Worker('/worker.js')
    </script><iframe src="${thirdParty.origin}/frame-timer"></iframe>`)
  })
  site.route('/worker.js', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/javascript', 'cache-control': 'no-store' })
    res.end(`setInterval(() => { ${ping('worker')} }, 50)`)
  })
  thirdParty.route('/frame-timer', (_req, res) => { html(res, `<title>frame</title><script>setInterval(() => { ${ping('frame')} }, 50)</script>`) })
  // Writes state as the page is left: after the reset's clearing, it would be there for the next job.
  site.route('/leaving', (_req, res) => {
    html(res, `<title>leaving</title><script>
      const leave = (how) => {
        document.cookie = 'left-' + how + '=1; Max-Age=3600; Path=/'
        localStorage.setItem('left-' + how, '1')
        sessionStorage.setItem('left-' + how, '1')
      }
      addEventListener('pagehide', () => leave('pagehide'))
      addEventListener('unload', () => leave('unload'))
      addEventListener('visibilitychange', () => leave('visibility'))
      addEventListener('beforeunload', () => leave('beforeunload'))
    </script>`)
  })
  site.route('/secret', (_req, res) => {
    html(res, '<title>Secret of job A</title><input id="field" value="typed-by-a"><p>secret-of-job-a</p>')
  })
  // Answers without a document: a navigation to it does not commit, and the page keeps what it showed before.
  site.route('/no-content', (_req, res) => { res.writeHead(204); res.end() })
  site.route('/sw-page', (_req, res) => {
    html(res, `<title>sw</title><script>
      window.registered = navigator.serviceWorker.register('/sw.js').then(() => 'registered', (err) => 'refused: ' + err.name)
    </script>`)
  })
  site.route('/sw.js', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/javascript' })
    res.end(`setInterval(() => { fetch('/ping?from=sw').catch(() => {}) }, 50)
    self.addEventListener('activate', (event) => { event.waitUntil(self.clients.claim()) })
    self.addEventListener('fetch', (event) => {
      if (new URL(event.request.url).pathname === '/plain') event.respondWith(new Response('<title>from the worker</title>', { headers: { 'content-type': 'text/html' } }))
    })`)
  })
  const guard = createAddressGuard({ allowPrivateHosts: [site.host, thirdParty.host] })
  pool = await createBrowserPool({ concurrency: 1, queueLimit: 8 }, { guard })
})

afterAll(async () => {
  await pool?.close()
  await Promise.all([site?.close(), thirdParty?.close()])
})

describe('no script of a job runs while a later job runs', () => {
  it('timers, animation frames, a dedicated worker and a third-party frame of job A stop before job B starts', async () => {
    pings.length = 0
    const pageA = await runA(async (page) => {
      await page.goto(`${site.origin}/timers`)
      // Job A's scripts really ran, each kind of them (else the check below proves nothing).
      await vi.waitFor(() => {
        expect(new Set(pings.map((p) => p.from))).toEqual(new Set(['interval', 'timeout', 'raf', 'worker', 'frame']))
      }, { timeout: 10_000, interval: 50 })
      return page
    })
    const during = await run(async (page) => {
      expect(page).toBe(pageA)
      // Job B on the same page: a second of its own, on another page of the same origin. Counted from 300 ms in, so
      // a ping job A sent just before it ended, still on its way on a loaded machine, is not taken for one of B's time;
      // scripts that still ran would ping all through the second.
      await page.goto(`${site.origin}/plain`)
      await page.waitForTimeout(300)
      const from = pings.length
      await page.waitForTimeout(1000)
      return pings.slice(from).map((p) => p.from)
    })
    expect(during).toEqual([])
  })
})

describe('what a page does as it is left stays with its job', () => {
  it('cookies and storage written in pagehide, unload, visibilitychange or beforeunload are gone in the next job', async () => {
    const pageA = await jobA('/leaving')
    const seen = await run(async (page) => {
      expect(page).toBe(pageA)
      await page.goto(`${site.origin}/plain`)
      return await page.evaluate(() => ({
        cookie: document.cookie,
        local: Object.keys(localStorage),
        session: Object.keys(sessionStorage)
      }))
    })
    expect(seen).toEqual({ cookie: '', local: [], session: [] })
  })
})

describe('nothing of a job appears in a later job\'s output', () => {
  it('a job that reads the page before navigating sees a blank document, not the last job\'s', async () => {
    const pageA = await runA(async (page) => {
      await page.goto(`${site.origin}/secret`)
      await page.fill('#field', 'typed-by-a-more')
      await page.focus('#field')
      return page
    })
    const seen = await run(async (page) => {
      expect(page).toBe(pageA)
      return {
        url: page.url(),
        title: await page.title(),
        content: await page.content(),
        frames: page.frames().length,
        focused: await page.evaluate(() => document.activeElement?.id ?? null)
      }
    })
    expect(seen.url).toBe('about:blank')
    expect(seen.title).toBe('')
    expect(seen.content).not.toContain('secret-of-job-a')
    expect(seen.frames).toBe(1)
    expect(seen.focused).not.toBe('field')
  })

  it('a later job whose navigation does not commit (204) captures nothing of the last job\'s page', async () => {
    const pageA = await jobA('/secret')
    const seen = await run(async (page) => {
      expect(page).toBe(pageA)
      await page.goto(`${site.origin}/no-content`).catch(() => null)
      return { content: await page.content(), shot: (await page.screenshot()).length }
    })
    expect(seen.content).not.toContain('secret-of-job-a')
    expect(seen.shot).toBeGreaterThan(0)
  })

  it('the history leads back to nothing of the last job', async () => {
    const pageA = await runA(async (page) => {
      await page.goto(`${site.origin}/secret?step=1`)
      await page.goto(`${site.origin}/secret?step=2`)
      await page.evaluate(() => { history.pushState({}, '', '/secret?step=3') })
      return page
    })
    const seen = await run(async (page) => {
      expect(page).toBe(pageA)
      await page.goto(`${site.origin}/plain`)
      const length = await page.evaluate(() => history.length)
      const urls: string[] = []
      for (let i = 0; i < 3; i++) {
        const back = await page.goBack({ waitUntil: 'commit', timeout: 3000 }).catch(() => null)
        if (back === null) break
        urls.push(page.url())
      }
      return { length, urls, content: await page.content() }
    })
    expect(seen.length).toBeLessThanOrEqual(2)
    for (const url of seen.urls) expect(url).not.toContain('/secret')
    expect(seen.content).not.toContain('secret-of-job-a')
  })
})

describe('a job\'s service worker is never there for the next', () => {
  it('a worker job A registers is neither listed, in control, answering nor running in job B', async () => {
    pings.length = 0
    const registeredA = await runA(async (page) => {
      await page.goto(`${site.origin}/sw-page`)
      const outcome = await page.evaluate('window.registered') as string
      // Time for a worker to install, activate and start its timer, were it allowed to.
      await page.waitForTimeout(500)
      return { page, outcome }
    })
    // The page's script asked for it (else the checks below prove nothing); the context blocks service workers.
    expect(registeredA.outcome).toMatch(/^(registered|refused)/)
    const seen = await run(async (page) => {
      expect(page).toBe(registeredA.page)
      const from = pings.length
      await page.goto(`${site.origin}/plain`)
      await page.waitForTimeout(800)
      return {
        title: await page.title(),
        registrations: await page.evaluate(async () => (await navigator.serviceWorker.getRegistrations()).length),
        controlled: await page.evaluate(() => navigator.serviceWorker.controller !== null),
        pings: pings.slice(from).map((p) => p.from)
      }
    })
    expect(seen).toEqual({ title: 'plain', registrations: 0, controlled: false, pings: [] })
  })
})
