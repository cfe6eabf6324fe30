// Issue 2's benchmark: (a) cache hits through a real listener against a bare Fastify route serving one
// Redis GET of the same value; (b) a cold metadata request against raw undici + metascraper + the same
// image and logo probes, on the same fixture page. Loopback only; bounded in time.
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import Fastify from 'fastify'
import { Redis } from 'ioredis'
import { request } from 'undici'
import { imageSize } from 'image-size'
import createMetascraper from 'metascraper'
import metascraperTitle from 'metascraper-title'
import metascraperDescription from 'metascraper-description'
import metascraperAuthor from 'metascraper-author'
import metascraperPublisher from 'metascraper-publisher'
import metascraperDate from 'metascraper-date'
import metascraperLang from 'metascraper-lang'
import metascraperImage from 'metascraper-image'
import metascraperLogo from 'metascraper-logo'
import metascraperLogoFavicon from 'metascraper-logo-favicon'
import metascraperUrl from 'metascraper-url'
import { loadConfig } from '../src/config.ts'
import { createLogger, logDestination } from '../src/logger.ts'
import { closeContext, createContext } from '../src/context.ts'
import { buildApp } from '../src/app.ts'
import { settleHeap } from '../src/util/heap.ts'
import { cacheKeyOf } from '../src/cache/key.ts'
import { entryKeyOf } from '../src/cache/entries.ts'
import { parseQuery } from '../src/schemas/query.ts'
import { startFixtureServer } from '../test/helpers/fixture-server.ts'
import { assertQuotaCounted, fmt, line, load, median, quotaLeft, startRedis } from './lib.ts'

const KEY = 'bench-key'
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const HIT_ROUNDS = Number(process.env.BENCH_HIT_ROUNDS ?? 3)

/**
 * The two sides of the cold comparison: the raw pipeline (undici GET, metascraper, the image and logo probes in
 * parallel) and a cold request to the service (a MISS) through the same client, so the figure is the service's;
 * ours gives the answer's server-timing header.
 */
export function coldSides (proUrl: string): { raw: (url: string) => Promise<void>, ours: (url: string) => Promise<string> } {
  const metascraper = createMetascraper([
    metascraperTitle(), metascraperDescription(), metascraperAuthor(), metascraperPublisher(), metascraperDate(),
    metascraperLang(), metascraperImage(), metascraperLogo(), metascraperLogoFavicon({ google: false }), metascraperUrl()
  ])
  async function probe (url: string): Promise<unknown> {
    const res = await request(url, { headers: { range: 'bytes=0-65535' } })
    const body = Buffer.from(await res.body.arrayBuffer())
    return { type: res.headers['content-type'], size: body.length, ...imageSize(body) }
  }
  return {
    async raw (url) {
      const res = await request(url)
      const html = await res.body.text()
      const meta = await metascraper({ url, html }) as { image?: string, logo?: string }
      await Promise.all([meta.image, meta.logo].filter((u): u is string => typeof u === 'string').map(probe))
    },
    async ours (url) {
      const res = await request(`${proUrl}/?url=${encodeURIComponent(url)}`, { headers: { 'x-api-key': KEY } })
      await res.body.dump()
      if (res.statusCode !== 200 || res.headers['x-cache-status'] !== 'MISS') throw new Error(`cold request: ${res.statusCode} ${String(res.headers['x-cache-status'])}`)
      return String(res.headers['server-timing'])
    }
  }
}

/** Another checkout's service on `env`, in this process: its own modules, its own context. */
export async function startBase (root: string, env: Record<string, string>): Promise<{ url: string, close (): Promise<void> }> {
  const from = async <T> (file: string): Promise<T> => await import(pathToFileURL(path.resolve(root, 'src', file)).href) as T
  const config = (await from<typeof import('../src/config.ts')>('config.ts')).loadConfig(env)
  const logger = await from<typeof import('../src/logger.ts')>('logger.ts')
  const context = await from<typeof import('../src/context.ts')>('context.ts')
  const ctx = await context.createContext(config, logger.createLogger({ level: 'info', destination: logger.logDestination('/dev/null') }))
  const app = await (await from<typeof import('../src/app.ts')>('app.ts')).buildApp(ctx, { plan: 'pro' })
  const url = await app.listen({ port: 0, host: '127.0.0.1' })
  return { url, close: async () => { await app.close(); await context.closeContext(ctx) } }
}

export async function benchMetadata (): Promise<Record<string, number>> {
  const redis = await startRedis()
  const fx = await startFixtureServer()
  // Logged as in production (info, batched asynchronous writes: logDestination), to /dev/null.
  const sink = logDestination('/dev/null')
  const env = { API_KEYS: KEY, ALLOW_PRIVATE_HOSTS: fx.host, FREE_DAILY_LIMIT: '1000000000', LOG_LEVEL: 'info', STORAGE_SCOPE: 'instance' }
  const config = loadConfig({ ...env, REDIS_URL: redis.url })
  const ctx = await createContext(config, createLogger({ level: 'info', destination: sink }))
  const pro = await buildApp(ctx, { plan: 'pro' })
  const free = await buildApp(ctx, { plan: 'free' })
  const proUrl = await pro.listen({ port: 0, host: '127.0.0.1' })
  const freeUrl = await free.listen({ port: 0, host: '127.0.0.1' })
  settleHeap() // as server.ts does before it listens (util/heap.ts)
  const figures: Record<string, number> = {}
  let base: Awaited<ReturnType<typeof startBase>> | undefined

  try {
    // BENCH_METADATA_PART=hits runs only (a), =cold only (b).
    const part = process.env.BENCH_METADATA_PART
    if (part !== 'cold') {
      // (a) cache hits
      const query = `url=${encodeURIComponent(`${fx.origin}/article/`)}`
      const warm = await fetch(`${proUrl}/?${query}`, { headers: { 'x-api-key': KEY } })
      if (warm.status !== 200) throw new Error(`warm-up failed: ${warm.status}`)
      const options = parseQuery(query, { plan: 'pro', headers: {}, maxTimeout: config.maxTimeout })
      const entryKey = `pagecast:${entryKeyOf(cacheKeyOf(options))}`

      const bareRedis = new Redis(redis.url)
      const bare = Fastify()
      bare.get('/', async (_req, reply) => await reply.type('application/json; charset=utf-8').send(await bareRedis.get(entryKey)))
      const bareUrl = await bare.listen({ port: 0, host: '127.0.0.1' })

      const headers = { 'x-api-key': KEY }
      await load(`${proUrl}/?${query}`, { connections: 10, seconds: 1, headers }) // JIT warm-up
      await load(`${freeUrl}/?${query}`, { connections: 10, seconds: 1 })
      await load(`${bareUrl}/`, { connections: 10, seconds: 1 })
      // Rounds of the six runs side by side, each ratio taken within its round: on a shared machine the rates move
      // by tens of percent from one minute to the next, the ratios of neighbouring runs much less.
      const sides = [
        { name: 'Pro', url: `${proUrl}/?${query}`, headers },
        { name: 'Free', url: `${freeUrl}/?${query}`, headers: {} },
        { name: 'Bare', url: `${bareUrl}/`, headers: {} }
      ]
      const ratios: Record<string, number[]> = { hitRatioPro50: [], hitRatioFree50: [], hitRatioPro1: [], hitRatioFree1: [] }
      for (let round = 0; round < HIT_ROUNDS; round++) {
        for (const connections of [50, 1]) {
          const rps: Record<string, number> = {}
          for (const side of sides) {
            const left = side.name === 'Free' ? await quotaLeft(side.url) : 0
            const result = await load(side.url, { connections, seconds: SECONDS, headers: side.headers })
            if (result.non2xx > 0 || result.errors > 0) throw new Error(`non-2xx answers or errors during the ${side.name} cache-hit run`)
            if (side.name === 'Free') await assertQuotaCounted(side.url, left, result.total, connections)
            rps[side.name] = result.rps
            figures[`hitRps${side.name}${connections}r${round}`] = result.rps
            if (connections === 1) figures[`hitP99${side.name}1r${round}`] = result.p99
          }
          ratios[`hitRatioPro${connections}`]!.push(rps.Pro! / rps.Bare!)
          ratios[`hitRatioFree${connections}`]!.push(rps.Free! / rps.Bare!)
        }
      }
      await bare.close()
      bareRedis.disconnect()
      figures.hitRounds = HIT_ROUNDS
      for (const [name, values] of Object.entries(ratios)) {
        figures[name] = median(values)
        figures[`${name}Min`] = Math.min(...values)
        figures[`${name}Max`] = Math.max(...values)
      }
    }
    if (part === 'hits') return figures

    // (b) cold metadata requests, sequential, distinct URLs, against the raw pipeline on the same page
    const { raw, ours } = coldSides(proUrl)
    // BENCH_METADATA_BASE=<another checkout>: that tree's service (in this process, on the same Redis) runs in the
    // same rounds, for before and after side by side. BENCH_COLD_ROUNDS: the timed rounds (60).
    base = process.env.BENCH_METADATA_BASE === undefined ? undefined : await startBase(process.env.BENCH_METADATA_BASE, { ...env, REDIS_URL: redis.url })
    const before = base === undefined ? undefined : coldSides(base.url).ours
    const rounds = Number(process.env.BENCH_COLD_ROUNDS ?? 60)
    // Warm-up to steady state: the service's path has far more code for the JIT to compile than the raw one.
    for (let i = 0; i < 150; i++) {
      await raw(`${fx.origin}/article/?w=${i}`)
      await ours(`${fx.origin}/article/?w=${i}`)
      await before?.(`${fx.origin}/article/?bw=${i}`)
    }
    const rawTimes: number[] = []
    const ourTimes: number[] = []
    const baseTimes: number[] = []
    for (let i = 0; i < rounds; i++) {
      // Interleaved so that both see the same machine state.
      let t = performance.now()
      await raw(`${fx.origin}/article/?r=${i}`)
      rawTimes.push(performance.now() - t)
      // With a base, the two trees take turns at going first.
      const order = before === undefined ? [ours] : i % 2 === 0 ? [ours, before] : [before, ours]
      for (const side of order) {
        t = performance.now()
        await side(`${fx.origin}/article/?${side === ours ? 'o' : 'b'}=${i}`)
        ;(side === ours ? ourTimes : baseTimes).push(performance.now() - t)
      }
    }
    figures.coldMsOurs = median(ourTimes)
    figures.coldMsRaw = median(rawTimes)
    figures.coldRatio = figures.coldMsOurs / figures.coldMsRaw
    if (before !== undefined) {
      figures.coldMsBase = median(baseTimes)
      figures.coldRatioBase = figures.coldMsBase / figures.coldMsRaw
    }
  } finally {
    await base?.close()
    await pro.close()
    await free.close()
    await closeContext(ctx)
    await fx.close()
    redis.stop()
  }
  return figures
}

export function printMetadata (f: Record<string, number>): void {
  line('## metadata and cache (issues 2 and 14)')
  if (f.hitRounds !== undefined) printHits(f)
  if (f.coldRatio === undefined) return
  line(`(b) cold metadata request: pagecast ${fmt(f.coldMsOurs!)} ms, raw undici + metascraper + probes ${fmt(f.coldMsRaw!)} ms (median)`)
  line(`    ratio ${fmt(f.coldRatio!)} (target <= 1.20)`)
  if (f.coldRatioBase !== undefined) line(`    the base tree (BENCH_METADATA_BASE), same rounds: ${fmt(f.coldMsBase!)} ms, ratio ${fmt(f.coldRatioBase)}`)
}

function printHits (f: Record<string, number>): void {
  line(`(a) cache HIT against a bare Fastify route answering one Redis GET, ${f.hitRounds} rounds side by side (req/s pro / free / bare):`)
  for (let r = 0; r < f.hitRounds!; r++) {
    line(`    round ${r + 1}: 50 connections ${[50, 1].map(c => ['Pro', 'Free', 'Bare'].map(s => fmt(f[`hitRps${s}${c}r${r}`]!, 0)).join(' / ')).join('; 1 connection ')}` +
      ` (1 connection p99 ${['Pro', 'Free', 'Bare'].map(s => fmt(f[`hitP99${s}1r${r}`]!, 0)).join(' / ')} ms)`)
  }
  const ratio = (name: string, target: string): string => `${fmt(f[name]!)} [${fmt(f[`${name}Min`]!)}-${fmt(f[`${name}Max`]!)}] (target >= ${target})`
  line(`    ratio at 50 connections: pro ${ratio('hitRatioPro50', '0.80')}, free ${ratio('hitRatioFree50', '0.80')}`)
  line(`    ratio at 1 connection:   pro ${ratio('hitRatioPro1', '0.70')}, free ${ratio('hitRatioFree1', '0.70')}`)
}
