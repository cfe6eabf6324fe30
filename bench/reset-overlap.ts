// What the last job's reset costs the next job at one connection (issue 25): screenshots of the bench's article page
// (DPR 1, meta=false, waitUntil=load), one at a time, sent back to back (the next request arrives while the last
// job's page is being reset) and with a pause between (the reset is over before the next job starts). Prints the
// median wall time and server-timing parts of each series. Not a target of `npm run bench`; run it as
//
//   sh scripts/node.sh bench/reset-overlap.ts [jobs per series] [pause ms]
//
// The figures it gave are in docs/benchmarks.md ("The reset's blank document at one connection").
import { startFixtureServer } from '../test/helpers/fixture-server.ts'
import { BENCH_KEY, median, startBenchService } from './lib.ts'

const JOBS = Number(process.argv[2] ?? 20)
const PAUSE_MS = Number(process.argv[3] ?? 600)
const SHOWN = ['navigate', 'animations', 'adblock', 'capture', 'encode', 'store', 'total']

const fx = await startFixtureServer()
const service = await startBenchService(fx, { STORAGE_SCOPE: 'instance' })
let tag = 0

async function job (): Promise<Record<string, number>> {
  const params = new URLSearchParams({ url: `${fx.origin}/article/?overlap${tag++}`, screenshot: 'true', meta: 'false', waitUntil: 'load', 'viewport.deviceScaleFactor': '1' })
  const started = performance.now()
  const res = await fetch(`${service.proUrl}/?${params}`, { headers: { 'x-api-key': BENCH_KEY } })
  await res.arrayBuffer()
  if (res.status !== 200) throw new Error(`the service answered ${res.status}`)
  const parts: Record<string, number> = { wall: performance.now() - started }
  for (const part of (res.headers.get('server-timing') ?? '').split(',')) {
    const m = /^\s*([\w-]+);dur=([\d.]+)/.exec(part)
    if (m !== null) parts[m[1]!] = Number(m[2])
  }
  return parts
}

async function series (name: string, pauseMs: number): Promise<void> {
  const rows: Array<Record<string, number>> = []
  for (let i = 0; i < JOBS; i++) {
    rows.push(await job())
    if (pauseMs > 0) await new Promise(resolve => setTimeout(resolve, pauseMs))
  }
  const shown = ['wall', ...SHOWN].map(key => `${key} ${median(rows.map(row => row[key] ?? 0)).toFixed(0)}`)
  process.stdout.write(`${name.padEnd(14)} ${shown.join(', ')} ms\n`)
}

try {
  for (let i = 0; i < 5; i++) await job()
  for (let round = 0; round < 2; round++) {
    await series('back to back', 0)
    await series(`pause ${PAUSE_MS} ms`, PAUSE_MS)
  }
} finally {
  await service.close()
  await fx.close()
}
