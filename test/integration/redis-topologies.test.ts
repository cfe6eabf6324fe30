// Redis beyond one node (docs/operations.md#redis): the store contract on a real 3-master Cluster and on a master
// found through Sentinel; and the service on Sentinel through a failover in the middle of a load: while the
// master is gone, free requests are served uncounted (QUOTA_FAIL_MODE=open, the documented fail-open), none fails,
// and once the Sentinel has promoted the replica the quota counts again on the new master.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import pino from 'pino'
import { storeContract } from '../contract/store.contract.ts'
import { createRedisStore } from '../../src/store/redis.ts'
import { createCache, type CacheEntry } from '../../src/cache/entries.ts'
import { createSingleFlight, lockKeyOf } from '../../src/cache/single-flight.ts'
import { loadConfig } from '../../src/config.ts'
import { build, qs, type Built } from '../helpers/build.ts'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'
import { sentinelMasterPort, startCluster, startSentinelSet } from '../helpers/redis-topology.ts'

const log = pino({ level: 'silent' })
type Cluster = Awaited<ReturnType<typeof startCluster>>
type Sentinels = Awaited<ReturnType<typeof startSentinelSet>>

let cluster: Cluster | undefined
let sentinels: Sentinels | undefined

afterAll(async () => {
  await cluster?.close()
  await sentinels?.close()
})

storeContract('redis cluster (3 masters)', async () => {
  cluster ??= await startCluster(3)
  return createRedisStore({ connection: loadConfig({ REDIS_CLUSTER_NODES: cluster.nodes.map(n => `127.0.0.1:${n.port}`).join(','), STORAGE_SCOPE: 'instance' }).redis! }, { log })
})

describe('redis cluster', () => {
  it('spreads keys over every master', async () => {
    cluster ??= await startCluster(3)
    const config = loadConfig({ REDIS_CLUSTER_NODES: cluster.nodes.map(n => `127.0.0.1:${n.port}`).join(','), STORAGE_SCOPE: 'instance' })
    const store = createRedisStore({ connection: config.redis!, prefix: 'spread:' }, { log })
    try {
      for (let i = 0; i < 60; i++) await store.set(`k${i}`, String(i), 60_000)
      for (let i = 0; i < 60; i++) expect(await store.get(`k${i}`)).toBe(String(i))
      const { Redis } = await import('ioredis')
      const perNode = await Promise.all(cluster.nodes.map(async (node) => {
        const direct = new Redis({ host: '127.0.0.1', port: node.port })
        direct.on('error', () => {})
        try { return await direct.dbsize() } finally { direct.disconnect() }
      }))
      for (const count of perNode) expect(count).toBeGreaterThan(0)
    } finally {
      await store.close()
    }
  })
})

describe('the single flight on a redis cluster', () => {
  it('reads or locks, then writes and releases, an entry and its lock in one slot (their hash tag)', async () => {
    cluster ??= await startCluster(3)
    const config = loadConfig({ REDIS_CLUSTER_NODES: cluster.nodes.map(n => `127.0.0.1:${n.port}`).join(','), STORAGE_SCOPE: 'instance' })
    const stores = [createRedisStore({ connection: config.redis! }, { log }), createRedisStore({ connection: config.redis! }, { log })]
    try {
      const [a, b] = stores.map(store => { const cache = createCache(store, { hotTtlMs: 0 }); return { store, cache, flights: createSingleFlight({ store, cache, log }) } })
      const run = { signal: new AbortController().signal, lockTtl: 30_000, since: Date.now() }
      let computed = 0
      // Keys over every master: each entry and its lock together on one, whichever it is.
      for (let i = 0; i < 12; i++) {
        const key = `cluster-flight-${Date.now()}-${i}`
        const read = await a!.flights.read(key, { lockTtl: 30_000 })
        expect(read.lock).toEqual(expect.any(String))
        expect((await b!.flights.read(key, { lockTtl: 30_000 })).lock).toBeNull()
        const entry: CacheEntry = { meta: { createdAt: Date.now(), ttl: 60_000, fetchMode: 'fetch', fetchTime: 1, files: {}, status: 'MISS' }, body: `body ${i}` }
        await a!.flights.run(key, async (_signal, lock) => { computed++; await a!.cache.write(key, entry, lock); return { entry } }, { ...run, claim: read.lock })
        expect(await a!.store.get(lockKeyOf(key))).toBeNull()
        const hit = await b!.flights.read(key, { lockTtl: 30_000 })
        expect(hit).toEqual({ entry })
      }
      expect(computed).toBe(12)
    } finally {
      for (const store of stores) await store.close()
    }
  })
})

storeContract('redis sentinel', async () => {
  sentinels ??= await startSentinelSet()
  return createRedisStore({ connection: loadConfig({ REDIS_SENTINELS: `127.0.0.1:${sentinels.sentinel.port}`, REDIS_SENTINEL_NAME: 'pagecast', STORAGE_SCOPE: 'instance' }).redis! }, { log })
})

describe('the service on Redis Sentinel, through a failover', () => {
  let fx: FixtureServer
  let app: Built

  beforeAll(async () => {
    sentinels ??= await startSentinelSet()
    fx = await startFixtureServer()
    app = await build({
      ALLOW_PRIVATE_HOSTS: fx.host,
      REDIS_SENTINELS: `127.0.0.1:${sentinels.sentinel.port}`,
      REDIS_SENTINEL_NAME: 'pagecast',
      FREE_DAILY_LIMIT: '1000',
      QUOTA_FAIL_MODE: 'open'
    })
  }, 60_000)

  afterAll(async () => {
    await app?.close()
    await fx?.close()
  })

  async function get (i: number) {
    return await app.free.inject({ url: `/?${qs({ url: `${fx.origin}/plain/?n=${i}`, prerender: false })}`, remoteAddress: '198.51.100.77' })
  }

  it('serves every request while the master fails over, and counts the quota on the new master afterwards', async () => {
    const set = sentinels!
    const before = await get(0)
    expect(before.statusCode, before.body).toBe(200)
    const usedBefore = Number(before.headers['x-rate-limit-limit']) - Number(before.headers['x-rate-limit-remaining'])
    expect(usedBefore).toBeGreaterThan(0)

    set.master.kill()
    const statuses: number[] = []
    const deadline = Date.now() + 20_000
    let promoted = false
    for (let i = 1; Date.now() < deadline; i++) {
      statuses.push((await get(i)).statusCode)
      if (!promoted && await sentinelMasterPort(set.sentinel.port).catch(() => set.master.port) === set.replica.port) promoted = true
      // Once promoted, go on until a request is counted again (the client has followed the failover).
      if (promoted) {
        const res = await get(10_000 + i)
        statuses.push(res.statusCode)
        if (res.headers['x-rate-limit-remaining'] !== undefined) break
      }
      await new Promise(resolve => setTimeout(resolve, 100))
    }
    expect(promoted).toBe(true)
    expect(statuses.filter(status => status !== 200)).toEqual([])

    // Counting again, on the replica that became the master: two requests, two more counted.
    const first = await get(50_000)
    const second = await get(50_001)
    const remaining = (res: typeof first): number => Number(res.headers['x-rate-limit-remaining'])
    expect(first.headers['x-rate-limit-remaining']).toBeDefined()
    expect(remaining(first) - remaining(second)).toBe(1)
  }, 60_000)
})
