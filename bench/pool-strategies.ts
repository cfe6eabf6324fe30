// Measures ways to give each browser job a clean page, on this machine: Chromium behind the egress proxy, loopback
// fixture pages on rotating origins (names that the proxy's resolver maps to 127.0.0.1, so every job is a different
// site, as in real traffic), DPR 2 1280x800 PNG captures through CDP Page.captureScreenshot, concurrency 1 and 4.
// Never a test: it prints numbers and asserts nothing.
//
//   node bench/pool-strategies.ts [jobs-per-run]
//
// Strategies:
//   fresh        a new context + page per job, closed at the end (the baseline)
//   prewarm      a spare context + page per slot, made while the slot's current job runs; the job's own is closed
//                in the background
//   reuse        one context + page per slot, reset between jobs (cookies, permissions, storage of every origin
//                touched, session storage, HTTP cache, history, about:blank)
//   reuse-same   as reuse, but every job on one origin (the best case for reuse: no cross-site process swap)
//   pool         the real createBrowserPool (src/browser/pool/): reuse with a full reset, one device profile
//   pool-mixed   the same, every fourth job on another device profile (that slot gets a new context)
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { chromium } from 'playwright-core'
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core'
import { createAddressGuard } from '../src/net/guard.ts'
import { createEgressProxy } from '../src/browser/egress-proxy.ts'
import type { EgressProxy } from '../src/browser/egress-proxy.ts'
import { findChromium, chromiumArgs } from '../src/browser/chromium.ts'
import { createBrowserPool } from '../src/browser/pool/index.ts'
import type { Emulation } from '../src/browser/emulation.ts'
import { desktopUserAgent } from '../src/schemas/devices.ts'
import { line, runJobs } from './lib.ts'

const JOBS = Number(process.argv[2] ?? 40)
const SITES = 16

// ---------------------------------------------------------------- fixture

const PAGE = (n: number): string => `<!doctype html><html><head><title>Fixture ${n}</title>
<link rel="stylesheet" href="/style.css"><link rel="icon" href="/favicon.svg">
</head><body><header><h1>Article ${n}</h1><nav>${Array.from({ length: 12 }, (_, i) => `<a href="/p${i}">Link ${i}</a>`).join(' ')}</nav></header>
<main>${Array.from({ length: 30 }, (_, i) => `<p>Paragraph ${i}: Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua.</p>${i % 6 === 0 ? `<img src="/img${i}.svg" width="320" height="180">` : ''}`).join('\n')}</main>
<script>document.cookie = 'seen=' + Date.now(); localStorage.setItem('k', String(Math.random()));</script>
</body></html>`
const CSS = 'body{font-family:sans-serif;margin:0 auto;max-width:960px;background:#fafafa}h1{color:#234}p{line-height:1.5}header{background:linear-gradient(#eef,#ccd);padding:16px}'
const SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="320" height="180"><rect width="320" height="180" fill="#8ac"/><circle cx="160" cy="90" r="60" fill="#fc6"/></svg>'

async function startFixture (): Promise<{ port: number, close: () => void }> {
  let n = 0
  const server = http.createServer((req, res) => {
    const url = req.url ?? '/'
    if (url.endsWith('.css')) { res.writeHead(200, { 'content-type': 'text/css', 'cache-control': 'max-age=600' }); res.end(CSS); return }
    if (url.endsWith('.svg')) { res.writeHead(200, { 'content-type': 'image/svg+xml', 'cache-control': 'max-age=600' }); res.end(SVG); return }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    res.end(PAGE(n++))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { port: (server.address() as AddressInfo).port, close: () => { server.closeAllConnections(); server.close() } }
}

// ---------------------------------------------------------------- strategies

interface Slot {
  /** Runs one job on this slot: navigate, capture. */
  run (url: string): Promise<number>
  close (): Promise<void>
}

type Strategy = (browser: Browser, proxy: () => Promise<EgressProxy>) => Promise<Slot>

const CONTEXT_OPTIONS = {
  viewport: { width: 1280, height: 800 },
  deviceScaleFactor: 2,
  acceptDownloads: false,
  serviceWorkers: 'block' as const
}

/** Two animation frames: CDP captureScreenshot fails ("Unable to capture screenshot") until a frame exists. */
const NEXT_FRAME = 'new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))'

async function capture (page: Page, session: CDPSession, url: string): Promise<number> {
  await page.goto(url, { waitUntil: 'load' })
  await page.evaluate(NEXT_FRAME)
  const shot = await session.send('Page.captureScreenshot', { format: 'png' }) as { data: string }
  return shot.data.length
}

const fresh: Strategy = async (browser, makeProxy) => {
  const proxy = await makeProxy()
  return {
    async run (url) {
      const context = await browser.newContext({ ...CONTEXT_OPTIONS, proxy: { server: proxy.server, bypass: '<-loopback>' } })
      try {
        const page = await context.newPage()
        const session = await context.newCDPSession(page)
        return await capture(page, session, url)
      } finally {
        await context.close()
      }
    },
    close: () => proxy.close()
  }
}

const prewarm: Strategy = async (browser, makeProxy) => {
  const proxy = await makeProxy()
  interface Warm { context: BrowserContext, page: Page, session: CDPSession }
  const make = async (): Promise<Warm> => {
    const context = await browser.newContext({ ...CONTEXT_OPTIONS, proxy: { server: proxy.server, bypass: '<-loopback>' } })
    const page = await context.newPage()
    return { context, page, session: await context.newCDPSession(page) }
  }
  let spare: Promise<Warm> = make()
  return {
    async run (url) {
      const warm = await spare
      spare = make()
      try {
        return await capture(warm.page, warm.session, url)
      } finally {
        warm.context.close().catch(() => {})
      }
    },
    async close () {
      await (await spare).context.close()
      await proxy.close()
    }
  }
}

function reuse (sameSite: boolean): Strategy {
  return async (browser, makeProxy) => {
    const proxy = await makeProxy()
    const context = await browser.newContext({ ...CONTEXT_OPTIONS, proxy: { server: proxy.server, bypass: '<-loopback>' } })
    const page = await context.newPage()
    const session = await context.newCDPSession(page)
    const origins = new Set<string>()
    page.on('request', (request) => {
      try { origins.add(new URL(request.url()).origin) } catch {}
    })
    async function reset (): Promise<void> {
      await page.goto('about:blank')
      await Promise.all([
        context.clearCookies(),
        context.clearPermissions(),
        session.send('Network.clearBrowserCache'),
        session.send('Page.resetNavigationHistory'),
        ...[...origins].filter((o) => o !== 'null').map((origin) => session.send('Storage.clearDataForOrigin', { origin, storageTypes: 'all' }))
      ])
      origins.clear()
    }
    return {
      async run (url) {
        try {
          return await capture(page, session, sameSite ? url.replace(/site\d+/, 'site0') : url)
        } finally {
          await reset()
        }
      },
      async close () {
        await context.close()
        await proxy.close()
      }
    }
  }
}

// ---------------------------------------------------------------- runner

interface Result { jobsPerSecond: number, p50: number, p90: number }

function percentile (values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0
}

async function drive (concurrency: number, jobs: number, runOne: (i: number) => Promise<unknown>): Promise<Result> {
  // Warm-up: one job per slot, not counted.
  await Promise.all(Array.from({ length: concurrency }, (_, i) => runOne(i)))
  const { ms, latencies } = await runJobs(jobs, concurrency, runOne)
  const seconds = ms / 1000
  return { jobsPerSecond: jobs / seconds, p50: percentile(latencies, 0.5), p90: percentile(latencies, 0.9) }
}

const executablePath = findChromium({})
const fixture = await startFixture()
const hosts = Array.from({ length: SITES }, (_, i) => `site${i}.test`)
const guard = createAddressGuard({
  allowPrivateHosts: hosts.map((h) => `${h}:${fixture.port}`),
  resolve: async () => [{ address: '127.0.0.1', family: 4 }]
})
const urlFor = (i: number): string => `http://${hosts[i % SITES]}:${fixture.port}/article/${i}`

const NO_SITE_ISOLATION = ['--disable-site-isolation-trials', '--process-per-site']
const strategies: Array<[string, Strategy, string[]]> = [
  ['fresh', fresh, []],
  ['prewarm', prewarm, []],
  ['reuse', reuse(false), []],
  ['reuse-same', reuse(true), []],
  ['reuse-1proc', reuse(false), NO_SITE_ISOLATION]
]

line(`pool strategies: ${JOBS} jobs per run, ${SITES} rotating sites, 1280x800 DPR 2 PNG via CDP`)
line('strategy      conc   jobs/s    p50 ms    p90 ms')
const report = (name: string, concurrency: number, r: Result): void => {
  line(`${name.padEnd(12)} ${String(concurrency).padStart(5)} ${r.jobsPerSecond.toFixed(2).padStart(8)} ${r.p50.toFixed(0).padStart(9)} ${r.p90.toFixed(0).padStart(9)}`)
}

for (const concurrency of [1, 4]) {
  for (const [name, strategy, extra] of strategies) {
    const browser = await chromium.launch({ executablePath, args: chromiumArgs({ extra }) })
    const proxies: EgressProxy[] = []
    const makeProxy = async (): Promise<EgressProxy> => {
      const proxy = await createEgressProxy({ guard })
      proxies.push(proxy)
      return proxy
    }
    const slots = await Promise.all(Array.from({ length: concurrency }, () => strategy(browser, makeProxy)))
    const free = [...slots]
    const result = await drive(concurrency, JOBS, async (i) => {
      const slot = free.pop()
      if (slot === undefined) throw new Error('no free slot')
      try { return await slot.run(urlFor(i)) } finally { free.push(slot) }
    })
    report(name, concurrency, result)
    await Promise.all(slots.map((s) => s.close()))
    await browser.close()
  }

  const pool = await createBrowserPool({ chromiumPath: executablePath, concurrency, queueLimit: 64 }, { guard })
  const emulation: Emulation = {
    viewport: { width: 1280, height: 800 },
    deviceScaleFactor: 2,
    isMobile: false,
    hasTouch: false,
    userAgent: desktopUserAgent(pool.chromiumVersion()),
    javaScriptEnabled: true,
    colorScheme: 'no-preference',
    reducedMotion: false,
    extraHTTPHeaders: {}
  }
  const mobile: Emulation = { ...emulation, viewport: { width: 390, height: 844 }, deviceScaleFactor: 3, isMobile: true, hasTouch: true, userAgent: 'Mozilla/5.0 (iPhone) Mobile' }
  const pooled = (pick: (i: number) => Emulation) => (i: number) => pool.run(async (page) => {
    const session = await page.context().newCDPSession(page)
    try {
      await page.goto(urlFor(i), { waitUntil: 'load' })
      await page.evaluate(NEXT_FRAME)
      const shot = await session.send('Page.captureScreenshot', { format: 'png' }) as { data: string }
      return shot.data.length
    } finally {
      await session.detach().catch(() => {})
    }
  }, { signal: AbortSignal.timeout(60_000), emulation: pick(i) })
  report('pool', concurrency, await drive(concurrency, JOBS, pooled(() => emulation)))
  // Every fourth job another device: its slot needs a new context (the profile is fixed per context).
  report('pool-mixed', concurrency, await drive(concurrency, JOBS, pooled((i) => i % 4 === 3 ? mobile : emulation)))
  await pool.close()
}

fixture.close()
process.exit(0)
