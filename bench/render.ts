// Issues 3 and 14's benchmark: screenshot and PDF requests through a real listener (a service process of its
// own, cold cache, distinct URLs, upload to local disk included) against the limit: a raw reused page on the same
// Chromium, no reset, CDP capture (or Page.printToPDF) with the encoder the request asks for: Chromium's default one
// for a default screenshot, the fast one for `screenshot.optimizeForSpeed=true` (settings named `.fast`), and the
// isolated limit (the same, with about:blank and clearing after each job) for rates at c=4. DPR 2 and 1, concurrency 1 and 4,
// the two sides in alternating rounds of the same run (BENCH_RENDER_ROUNDS, 3 by default); ratios per round, their
// median and range, and the medians of the service's server-timing entries. BENCH_RENDER_FRESH=1 adds the first
// runs' other baseline, a fresh context per job. BENCH_RENDER_BASE=<another checkout> runs that tree's service too,
// in the same rounds, for before/after figures side by side. BENCH_RENDER_ONLY=<setting>,... runs only those settings
// (named as printed: screenshot.dpr2.c4, pdf.dpr1.c1, ...). BENCH_RENDER_PAUSE_MS=<ms> pauses that long after each
// job at c=1, on every side (one user reading each answer before the next request; rates then count the pauses).
// The service's Chromium runs without DISABLED_FEATURES (src/browser/chromium.ts); the limits run Playwright's
// defaults, as a raw user's would, unless BENCH_RENDER_LIMIT_FEATURES=1 (both sides at equal Chromium settings).
// Each side's CPU per job is counted too (the service and its Chromium; the limit's Chromium and this process): on a
// 2-core machine the rate at c=4 is bounded by it.
// Then: 20 identical concurrent uncached requests (how many renders), issue 25's burst of 200 screenshot requests
// on a service with the default settings (measureBurst), and the PSS of a service plus its Chromium after 50 and
// after 500 screenshots (measureMemory). BENCH_RENDER_PART=burst runs only the burst. Loopback only; every loop is
// bounded.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core'
import { launchTestBrowser } from '../test/helpers/chromium.ts'
import { startFixtureServer, type FixtureServer } from '../test/helpers/fixture-server.ts'
import { freePort } from '../test/setup/global-setup.ts'
import { descendantsOf } from '../test/helpers/processes.ts'
import { findChromium } from '../src/browser/chromium.ts'
import { fmt, line, median, runJobs, treePssByKind } from './lib.ts'
import { addSummaryRows, atLeast, atMost, ratio } from './summary.ts'
import { burstLines, runBurst, runFloor } from './burst.ts'

const ROOT = path.resolve(import.meta.dirname, '..')
const KEY = 'bench-key'
const JOBS_C4 = Number(process.env.BENCH_RENDER_JOBS ?? 40)
const JOBS_C1 = Math.max(6, Math.round(JOBS_C4 / 3))

type Kind = 'screenshot' | 'pdf'
/** `fast`: a screenshot with `screenshot.optimizeForSpeed=true`, against loops that capture with the fast encoder. */
interface Setting { kind: Kind, dpr: number, concurrency: number, fast?: boolean }

/**
 * A setting's name as printed and as BENCH_RENDER_ONLY takes it: screenshot.dpr2.c1 (the default encoding, against
 * loops capturing with Chromium's default encoder), screenshot.fast.dpr2.c1 (optimizeForSpeed, against the fast
 * encoder), pdf.dpr1.c4.
 */
function labelOf (s: Setting): string {
  return `${s.kind}${s.fast === true ? '.fast' : ''}.dpr${s.dpr}.c${s.concurrency}`
}

/** BENCH_RENDER_PAUSE_MS: the pause after each job at c=1. */
const PAUSE_MS = Number(process.env.BENCH_RENDER_PAUSE_MS ?? 0)

/** Runs n jobs with at most c at once; returns throughput (jobs/s) and the median latency (ms). */
export async function drive (n: number, c: number, job: (i: number) => Promise<void>): Promise<{ rate: number, latency: number }> {
  const { ms, latencies } = await runJobs(n, c, job, c === 1 ? PAUSE_MS : 0)
  return { rate: n / (ms / 1000), latency: median(latencies) }
}

// ---------------------------------------------------------------- the service, in its own process

export interface Service { url: string, child: ChildProcess, storage: string, stop: () => Promise<void> }

/** The ratios' browser settings: 4 pages at once, and a queue that never refuses the bench's jobs. */
const RATIO_SETTINGS = { BROWSER_CONCURRENCY: '4', BROWSER_QUEUE_LIMIT: '1000' }

/**
 * The service of the tree at `root` (this one by default) in its own process, with the ratios' browser settings, or
 * `settings` instead (`{}`: the shipped defaults).
 */
export async function startService (fx: FixtureServer, root = ROOT, settings: Record<string, string> = RATIO_SETTINGS): Promise<Service> {
  const [free, pro] = [await freePort(), await freePort()]
  const storage = mkdtempSync(path.join(os.tmpdir(), 'pagecast-bench-files-'))
  const child = spawn(process.execPath, ['src/server.ts'], {
    cwd: root,
    env: {
      ...process.env, FREE_PORT: String(free), PRO_PORT: String(pro), HOST: '127.0.0.1', API_KEYS: KEY,
      ALLOW_PRIVATE_HOSTS: fx.host, ...settings, STORAGE_DIR: storage, LOG_LEVEL: 'warn'
    },
    stdio: ['ignore', 'ignore', 'inherit']
  })
  const url = `http://127.0.0.1:${pro}`
  // Up to 90 s: on a loaded machine (load average 20) the service took 40 s to start listening.
  for (let i = 0; i < 900; i++) {
    const ready = await fetch(`${url}/ready`).then(r => r.ok, () => false)
    if (ready) break
    await new Promise(r => setTimeout(r, 100))
  }
  // Stopping twice waits for the same exit.
  let stopped: Promise<void> | undefined
  return {
    url,
    child,
    storage,
    stop: async () => {
      stopped ??= (async () => {
        const exited = new Promise(resolve => child.once('exit', resolve))
        child.kill('SIGTERM')
        await exited
        rmSync(storage, { recursive: true, force: true })
      })()
      await stopped
    }
  }
}

// ---------------------------------------------------------------- memory

/** Samples taken per reading, 500 ms apart; the reading is their median. */
const PSS_SAMPLES = 5
/**
 * How long the pool rests before a reading. Chromium's renderers keep their working size for about 10-12 s after
 * their last job, then drop to about half (the idle collection and cache purge of a renderer with nothing to do):
 * 4 busy renderers read 475 MiB 2 s after a burst and 250 MiB 15 s after it. A reading taken earlier measures how
 * recently each renderer worked, not what it holds.
 */
const SETTLE_MS = 15_000

/**
 * The PSS of a service and its Chromium once the pool is at rest: no job running (a job's reset runs after its
 * answer), then SETTLE_MS more, then the median of PSS_SAMPLES samples. The same at every mark. With it, the launches
 * so far (a relaunch between two marks changes the browser under measure), the PSS by kind of process of the last
 * sample, and the service's V8 heap in use and external memory (`service.heapUsed`, `service.external`: not PSS).
 */
async function settledPss (service: Service): Promise<{ total: number, launches: number, kinds: Record<string, number> }> {
  for (let i = 0; i < 100; i++) {
    const text = await fetch(`${service.url}/metrics`).then(async r => await r.text(), () => '')
    if (/^pagecast_browser_pages_active 0$/m.test(text)) break
    await new Promise(resolve => setTimeout(resolve, 100))
  }
  await new Promise(resolve => setTimeout(resolve, SETTLE_MS))
  const totals: number[] = []
  let kinds: Record<string, number> = {}
  for (let i = 0; i < PSS_SAMPLES; i++) {
    if (i > 0) await new Promise(resolve => setTimeout(resolve, 500))
    kinds = treePssByKind(service.child.pid!)
    totals.push(Object.entries(kinds).reduce((sum, [kind, mib]) => kind.endsWith('.count') ? sum : sum + mib, 0))
  }
  const text = await fetch(`${service.url}/metrics`).then(async r => await r.text(), () => '')
  const metric = (name: string): number => Number(new RegExp(`^${name} ([\\d.e+-]+)$`, 'm').exec(text)?.[1] ?? NaN)
  // The service's own share: its V8 heap in use and the memory outside it (Buffers, native modules' allocations).
  kinds['service.heapUsed'] = metric('nodejs_heap_size_used_bytes') / 2 ** 20
  kinds['service.external'] = metric('nodejs_external_memory_bytes') / 2 ** 20
  return { total: median(totals), launches: metric('pagecast_browser_launches_total'), kinds }
}

/**
 * Memory after 50 and after 500 screenshots (distinct URLs, concurrency 4), on a service started for it with the
 * ratio service's configuration, so that a full run measures what a run of this part alone does. On the ratio
 * service a full run read 1,374 → 900 MiB: its ratio phases had run 502 jobs, so the 1,000th (BROWSER_MAX_JOBS) fell
 * between the two marks, and the 500 mark measured a browser relaunched a few jobs before against one that had
 * served 550. Here the 550 jobs stay within one browser, which the figures check (`memRelaunches`).
 */
async function measureMemory (fx: FixtureServer, job: (service: Service, i: number) => Promise<void>): Promise<Record<string, number>> {
  const service = await startService(fx)
  const figures: Record<string, number> = {}
  try {
    let i = 0
    const mark = async (name: string, jobs: number): Promise<number> => {
      await drive(jobs, 4, async () => { await job(service, i++) })
      const reading = await settledPss(service)
      figures[name] = reading.total
      for (const [kind, value] of Object.entries(reading.kinds)) figures[`${name}.${kind}`] = value
      return reading.launches
    }
    const launchesAt50 = await mark('pssAfter50', 50)
    figures.memRelaunches = await mark('pssAfter500', 450) - launchesAt50
  } finally {
    await service.stop()
  }
  return figures
}

/**
 * Issue 25's burst (bench/burst.ts) on a service of its own with the shipped defaults, after 3 screenshots (a service
 * that has rendered before, its pace measured on them), with the floor of 200 GET /health just before it and the
 * queue's refusals from /metrics after it. The load average is kept with the figures.
 */
async function measureBurst (fx: FixtureServer): Promise<Record<string, number>> {
  const service = await startService(fx, ROOT, {})
  try {
    for (let i = 0; i < 3; i++) await serviceJob(service, fx, { kind: 'screenshot', dpr: 1, concurrency: 1 }, `burstwarm${i}`)
    const load = os.loadavg()[0]!
    const floor = await runFloor(service.url)
    const stamp = Date.now()
    const burst = await runBurst(service.url, KEY, (i) => `${fx.origin}/article/?burst${stamp}-${i}`)
    const text = await fetch(`${service.url}/metrics`).then(async r => await r.text(), () => '')
    const refused = (reason: string): number => Number(new RegExp(`^pagecast_browser_refusals_total\\{reason="${reason}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? NaN)
    const figures: Record<string, number> = { ...floor, ...burst, refusedFull: refused('full'), refusedLate: refused('late'), refusedLeft: refused('left'), load, loadAfter: os.loadavg()[0]! }
    return Object.fromEntries(Object.entries(figures).map(([k, v]) => [`burst.${k}`, v]))
  } finally {
    await service.stop()
  }
}

async function serviceJob (service: Service, fx: FixtureServer, s: Setting, tag: string): Promise<{ timings: Record<string, number>, size?: number }> {
  const params = new URLSearchParams({
    url: `${fx.origin}/article/?${tag}`,
    [s.kind]: 'true',
    ...(s.fast === true ? { 'screenshot.optimizeForSpeed': 'true' } : {}),
    meta: 'false',
    waitUntil: 'load',
    'viewport.deviceScaleFactor': String(s.dpr)
  })
  const res = await fetch(`${service.url}/?${params}`, { headers: { 'x-api-key': KEY } })
  if (res.status !== 200) throw new Error(`service answered ${res.status}: ${await res.text()}`)
  const body = await res.json() as { data?: Record<string, { size?: number } | undefined> }
  const size = body.data?.[s.kind]?.size
  return { timings: parseServerTiming(res.headers.get('server-timing')), ...(size === undefined ? {} : { size }) }
}


// ---------------------------------------------------------------- the limit: a raw reused page

/**
 * The limit pagecast is measured against (issues 14, 25): a reused page with no reset between jobs, driven through
 * CDP: goto until `load`, then `Page.captureScreenshot` (with `optimizeForSpeed` as the setting asks), or
 * `Page.printToPDF` for a PDF.
 */
interface RawPage { page: Page, session: CDPSession }

/**
 * Chromium captures with the emulation of the session that asks: without the page's device metrics on this session,
 * a DPR 2 page would be captured at DPR 1 (1280×800 instead of 2560×1600). Set once per page, as pagecast does.
 */
async function rawPage (context: BrowserContext, dpr: number): Promise<RawPage> {
  const page = await context.newPage()
  const session = await context.newCDPSession(page)
  await session.send('Emulation.setDeviceMetricsOverride', {
    width: 1280, height: 800, deviceScaleFactor: dpr, mobile: false, screenWidth: 1280, screenHeight: 800, dontSetVisibleSize: true
  })
  return { page, session }
}

let rawRetries = 0

async function rawCapture (raw: RawPage, kind: Kind, url: string, optimizeForSpeed: boolean): Promise<Buffer> {
  await raw.page.goto(url, { waitUntil: 'load' })
  if (kind === 'screenshot') {
    // Chromium rarely answers "Unable to capture screenshot" on a loaded machine; the limit tries again (counted).
    for (let attempt = 0; ; attempt++) {
      try {
        const { data } = await raw.session.send('Page.captureScreenshot', { format: 'png', optimizeForSpeed })
        return Buffer.from(data, 'base64')
      } catch (err) {
        if (attempt >= 5 || !/Unable to capture screenshot/.test(String(err))) throw err
        rawRetries += 1
        await new Promise(resolve => setTimeout(resolve, 20 * (attempt + 1)))
      }
    }
  }
  const { data } = await raw.session.send('Page.printToPDF', { paperWidth: 8.27, paperHeight: 11.7 })
  return Buffer.from(data, 'base64')
}

async function freshContextJob (browser: Browser, s: Setting, url: string): Promise<void> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: s.dpr })
  try {
    await rawCapture(await rawPage(context, s.dpr), s.kind, url, s.fast === true)
  } finally {
    await context.close()
  }
}

/** The server-timing entries of one answer, by name (ms). */
function parseServerTiming (header: string | null): Record<string, number> {
  const out: Record<string, number> = {}
  for (const part of (header ?? '').split(',')) {
    const match = /^\s*([\w.-]+);dur=([\d.]+)/.exec(part)
    if (match !== null) out[match[1]!] = Number(match[2])
  }
  return out
}

/** The pool's reset counters of a service (/metrics): resets done and the seconds they took. */
async function resetCounters (service: Service): Promise<{ resets: number, seconds: number }> {
  const text = await fetch(`${service.url}/metrics`).then(async r => await r.text(), () => '')
  const value = (name: string): number => Number(new RegExp(`^${name} ([\\d.e+-]+)$`, 'm').exec(text)?.[1] ?? NaN)
  return { resets: value('pagecast_browser_resets_total'), seconds: value('pagecast_browser_reset_seconds_total') }
}

const ROUNDS = Number(process.env.BENCH_RENDER_ROUNDS ?? 3)

/** CPU time (ms, user + system) used so far by `root` and every live process under it (USER_HZ is 100 on Linux). */
function treeCpuMs (root: number): number {
  let ticks = 0
  for (const pid of [root, ...descendantsOf(root).map(p => p.pid)]) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      ticks += Number(fields[11]) + Number(fields[12])
    } catch {}
  }
  return ticks * 10
}

/** This process's CPU time so far (ms). */
function ownCpuMs (): number {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}

/** Runs `side` and adds the CPU it cost, per job, to `perJob` (ms). */
async function counted<T> (perJob: number[], jobs: number, cpu: () => number, side: () => Promise<T>): Promise<T> {
  const before = cpu()
  const result = await side()
  perJob.push((cpu() - before) / jobs)
  return result
}

export async function benchRender (): Promise<Record<string, number>> {
  const fx = await startFixtureServer()
  const figures: Record<string, number> = {}
  const settings: Setting[] = []
  for (const kind of ['screenshot', 'pdf'] as const) {
    for (const dpr of kind === 'pdf' ? [1] : [2, 1]) {
      for (const fast of kind === 'pdf' ? [false] : [false, true]) for (const concurrency of [1, 4]) settings.push({ kind, dpr, concurrency, fast })
    }
  }
  let tag = 0
  // BENCH_RENDER_PART=memory runs only the memory measurement (for checking a leak quickly), =ratios only the ratios.
  const memoryOnly = process.env.BENCH_RENDER_PART === 'memory'
  const burstOnly = process.env.BENCH_RENDER_PART === 'burst'
  if (burstOnly) {
    try { return await measureBurst(fx) } finally { await fx.close() }
  }
  if (memoryOnly) settings.length = 0
  // BENCH_RENDER_ONLY=screenshot.dpr1.c4,pdf.dpr1.c1: only those settings of the ratios (a quicker comparison).
  const only = process.env.BENCH_RENDER_ONLY?.split(',')
  if (only !== undefined) settings.splice(0, settings.length, ...settings.filter(s => only.includes(labelOf(s))))
  try {
    // The limit runs on a browser of its own (same executable and flags as the service's), next to the service:
    // both sides of a setting are measured in alternating rounds of the same run, so the machine's load hits both.
    const others = new Set(descendantsOf(process.pid).map(p => p.pid))
    // BENCH_RENDER_LIMIT_FEATURES=1: the limits' Chromium runs without the service's DISABLED_FEATURES too (a
    // comparison at equal Chromium settings; the limits otherwise run Playwright's defaults, as a raw user would).
    // The limit's executable is the service's: CHROMIUM_PATH reaches both (the service inherits this environment).
    const browser = await launchTestBrowser(findChromium({ chromiumPath: process.env.CHROMIUM_PATH }), { poolFeatures: process.env.BENCH_RENDER_LIMIT_FEATURES === '1' })
    // The limit's browser: the process this one started just now.
    const limitPid = descendantsOf(process.pid).find(p => !others.has(p.pid) && !p.cmd.includes('--type='))?.pid
    const limitCpu = (): number => (limitPid === undefined ? NaN : treeCpuMs(limitPid)) + ownCpuMs()
    const service = await startService(fx)
    // BENCH_RENDER_BASE=<another checkout>: its service runs too, in the same rounds (before/after side by side).
    const baseRoot = process.env.BENCH_RENDER_BASE
    const base = baseRoot === undefined ? undefined : await startService(fx, baseRoot)
    try {
      for (const s of settings) {
        const n = s.concurrency === 4 ? JOBS_C4 : JOBS_C1
        const label = labelOf(s)
        // The loops capture with the encoder the request asks for: Chromium's default one for the default request.
        const fastEncoder = s.fast === true
        const contexts = await Promise.all(Array.from({ length: s.concurrency }, async () => await browser.newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: s.dpr })))
        const free = await Promise.all(contexts.map(async c => await rawPage(c, s.dpr)))
        const rawJob = async (prefix: string): Promise<Buffer> => {
          const p = free.pop()!
          try { return await rawCapture(p, s.kind, `${fx.origin}/article/?${prefix}${tag++}`, fastEncoder) } finally { free.push(p) }
        }
        // The isolated limit (issue 25), what rates at c=4 are compared with: the same reused pages, and after each job
        // the isolation of a careful raw user: a navigation to about:blank, then cookies, the origin's storage and the
        // HTTP cache cleared through CDP.
        const isolatedJob = async (prefix: string): Promise<void> => {
          const p = free.pop()!
          try {
            await rawCapture(p, s.kind, `${fx.origin}/article/?${prefix}${tag++}`, fastEncoder)
            await p.page.goto('about:blank')
            await Promise.all([
              p.session.send('Network.clearBrowserCookies'),
              p.session.send('Storage.clearDataForOrigin', { origin: fx.origin, storageTypes: 'all' }),
              p.session.send('Network.clearBrowserCache')
            ])
          } finally { free.push(p) }
        }
        // Sizes: the limit's fast encode and Chromium's default encode of the same page.
        if (s.kind === 'screenshot' && s.concurrency === 1) {
          const p = free[0]!
          figures[`${label}.fastPngBytes`] = (await rawCapture(p, 'screenshot', `${fx.origin}/article/?z${tag++}`, true)).length
          figures[`${label}.defaultPngBytes`] = (await rawCapture(p, 'screenshot', `${fx.origin}/article/?d${tag++}`, false)).length
        }
        const timings: Array<Record<string, number>> = []
        const sizes: number[] = []
        const baseSizes: number[] = []
        const ourJob = async (prefix: string): Promise<void> => {
          const answer = await serviceJob(service, fx, s, `${prefix}${tag++}`)
          timings.push(answer.timings)
          if (answer.size !== undefined) sizes.push(answer.size)
        }
        const baseJob = async (prefix: string): Promise<void> => {
          const answer = await serviceJob(base!, fx, s, `${prefix}${tag++}`)
          if (answer.size !== undefined) baseSizes.push(answer.size)
        }
        await drive(4, s.concurrency, async () => { await rawJob('w') })
        await drive(4, s.concurrency, async () => { await ourJob('sw') })
        if (base !== undefined) await drive(4, s.concurrency, async () => { await baseJob('bw') })
        timings.length = 0
        sizes.length = 0
        const resetsBefore = await resetCounters(service)
        const raws: Array<{ rate: number, latency: number }> = []
        const ours: Array<{ rate: number, latency: number }> = []
        const bases: Array<{ rate: number, latency: number }> = []
        const isolateds: Array<{ rate: number, latency: number }> = []
        const cpu = { raw: [] as number[], ours: [] as number[], base: [] as number[], isolated: [] as number[] }
        for (let round = 0; round < ROUNDS; round++) {
          // Rotate which side goes first.
          const sides = [
            async () => { raws.push(await counted(cpu.raw, n, limitCpu, async () => await drive(n, s.concurrency, async () => { await rawJob('r') }))) },
            async () => { ours.push(await counted(cpu.ours, n, () => treeCpuMs(service.child.pid!), async () => await drive(n, s.concurrency, async () => { await ourJob('s') }))) },
            async () => { isolateds.push(await counted(cpu.isolated, n, limitCpu, async () => await drive(n, s.concurrency, async () => { await isolatedJob('i') }))) }
          ]
          if (base !== undefined) {
            sides.push(async () => { bases.push(await counted(cpu.base, n, () => treeCpuMs(base.child.pid!), async () => await drive(n, s.concurrency, async () => { await baseJob('b') }))) })
          }
          for (let i = 0; i < round % sides.length; i++) sides.push(sides.shift()!)
          for (const side of sides) await side()
        }
        await Promise.all(contexts.map(async c => await c.close()))
        const resetsAfter = await resetCounters(service)
        figures[`${label}.resetMs`] = 1000 * (resetsAfter.seconds - resetsBefore.seconds) / (resetsAfter.resets - resetsBefore.resets)
        const latencyRatios = ours.map((o, i) => o.latency / raws[i]!.latency)
        const rateRatios = ours.map((o, i) => o.rate / raws[i]!.rate)
        const vsIsolated = (sides: Array<{ rate: number }>, key: string): void => {
          const ratios = sides.map((o, i) => o.rate / isolateds[i]!.rate)
          figures[key] = median(ratios)
          figures[`${key}.min`] = Math.min(...ratios)
          figures[`${key}.max`] = Math.max(...ratios)
        }
        vsIsolated(ours, `${label}.rateVsIsolated`)
        if (base !== undefined) vsIsolated(bases, `${label}.base.rateVsIsolated`)
        figures[`${label}.isolated.rate`] = median(isolateds.map(o => o.rate))
        figures[`${label}.isolated.latency`] = median(isolateds.map(o => o.latency))
        figures[`${label}.isolated.cpuMs`] = median(cpu.isolated)
        if (base !== undefined) {
          const baseLatency = bases.map((o, i) => o.latency / raws[i]!.latency)
          const baseRate = bases.map((o, i) => o.rate / raws[i]!.rate)
          figures[`${label}.base.rate`] = median(bases.map(o => o.rate))
          figures[`${label}.base.latency`] = median(bases.map(o => o.latency))
          figures[`${label}.base.latencyRatio`] = median(baseLatency)
          figures[`${label}.base.latencyRatio.min`] = Math.min(...baseLatency)
          figures[`${label}.base.latencyRatio.max`] = Math.max(...baseLatency)
          figures[`${label}.base.rateRatio`] = median(baseRate)
          figures[`${label}.base.rateRatio.min`] = Math.min(...baseRate)
          figures[`${label}.base.rateRatio.max`] = Math.max(...baseRate)
          if (baseSizes.length > 0) figures[`${label}.base.storedBytes`] = median(baseSizes)
        }
        figures[`${label}.ours.cpuMs`] = median(cpu.ours)
        figures[`${label}.reused.cpuMs`] = median(cpu.raw)
        if (base !== undefined) figures[`${label}.base.cpuMs`] = median(cpu.base)
        figures[`${label}.ours.rate`] = median(ours.map(o => o.rate))
        figures[`${label}.ours.latency`] = median(ours.map(o => o.latency))
        figures[`${label}.reused.rate`] = median(raws.map(o => o.rate))
        figures[`${label}.reused.latency`] = median(raws.map(o => o.latency))
        figures[`${label}.latencyRatio`] = median(latencyRatios)
        figures[`${label}.latencyRatio.min`] = Math.min(...latencyRatios)
        figures[`${label}.latencyRatio.max`] = Math.max(...latencyRatios)
        figures[`${label}.rateRatio`] = median(rateRatios)
        figures[`${label}.rateRatio.min`] = Math.min(...rateRatios)
        figures[`${label}.rateRatio.max`] = Math.max(...rateRatios)
        if (sizes.length > 0) figures[`${label}.storedBytes`] = median(sizes)
        const names = new Set(timings.flatMap(t => Object.keys(t)))
        for (const name of names) figures[`${label}.timing.${name}`] = median(timings.map(t => t[name] ?? 0))
      }
      if (process.env.BENCH_RENDER_FRESH === '1') {
        // The other baseline of the first runs: a fresh context per job (the isolation a reset replaces).
        for (const s of settings) {
          const label = labelOf(s)
          const fresh = await drive(s.concurrency === 4 ? JOBS_C4 : JOBS_C1, s.concurrency, async () => { await freshContextJob(browser, s, `${fx.origin}/article/?f${tag++}`) })
          figures[`${label}.fresh.rate`] = fresh.rate
          figures[`${label}.fresh.latency`] = fresh.latency
        }
      }
      await browser.close()
      figures.rawRetries = rawRetries
      if (process.env.BENCH_RENDER_PART === 'ratios') return figures

      // 20 identical concurrent uncached requests: the fixture server counts the page loads.
      const before = fx.hitsOf('/article/')
      const shot: Setting = { kind: 'screenshot', dpr: 2, concurrency: 20 }
      const onceTag = `once${Date.now()}`
      await Promise.all(Array.from({ length: 20 }, async () => { await serviceJob(service, fx, shot, onceTag) }))
      figures.identicalRenders = fx.hitsOf('/article/') - before

      // The burst and memory, each on a service of its own: the ratio service goes first.
      await service.stop()
      Object.assign(figures, await measureBurst(fx))
      Object.assign(figures, await measureMemory(fx, async (svc, i) => { await serviceJob(svc, fx, shot, `m${i}`) }))
    } finally {
      await browser.close().catch(() => {})
      await service.stop()
      await base?.stop()
    }
  } finally {
    await fx.close()
  }
  return figures
}

// The summary's rows for this part (issue 25's targets): latency at c=1 against the no-reset limit, the rate at c=4
// against the isolated limit, each with the encoder the request asks for; the stored PNG against Chromium's default
// encode.
addSummaryRows([
  ...['screenshot.dpr2', 'screenshot.fast.dpr2', 'screenshot.dpr1', 'screenshot.fast.dpr1', 'pdf.dpr1'].flatMap(s => [
    { part: 'render', label: `${s} c=1, latency vs the no-reset limit (median of rounds)`, value: (f: Record<string, number>) => f[`${s}.c1.latencyRatio`], ...atMost(1.3) },
    { part: 'render', label: `${s} c=4, rate vs the isolated limit (median of rounds)`, value: (f: Record<string, number>) => f[`${s}.c4.rateVsIsolated`], ...atLeast(0.85) }
  ]),
  { part: 'render', label: 'burst of 200 screenshots: answered (share of requests)', value: ratio('burst.answered', 'burst.requests'), ...atLeast(1) },
  { part: 'render', label: 'burst of 200 screenshots: time to an EBUSY, p95 (s)', value: (f: Record<string, number>) => f['burst.busyP95'] === undefined ? undefined : f['burst.busyP95'] / 1000, ...atMost(1) },
  { part: 'render', label: 'burst of 200 screenshots: 504 answers', value: (f: Record<string, number>) => f['burst.timedOut'], ...atMost(0) },
  { part: 'render', label: 'stored PNG vs Chromium default encode, DPR 2', value: ratio('screenshot.dpr2.c1.storedBytes', 'screenshot.dpr2.c1.defaultPngBytes'), ...atMost(1) },
  { part: 'render', label: 'stored PNG vs Chromium default encode, DPR 1', value: ratio('screenshot.dpr1.c1.storedBytes', 'screenshot.dpr1.c1.defaultPngBytes'), ...atMost(1) }
])

export function printRender (f: Record<string, number>): void {
  line('## screenshots and PDFs (issues 14, 25): pagecast against the limit, a raw reused page (CDP capture with the encoder the request asks for: `.fast` the fast one, else the default)')
  line(`setting                  | pagecast        | limit           | latency ratio (median, range of ${ROUNDS} rounds) | rate ratio`)
  for (const key of Object.keys(f).filter(k => k.endsWith('.ours.rate'))) {
    const label = key.slice(0, -'.ours.rate'.length)
    const o = { rate: f[`${label}.ours.rate`]!, latency: f[`${label}.ours.latency`]! }
    const re = { rate: f[`${label}.reused.rate`]!, latency: f[`${label}.reused.latency`]! }
    const lat = `${fmt(f[`${label}.latencyRatio`]!)} [${fmt(f[`${label}.latencyRatio.min`]!)}-${fmt(f[`${label}.latencyRatio.max`]!)}]`
    const rate = `${fmt(f[`${label}.rateRatio`]!)} [${fmt(f[`${label}.rateRatio.min`]!)}-${fmt(f[`${label}.rateRatio.max`]!)}]`
    line(`${label.padEnd(24)} | ${fmt(o.rate)}/s ${fmt(o.latency, 0)}ms`.padEnd(43) + `| ${fmt(re.rate)}/s ${fmt(re.latency, 0)}ms`.padEnd(18) +
      `| ${lat}${label.endsWith('c1') ? ' (target <= 1.30)' : ''}`.padEnd(48) + `| ${rate}`)
    const timing = Object.keys(f).filter(k => k.startsWith(`${label}.timing.`))
      .map(k => `${k.slice(`${label}.timing.`.length)} ${fmt(f[k]!, 1)}`)
    line(`  server-timing medians (ms): ${timing.join(', ')}; after the answer, the reset: ${fmt(f[`${label}.resetMs`] ?? NaN, 1)} ms (mean)`)
    line(`  CPU per job (ms, median of rounds): pagecast ${fmt(f[`${label}.ours.cpuMs`] ?? NaN, 0)} (service and its Chromium), ` +
      `limit ${fmt(f[`${label}.reused.cpuMs`] ?? NaN, 0)} (its Chromium and the bench process, fixture server included)` +
      (f[`${label}.base.cpuMs`] === undefined ? '' : `, base tree ${fmt(f[`${label}.base.cpuMs`]!, 0)}`))
    const vs = (key: string): string => `${fmt(f[key]!)} [${fmt(f[`${key}.min`]!)}-${fmt(f[`${key}.max`]!)}]`
    if (f[`${label}.isolated.rate`] !== undefined) {
      line(`  isolated limit (about:blank and clearing after each job): ${fmt(f[`${label}.isolated.rate`]!)}/s ${fmt(f[`${label}.isolated.latency`]!, 0)}ms, ` +
        `CPU ${fmt(f[`${label}.isolated.cpuMs`]!, 0)} ms/job; pagecast's rate against it ${vs(`${label}.rateVsIsolated`)}${label.endsWith('c4') ? ' (target >= 0.85)' : ''}` +
        (f[`${label}.base.rateVsIsolated`] === undefined ? '' : `, base tree's ${vs(`${label}.base.rateVsIsolated`)}`))
    }
    if (f[`${label}.base.rate`] !== undefined) {
      const b = `${label}.base`
      line(`  base tree (same rounds): ${fmt(f[`${b}.rate`]!)}/s ${fmt(f[`${b}.latency`]!, 0)}ms, latency ratio ${fmt(f[`${b}.latencyRatio`]!)} ` +
        `[${fmt(f[`${b}.latencyRatio.min`]!)}-${fmt(f[`${b}.latencyRatio.max`]!)}], rate ratio ${fmt(f[`${b}.rateRatio`]!)} ` +
        `[${fmt(f[`${b}.rateRatio.min`]!)}-${fmt(f[`${b}.rateRatio.max`]!)}]${f[`${b}.storedBytes`] === undefined ? '' : `, stored ${f[`${b}.storedBytes`]} bytes`}`)
    }
    if (f[`${label}.fresh.rate`] !== undefined) line(`  fresh context per job: ${fmt(f[`${label}.fresh.rate`]!)}/s ${fmt(f[`${label}.fresh.latency`]!, 0)}ms`)
  }
  for (const dpr of [2, 1]) {
    const label = `screenshot.dpr${dpr}.c1`
    if (f[`${label}.defaultPngBytes`] === undefined) continue
    line(`PNG bytes, DPR ${dpr}: Chromium default encode ${f[`${label}.defaultPngBytes`]}, fast encode ${f[`${label}.fastPngBytes`]}, stored by pagecast ${f[`${label}.storedBytes`]} (target <= default)`)
  }
  if (f['burst.requests'] !== undefined) {
    for (const text of burstLines(f, `${fmt(f['burst.load']!, 1)} before, ${fmt(f['burst.loadAfter']!, 1)} after`)) line(text)
  }
  if (f.rawRetries !== undefined && f.rawRetries > 0) line(`(the limit's captures tried again after "Unable to capture screenshot": ${f.rawRetries})`)
  if (f.identicalRenders === undefined) return
  line(`20 identical concurrent uncached screenshot requests: ${f.identicalRenders} render(s) (target 1)`)
  line(`service + Chromium PSS, at rest (a service of its own): ${fmt(f.pssAfter50!, 0)} MiB after 50 screenshots, ${fmt(f.pssAfter500!, 0)} MiB after 500 ` +
    `(${fmt(100 * (f.pssAfter500! / f.pssAfter50! - 1), 1)}%, target within 10%)${!(f.memRelaunches! > 0) ? '' : `; the browser was relaunched between the marks (${f.memRelaunches})`}`)
  for (const mark of ['pssAfter50', 'pssAfter500']) {
    const kinds = Object.keys(f).filter(k => k.startsWith(`${mark}.`) && !k.endsWith('.count') && !k.startsWith(`${mark}.service.`))
      .map(k => k.slice(mark.length + 1))
    line(`  after ${mark.slice('pssAfter'.length)}: ${kinds.map(k => `${k} ${fmt(f[`${mark}.${k}`]!, 0)}${(f[`${mark}.${k}.count`] ?? 1) > 1 ? ` (${f[`${mark}.${k}.count`]})` : ''}`).join(', ')}` +
      ` MiB; the service's V8 heap in use ${fmt(f[`${mark}.service.heapUsed`]!, 0)}, external ${fmt(f[`${mark}.service.external`]!, 0)} MiB`)
  }
}
