// Issue 11's `adblock` figures: what loading the bundled filter engine costs at start, and screenshot throughput
// with `adblock` on against off through a real listener (a service process of its own, cold cache, distinct URLs),
// on the fixture article (no ads, no banner: the pure overhead of intercepting every request, the consent script
// and the cosmetic pass). On and off alternate in rounds so drift hits both. Loopback only; every loop is bounded.
import { loadAdblocker } from '../src/adblock/index.ts'
import { startFixtureServer, type FixtureServer } from '../test/helpers/fixture-server.ts'
import { fmt, line, median } from './lib.ts'
import { drive, startService, type Service } from './render.ts'

const JOBS = Number(process.env.BENCH_ADBLOCK_JOBS ?? 24)
const ROUNDS = 3

async function shot (service: Service, fx: FixtureServer, adblock: boolean, tag: string): Promise<void> {
  const params = new URLSearchParams({ url: `${fx.origin}/article/?${tag}`, screenshot: 'true', meta: 'false', waitUntil: 'load', adblock: String(adblock) })
  const res = await fetch(`${service.url}/?${params}`, { headers: { 'x-api-key': 'bench-key' } })
  if (res.status !== 200) throw new Error(`service answered ${res.status}: ${await res.text()}`)
  await res.arrayBuffer()
}

export async function benchAdblock (): Promise<Record<string, number>> {
  const figures: Record<string, number> = {}
  // The engine load, in this process: the first (cold file cache aside) and the median of the next ones.
  const loads: number[] = []
  let heapBefore = process.memoryUsage().heapUsed
  for (let i = 0; i < 4; i++) {
    const blocker = await loadAdblocker()
    loads.push(blocker.stats.loadMs)
    if (i === 0) {
      figures.engineBytes = blocker.stats.engineBytes
      figures.networkFilters = blocker.stats.networkFilters
      figures.cosmeticFilters = blocker.stats.cosmeticFilters
      globalThis.gc?.()
      figures.heapMiB = (process.memoryUsage().heapUsed - heapBefore) / 2 ** 20
      heapBefore = 0
    }
  }
  figures.loadFirstMs = loads[0]!
  figures.loadMedianMs = median(loads.slice(1))

  const fx = await startFixtureServer()
  let tag = 0
  try {
    const service = await startService(fx)
    try {
      for (const concurrency of [1, 4]) {
        const rates: Record<'on' | 'off', number[]> = { on: [], off: [] }
        const latencies: Record<'on' | 'off', number[]> = { on: [], off: [] }
        await drive(4, concurrency, async () => { await shot(service, fx, true, `aw${tag++}`) })
        await drive(4, concurrency, async () => { await shot(service, fx, false, `aw${tag++}`) })
        for (let round = 0; round < ROUNDS; round++) {
          for (const mode of round % 2 === 0 ? ['on', 'off'] as const : ['off', 'on'] as const) {
            const r = await drive(JOBS, concurrency, async () => { await shot(service, fx, mode === 'on', `a${tag++}`) })
            rates[mode].push(r.rate)
            latencies[mode].push(r.latency)
          }
        }
        for (const mode of ['on', 'off'] as const) {
          figures[`c${concurrency}.${mode}.rate`] = median(rates[mode])
          figures[`c${concurrency}.${mode}.latency`] = median(latencies[mode])
        }
      }
    } finally {
      await service.stop()
    }
  } finally {
    await fx.close()
  }
  return figures
}

export function printAdblock (f: Record<string, number>): void {
  line('## adblock (issue 11)')
  line(`engine: ${fmt(f.engineBytes! / 2 ** 20, 1)} MiB serialized, ${f.networkFilters} network and ${f.cosmeticFilters} cosmetic filters; ` +
    `load ${fmt(f.loadFirstMs!, 0)} ms first, ${fmt(f.loadMedianMs!, 0)} ms median after (read + deserialize + consent rules), heap +${fmt(f.heapMiB!, 0)} MiB`)
  line('screenshot of the fixture article | adblock on        | adblock off       | on vs off (target: at most 10% slower)')
  for (const c of [1, 4]) {
    const on = { rate: f[`c${c}.on.rate`]!, latency: f[`c${c}.on.latency`]! }
    const off = { rate: f[`c${c}.off.rate`]!, latency: f[`c${c}.off.latency`]! }
    line(`concurrency ${c}`.padEnd(34) + `| ${fmt(on.rate)}/s ${fmt(on.latency, 0)}ms`.padEnd(20) + `| ${fmt(off.rate)}/s ${fmt(off.latency, 0)}ms`.padEnd(20) +
      `| rate ${fmt(on.rate / off.rate)}, latency ${fmt(on.latency / off.latency)}`)
  }
}
