// Issue 3's benchmark: screenshot and PDF requests through a real listener (a service process of its
// own, cold cache, distinct URLs) against two raw Playwright baselines doing the same work on the same
// Chromium: a fresh context per job, and a pool of reused pages. DPR 2 and 1, concurrency 1 and 4.
// Then: 20 identical concurrent uncached requests (how many renders), and the RSS of the service plus its
// Chromium after 50 and after 500 screenshots. Loopback only; every loop is bounded.
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { launchTestBrowser } from '../test/helpers/chromium.ts'
import { startFixtureServer, type FixtureServer } from '../test/helpers/fixture-server.ts'
import { freePort } from '../test/setup/global-setup.ts'
import { findChromium } from '../src/browser/chromium.ts'
import { fmt, median, treePss } from './lib.ts'

const ROOT = path.resolve(import.meta.dirname, '..')
const KEY = 'bench-key'
const JOBS_C4 = Number(process.env.BENCH_RENDER_JOBS ?? 40)
const JOBS_C1 = Math.max(6, Math.round(JOBS_C4 / 3))
const line = (s: string): void => { process.stdout.write(`${s}\n`) }

type Kind = 'screenshot' | 'pdf'
interface Setting { kind: Kind, dpr: number, concurrency: number }

/** Runs n jobs with at most c at once; returns throughput (jobs/s) and the median latency (ms). */
export async function drive (n: number, c: number, job: (i: number) => Promise<void>): Promise<{ rate: number, latency: number }> {
  const latencies: number[] = []
  let next = 0
  const started = performance.now()
  await Promise.all(Array.from({ length: c }, async () => {
    for (;;) {
      const i = next++
      if (i >= n) return
      const t = performance.now()
      await job(i)
      latencies.push(performance.now() - t)
    }
  }))
  return { rate: n / ((performance.now() - started) / 1000), latency: median(latencies) }
}

// ---------------------------------------------------------------- the service, in its own process

export interface Service { url: string, child: ChildProcess, storage: string, stop: () => Promise<void> }

export async function startService (fx: FixtureServer): Promise<Service> {
  const [free, pro] = [await freePort(), await freePort()]
  const storage = mkdtempSync(path.join(os.tmpdir(), 'pagecast-bench-files-'))
  const child = spawn(process.execPath, ['src/server.ts'], {
    cwd: ROOT,
    env: {
      ...process.env, FREE_PORT: String(free), PRO_PORT: String(pro), HOST: '127.0.0.1', API_KEYS: KEY,
      ALLOW_PRIVATE_HOSTS: fx.host, BROWSER_CONCURRENCY: '4', BROWSER_QUEUE_LIMIT: '1000', STORAGE_DIR: storage, LOG_LEVEL: 'warn'
    },
    stdio: ['ignore', 'ignore', 'inherit']
  })
  const url = `http://127.0.0.1:${pro}`
  for (let i = 0; i < 200; i++) {
    const ready = await fetch(`${url}/ready`).then(r => r.ok, () => false)
    if (ready) break
    await new Promise(r => setTimeout(r, 100))
  }
  return {
    url,
    child,
    storage,
    stop: async () => {
      const exited = new Promise(resolve => child.once('exit', resolve))
      child.kill('SIGTERM')
      await exited
      rmSync(storage, { recursive: true, force: true })
    }
  }
}

async function serviceJob (service: Service, fx: FixtureServer, s: Setting, tag: string): Promise<void> {
  const params = new URLSearchParams({
    url: `${fx.origin}/article/?${tag}`,
    [s.kind]: 'true',
    meta: 'false',
    waitUntil: 'load',
    'viewport.deviceScaleFactor': String(s.dpr)
  })
  const res = await fetch(`${service.url}/?${params}`, { headers: { 'x-api-key': KEY } })
  if (res.status !== 200) throw new Error(`service answered ${res.status}: ${await res.text()}`)
  await res.arrayBuffer()
}


// ---------------------------------------------------------------- raw Playwright baselines

async function rawCapture (page: Page, kind: Kind, url: string): Promise<void> {
  await page.goto(url, { waitUntil: 'load' })
  if (kind === 'screenshot') await page.screenshot({ type: 'png' })
  else await page.pdf({ format: 'A4' })
}

async function freshContextJob (browser: Browser, s: Setting, url: string): Promise<void> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: s.dpr })
  try {
    await rawCapture(await context.newPage(), s.kind, url)
  } finally {
    await context.close()
  }
}

export async function benchRender (): Promise<Record<string, number>> {
  const fx = await startFixtureServer()
  const figures: Record<string, number> = {}
  const settings: Setting[] = []
  for (const kind of ['screenshot', 'pdf'] as const) {
    for (const dpr of kind === 'pdf' ? [1] : [2, 1]) for (const concurrency of [1, 4]) settings.push({ kind, dpr, concurrency })
  }
  let tag = 0
  // BENCH_RENDER_PART=memory runs only the memory measurement (for checking a leak quickly).
  const memoryOnly = process.env.BENCH_RENDER_PART === 'memory'
  if (memoryOnly) settings.length = 0
  try {
    // Raw baselines first, on their own browser (same executable and flags as the service).
    const browser = await launchTestBrowser(findChromium({}))
    try {
      for (const s of settings) {
        const n = s.concurrency === 4 ? JOBS_C4 : JOBS_C1
        const label = `${s.kind}.dpr${s.dpr}.c${s.concurrency}`
        await drive(4, s.concurrency, async () => { await freshContextJob(browser, s, `${fx.origin}/article/?w${tag++}`) })
        const fresh = await drive(n, s.concurrency, async () => { await freshContextJob(browser, s, `${fx.origin}/article/?f${tag++}`) })
        const contexts = await Promise.all(Array.from({ length: s.concurrency }, async () => await browser.newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: s.dpr })))
        const pages = await Promise.all(contexts.map(async c => await c.newPage()))
        const free = [...pages]
        await drive(4, s.concurrency, async () => { const p = free.pop()!; try { await rawCapture(p, s.kind, `${fx.origin}/article/?w${tag++}`) } finally { free.push(p) } })
        const reused = await drive(n, s.concurrency, async () => {
          const p = free.pop()!
          try { await rawCapture(p, s.kind, `${fx.origin}/article/?r${tag++}`) } finally { free.push(p) }
        })
        await Promise.all(contexts.map(async c => await c.close()))
        figures[`${label}.fresh.rate`] = fresh.rate
        figures[`${label}.fresh.latency`] = fresh.latency
        figures[`${label}.reused.rate`] = reused.rate
        figures[`${label}.reused.latency`] = reused.latency
      }
    } finally {
      await browser.close()
    }

    const service = await startService(fx)
    try {
      for (const s of settings) {
        const n = s.concurrency === 4 ? JOBS_C4 : JOBS_C1
        const label = `${s.kind}.dpr${s.dpr}.c${s.concurrency}`
        await drive(4, s.concurrency, async () => { await serviceJob(service, fx, s, `sw${tag++}`) })
        const ours = await drive(n, s.concurrency, async () => { await serviceJob(service, fx, s, `s${tag++}`) })
        figures[`${label}.ours.rate`] = ours.rate
        figures[`${label}.ours.latency`] = ours.latency
      }

      // 20 identical concurrent uncached requests: the fixture server counts the page loads.
      const before = fx.hitsOf('/article/')
      const shot: Setting = { kind: 'screenshot', dpr: 2, concurrency: 20 }
      const onceTag = `once${Date.now()}`
      await Promise.all(Array.from({ length: 20 }, async () => { await serviceJob(service, fx, shot, onceTag) }))
      figures.identicalRenders = fx.hitsOf('/article/') - before

      // Memory: after 50 and after 500 screenshots (distinct URLs, concurrency 4).
      await drive(50, 4, async () => { await serviceJob(service, fx, shot, `m${tag++}`) })
      figures.pssAfter50 = treePss(service.child.pid!)
      await drive(450, 4, async () => { await serviceJob(service, fx, shot, `m${tag++}`) })
      figures.pssAfter500 = treePss(service.child.pid!)
    } finally {
      await service.stop()
    }
  } finally {
    await fx.close()
  }
  return figures
}

export function printRender (f: Record<string, number>): void {
  line('## screenshots and PDFs (issue 3)')
  line('setting                  | pagecast        | raw fresh ctx   | raw reused page | ratio rate vs reused | ratio latency vs reused')
  for (const key of Object.keys(f).filter(k => k.endsWith('.ours.rate'))) {
    const label = key.slice(0, -'.ours.rate'.length)
    const c4 = label.endsWith('c4')
    const o = { rate: f[`${label}.ours.rate`]!, latency: f[`${label}.ours.latency`]! }
    const fr = { rate: f[`${label}.fresh.rate`]!, latency: f[`${label}.fresh.latency`]! }
    const re = { rate: f[`${label}.reused.rate`]!, latency: f[`${label}.reused.latency`]! }
    line(`${label.padEnd(24)} | ${fmt(o.rate)}/s ${fmt(o.latency, 0)}ms`.padEnd(43) +
      `| ${fmt(fr.rate)}/s ${fmt(fr.latency, 0)}ms`.padEnd(18) + `| ${fmt(re.rate)}/s ${fmt(re.latency, 0)}ms`.padEnd(18) +
      `| ${fmt(o.rate / re.rate)}${c4 ? ' (target >= 0.80)' : ''}`.padEnd(23) + `| ${fmt(o.latency / re.latency)}${c4 ? '' : ' (target <= 1.15)'}`)
  }
  line(`20 identical concurrent uncached screenshot requests: ${f.identicalRenders} render(s) (target 1)`)
  line(`service + Chromium PSS: ${fmt(f.pssAfter50!, 0)} MiB after 50 screenshots, ${fmt(f.pssAfter500!, 0)} MiB after 500 (${fmt(100 * (f.pssAfter500! / f.pssAfter50! - 1), 1)}%, target within 10%)`)
}
