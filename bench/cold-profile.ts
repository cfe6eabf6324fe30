// Profiling harness for the cold path (issue 14): the cold metadata request of bench/metadata.ts against its raw
// pipeline, warmed up as the bench does, then timed interleaved (with the medians of the service's server-timing
// entries), then the CPU time per request of each side alone; given a file name, it also writes a V8 CPU profile of
// each side alone (`rounds` more requests each). `markdown` puts a cold /markdown of the same 780-byte page in place
// of the metadata request, against bench/extract.ts's baseline (undici GET + turndown behind a bare Fastify route).
// COLD_STORE=memory runs the service on the memory store instead of Redis; COLD_BASE=<another checkout> runs that
// tree's service too (bench/metadata.ts's startBase), in the same rounds, the two trees taking turns at going first. The service logs as in production
// (logDestination: batched asynchronous writes) to /dev/null. Loopback only.
//   sh scripts/node.sh bench/cold-profile.ts metadata|markdown [rounds] [profile.cpuprofile]
import { request } from 'undici'
import { loadConfig } from '../src/config.ts'
import { createLogger, logDestination } from '../src/logger.ts'
import { closeContext, createContext } from '../src/context.ts'
import { buildApp } from '../src/app.ts'
import { settleHeap } from '../src/util/heap.ts'
import { startFixtureServer } from '../test/helpers/fixture-server.ts'
import { coldSides, startBase } from './metadata.ts'
import { startRawMarkdown } from './extract.ts'
import { BENCH_KEY, fmt, median, profiled, startRedis } from './lib.ts'

const what = process.argv[2] === 'markdown' ? 'markdown' : 'metadata'
const rounds = Number(process.argv[3] ?? 200)
const out = process.argv[4]

const redis = await startRedis()
const fx = await startFixtureServer()
const sink = logDestination('/dev/null')
const env = { ...(process.env.COLD_STORE === 'memory' ? {} : { REDIS_URL: redis.url }), API_KEYS: BENCH_KEY, ALLOW_PRIVATE_HOSTS: fx.host, LOG_LEVEL: 'info', STORAGE_SCOPE: 'instance' }
const config = loadConfig(env)
const ctx = await createContext(config, createLogger({ level: 'info', destination: sink }))
const app = await buildApp(ctx, { plan: 'pro' })
const proUrl = await app.listen({ port: 0, host: '127.0.0.1' })
settleHeap() // as server.ts does before it listens (util/heap.ts)
const sides = coldSides(proUrl)
// The markdown baseline: the raw pair behind a bare route (bench/extract.ts's), so that both sides pay the client's HTTP hop.
const { url: bareUrl, close: closeBare } = await startRawMarkdown()
const raw = what === 'metadata'
  ? sides.raw
  : async (url: string): Promise<void> => { await (await request(`${bareUrl}/md?url=${encodeURIComponent(url)}`)).body.text() }
const serviceSide = (serviceUrl: string) => what === 'metadata'
  ? coldSides(serviceUrl).ours
  : async (url: string): Promise<string> => {
    const res = await request(`${serviceUrl}/markdown?url=${encodeURIComponent(url)}&prerender=false`, { headers: { 'x-api-key': BENCH_KEY } })
    await res.body.text()
    if (res.statusCode !== 200 || res.headers['x-cache-status'] !== 'MISS') throw new Error(`cold /markdown: ${res.statusCode}`)
    return String(res.headers['server-timing'])
  }
const ours = serviceSide(proUrl)
const base = process.env.COLD_BASE === undefined ? undefined : await startBase(process.env.COLD_BASE, env)
const before = base === undefined ? undefined : serviceSide(base.url)

const page = `${fx.origin}/article/`
for (let i = 0; i < 300; i++) { await raw(`${page}?w=${i}`); await ours(`${page}?w=${i}`); await before?.(`${page}?bw=${i}`) }
const rawTimes: number[] = []
const ourTimes: number[] = []
const baseTimes: number[] = []
const timings = new Map<string, number[]>()
for (let i = 0; i < rounds; i++) {
  let t = performance.now()
  await raw(`${page}?r=${i}`)
  rawTimes.push(performance.now() - t)
  if (before !== undefined && i % 2 === 1) { t = performance.now(); await before(`${page}?b=${i}`); baseTimes.push(performance.now() - t) }
  t = performance.now()
  const header = await ours(`${page}?o=${i}`)
  ourTimes.push(performance.now() - t)
  if (before !== undefined && i % 2 === 0) { t = performance.now(); await before(`${page}?b=${i}`); baseTimes.push(performance.now() - t) }
  for (const [, name, dur] of header.matchAll(/([\w.-]+);dur=([\d.]+)/g)) timings.set(name!, [...timings.get(name!) ?? [], Number(dur)])
}
process.stdout.write(`${what}: ours ${fmt(median(ourTimes), 3)} ms, raw ${fmt(median(rawTimes), 3)} ms, ratio ${fmt(median(ourTimes) / median(rawTimes), 3)}\n` +
  `  server-timing medians (ms): ${[...timings].map(([name, values]) => `${name} ${fmt(median(values), 3)}`).join(', ')}\n`)
if (before !== undefined) process.stdout.write(`  the base tree (COLD_BASE), same rounds: ${fmt(median(baseTimes), 3)} ms, ratio ${fmt(median(baseTimes) / median(rawTimes), 3)}\n`)

// CPU time of this process per request, each side alone (the client and the fixture server are in it too, the
// same on both sides): steadier than the wall time on a shared machine.
for (const [name, side] of [['ours', ours], ['raw', raw], ...(before === undefined ? [] : [['base', before] as const])] as const) {
  const cpu = process.cpuUsage()
  for (let i = 0; i < rounds; i++) await side(`${page}?${name}c=${i}`)
  const used = process.cpuUsage(cpu)
  process.stdout.write(`  CPU per request, ${name}: ${fmt(used.user / rounds, 0)} µs user + ${fmt(used.system / rounds, 0)} µs system\n`)
}
if (out !== undefined) {
  // One profile per side, each alone: `out` for ours, `out` with `.raw` before its extension for the raw pipeline.
  for (const [name, side, file] of [['p', ours, out], ['q', raw, out.replace(/(\.cpuprofile)?$/, '.raw$1')]] as const) {
    await profiled(file, 100, async () => { for (let i = 0; i < rounds; i++) await side(`${page}?${name}=${i}`) })
  }
}
await closeBare()
await base?.close()
await app.close()
await closeContext(ctx)
await fx.close()
redis.stop()
process.exit(0)
