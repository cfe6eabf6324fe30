// Scale-out's benchmark (docs/scaling.md): 1 and 3 real instances (processes) on one redis-server, measured in the
// same run: cache-hit throughput (autocannon, one load process per instance, the connections split between them),
// screenshot throughput (distinct pages, a fixed number of client workers spread over the instances), the Redis
// commands each kind of request costs (INFO commandstats before and after), and each instance's memory (PSS of the
// process tree, Chromium included) after the screenshots. Loopback only; bounded in time.
import { execFile } from 'node:child_process'
import os from 'node:os'
import { promisify } from 'node:util'
import { request } from 'undici'
import { startFixtureServer, type FixtureServer } from '../test/helpers/fixture-server.ts'
import { startInstance, stopInstances, type Instance } from '../test/helpers/instances.ts'
import { fmt, line, load, startRedis, treePss } from './lib.ts'

const run = promisify(execFile)
const KEY = 'bench-key'
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const CONNECTIONS = 48
const SHOT_WORKERS = 6
const BROWSER_CONCURRENCY = 2

export interface ScaleFigures {
  cores: number
  rows: Array<{ instances: number, hitRps: number, shotsPerSecond: number, pssMiB: number }>
  /** Redis commands per request, by kind. */
  redisOps: { hit: number, freeHit: number, miss: number, screenshot: number }
}

async function commandCount (port: string): Promise<number> {
  const { stdout } = await run('redis-cli', ['-p', port, 'INFO', 'commandstats'])
  let total = 0
  for (const match of stdout.matchAll(/^cmdstat_[^:]+:calls=(\d+)/gm)) total += Number(match[1])
  // This INFO call is counted from the next INFO on: the callers take one off.
  return total
}

async function get (url: string, headers: Record<string, string> = {}): Promise<number> {
  const res = await request(url, { headers })
  await res.body.dump()
  return res.statusCode
}

async function screenshotsPerSecond (instances: readonly Instance[], fx: FixtureServer, tag: string): Promise<number> {
  let done = 0
  let n = 0
  const until = performance.now() + SECONDS * 1000
  const started = performance.now()
  await Promise.all(Array.from({ length: SHOT_WORKERS }, async (_, worker) => {
    while (performance.now() < until) {
      const instance = instances[(worker + n++) % instances.length]!
      const page = encodeURIComponent(`${fx.origin}/article/?${tag}=${n}`)
      if (await get(`${instance.pro}/?url=${page}&screenshot&meta=false&prerender=true`, { 'x-api-key': KEY }) === 200) done++
    }
  }))
  return done / ((performance.now() - started) / 1000)
}

async function measure (count: number, fx: FixtureServer, redisUrl: string): Promise<{ row: ScaleFigures['rows'][number], ops?: ScaleFigures['redisOps'] }> {
  const instances: Instance[] = []
  try {
    for (let i = 0; i < count; i++) {
      // No S3: the instances share the working directory's ./storage, a folder every one of them mounts
      // (the storage rule, docs/operations.md#storage-rule).
      instances.push(await startInstance({
        ALLOW_PRIVATE_HOSTS: fx.host, REDIS_URL: redisUrl, STORAGE_SCOPE: 'shared', API_KEYS: KEY, FREE_DAILY_LIMIT: '0', BROWSER_CONCURRENCY: String(BROWSER_CONCURRENCY)
      }))
    }
    const page = encodeURIComponent(`${fx.origin}/article/`)
    const path = `/?url=${page}&prerender=false`
    for (const instance of instances) await get(`${instance.pro}${path}`, { 'x-api-key': KEY })
    // Warm-up, then the measured run: one autocannon per instance at once.
    await Promise.all(instances.map(async i => await load(`${i.pro}${path}`, { connections: 8, seconds: 1, headers: { 'x-api-key': KEY } })))
    const hits = await Promise.all(instances.map(async i => await load(`${i.pro}${path}`, { connections: Math.round(CONNECTIONS / count), seconds: SECONDS, headers: { 'x-api-key': KEY } })))
    const hitRps = hits.reduce((sum, r) => sum + r.rps, 0)
    await screenshotsPerSecond(instances, fx, `warm${count}`)
    const shotsPerSecond = await screenshotsPerSecond(instances, fx, `shot${count}`)
    const pssMiB = instances.reduce((sum, i) => sum + treePss(i.child.pid ?? 0), 0) / count

    let ops: ScaleFigures['redisOps'] | undefined
    if (count === 1) {
      const port = new URL(redisUrl).port
      const perRequest = async (n: number, one: (i: number) => Promise<unknown>): Promise<number> => {
        const before = await commandCount(port)
        for (let i = 0; i < n; i++) await one(i)
        return (await commandCount(port) - before - 1) / n
      }
      const instance = instances[0]!
      ops = {
        hit: await perRequest(50, async () => await get(`${instance.pro}${path}`, { 'x-api-key': KEY })),
        freeHit: 0,
        miss: await perRequest(20, async i => await get(`${instance.pro}/?url=${encodeURIComponent(`${fx.origin}/article/?ops=${i}`)}&prerender=false`, { 'x-api-key': KEY })),
        screenshot: await perRequest(5, async i => await get(`${instance.pro}/?url=${encodeURIComponent(`${fx.origin}/article/?opshot=${i}`)}&screenshot&meta=false`, { 'x-api-key': KEY }))
      }
    }
    return { row: { instances: count, hitRps, shotsPerSecond, pssMiB }, ...(ops === undefined ? {} : { ops }) }
  } finally {
    await stopInstances(instances)
  }
}

/** The free listener's hit, which also counts the quota in Redis. */
async function freeHitOps (fx: FixtureServer, redisUrl: string): Promise<number> {
  const instance = await startInstance({ ALLOW_PRIVATE_HOSTS: fx.host, REDIS_URL: redisUrl, STORAGE_SCOPE: 'instance', FREE_DAILY_LIMIT: '100000' })
  try {
    const url = `${instance.free}/?url=${encodeURIComponent(`${fx.origin}/article/`)}&prerender=false`
    await get(url)
    const port = new URL(redisUrl).port
    const before = await commandCount(port)
    for (let i = 0; i < 50; i++) await get(url)
    return (await commandCount(port) - before - 1) / 50
  } finally {
    await stopInstances([instance])
  }
}

export async function benchScale (): Promise<ScaleFigures> {
  const fx = await startFixtureServer()
  const redis = await startRedis()
  try {
    const one = await measure(1, fx, redis.url)
    const three = await measure(3, fx, redis.url)
    const ops = one.ops!
    ops.freeHit = await freeHitOps(fx, redis.url)
    return { cores: os.availableParallelism(), rows: [one.row, three.row], redisOps: ops }
  } finally {
    redis.stop()
    await fx.close()
  }
}

export function printScale (f: ScaleFigures): void {
  line(`## scale-out (${f.cores} cores; instances on one redis-server, BROWSER_CONCURRENCY=${BROWSER_CONCURRENCY} each)`)
  for (const row of f.rows) {
    line(`${row.instances} instance(s): cache hits ${fmt(row.hitRps, 0)} req/s (${CONNECTIONS} connections), screenshots ${fmt(row.shotsPerSecond)}/s (${SHOT_WORKERS} clients), ${fmt(row.pssMiB, 0)} MiB per instance`)
  }
  const [a, b] = f.rows
  if (a !== undefined && b !== undefined) line(`3 vs 1: hits x${fmt(b.hitRps / a.hitRps)}, screenshots x${fmt(b.shotsPerSecond / a.shotsPerSecond)}`)
  line(`Redis commands per request: pro hit ${fmt(f.redisOps.hit, 1)}, free hit ${fmt(f.redisOps.freeHit, 1)}, miss (fetch) ${fmt(f.redisOps.miss, 1)}, screenshot miss ${fmt(f.redisOps.screenshot, 1)}`)
}
