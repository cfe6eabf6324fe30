// Issue 4's load script: bursts of concurrent screenshot requests (distinct URLs, loopback fixture) against the
// service in its own process (free listener, quota off, 2 pages at once, 20 waiting). Prints how many were
// answered 200, how many got 503 EBUSY (with Retry-After), anything else, and the peak memory of the service
// process plus its Chromium (PSS of the whole process tree, sampled every 100 ms). Loopback only; bounded: a
// fixed number of bursts, each request with a 60 s ceiling, and the service stopped at the end.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { startFixtureServer } from '../test/helpers/fixture-server.ts'
import { freePort } from '../test/setup/global-setup.ts'
import { fmt, line, median, treePss } from './lib.ts'

const ROOT = path.resolve(import.meta.dirname, '..')
const REQUESTS = Number(process.env.BENCH_LOAD_REQUESTS ?? 200)
const BURSTS = Number(process.env.BENCH_LOAD_BURSTS ?? 3)
const CONCURRENCY = 2
const QUEUE = 20


export interface LoadFigures {
  requests: number
  answered: number
  ebusy: number
  other: number
  /** EBUSY answers without a Retry-After header (should be 0). */
  ebusyWithoutRetryAfter: number
  seconds: number
  medianOkMs: number
  medianBusyMs: number
  peakMiB: number
}

export async function benchLoad (): Promise<LoadFigures> {
  const fx = await startFixtureServer()
  const [free, pro] = [await freePort(), await freePort()]
  const storage = mkdtempSync(path.join(os.tmpdir(), 'pagecast-load-files-'))
  const child = spawn(process.execPath, ['src/server.ts'], {
    cwd: ROOT,
    env: {
      ...process.env, FREE_PORT: String(free), PRO_PORT: String(pro), HOST: '127.0.0.1', FREE_DAILY_LIMIT: '0',
      ALLOW_PRIVATE_HOSTS: fx.host, BROWSER_CONCURRENCY: String(CONCURRENCY), BROWSER_QUEUE_LIMIT: String(QUEUE),
      STORAGE_DIR: storage, LOG_LEVEL: 'warn'
    },
    stdio: ['ignore', 'ignore', 'inherit']
  })
  const exited = new Promise(resolve => child.once('exit', resolve))
  const base = `http://127.0.0.1:${free}`
  const figures: LoadFigures = { requests: 0, answered: 0, ebusy: 0, other: 0, ebusyWithoutRetryAfter: 0, seconds: 0, medianOkMs: 0, medianBusyMs: 0, peakMiB: 0 }
  let sampler: NodeJS.Timeout | undefined
  try {
    let ready = false
    for (let i = 0; i < 300 && !ready; i++) {
      ready = await fetch(`${base}/ready`).then(r => r.ok, () => false)
      if (!ready) await new Promise(resolve => setTimeout(resolve, 100))
    }
    if (!ready) throw new Error('the service did not become ready')
    // One render so the browser is up.
    await fetch(`${base}/?url=${encodeURIComponent(`${fx.origin}/article/?warm`)}&screenshot&meta=false`).then(async r => await r.arrayBuffer())
    sampler = setInterval(() => { figures.peakMiB = Math.max(figures.peakMiB, treePss(child.pid!)) }, 100)
    const okMs: number[] = []
    const busyMs: number[] = []
    const started = performance.now()
    for (let burst = 0; burst < BURSTS; burst++) {
      await Promise.all(Array.from({ length: REQUESTS }, async (_, i) => {
        const params = new URLSearchParams({ url: `${fx.origin}/article/?b=${burst}&n=${i}`, screenshot: 'true', meta: 'false' })
        const t = performance.now()
        figures.requests++
        try {
          const res = await fetch(`${base}/?${params}`, { signal: AbortSignal.timeout(60_000) })
          const body = await res.json() as { code?: string }
          if (res.status === 200) { figures.answered++; okMs.push(performance.now() - t) } else if (res.status === 503 && body.code === 'EBUSY') {
            figures.ebusy++
            busyMs.push(performance.now() - t)
            if (res.headers.get('retry-after') === null) figures.ebusyWithoutRetryAfter++
          } else {
            figures.other++
          }
        } catch {
          figures.other++
        }
      }))
    }
    figures.seconds = (performance.now() - started) / 1000
    figures.medianOkMs = okMs.length === 0 ? 0 : median(okMs)
    figures.medianBusyMs = busyMs.length === 0 ? 0 : median(busyMs)
  } finally {
    clearInterval(sampler)
    child.kill('SIGTERM')
    await exited
    rmSync(storage, { recursive: true, force: true })
    await fx.close()
  }
  return figures
}

export function printLoad (f: LoadFigures): void {
  line(`\nload: ${BURSTS} bursts of ${REQUESTS} concurrent screenshots, BROWSER_CONCURRENCY=${CONCURRENCY}, BROWSER_QUEUE_LIMIT=${QUEUE}`)
  line(`  requests ${f.requests}: answered 200 ${f.answered}, 503 EBUSY ${f.ebusy} (without Retry-After ${f.ebusyWithoutRetryAfter}), other ${f.other}`)
  line(`  ${fmt(f.seconds)} s; median 200 ${fmt(f.medianOkMs)} ms, median EBUSY ${fmt(f.medianBusyMs)} ms`)
  line(`  peak memory (service process + Chromium, PSS): ${fmt(f.peakMiB)} MiB`)
}
