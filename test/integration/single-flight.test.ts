// The single flight across instances (docs/api.md §7) on a real redis-server: two instances' flights on one store,
// as two replicas have. The lock is a lease its holder renews: a computation longer than the lease keeps it (the
// other instance waits and takes the leader's entry), and the lock of a holder that died (its store connection
// gone, so it renews nothing) lapses within a few seconds, after which the other instance computes itself.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import pino from 'pino'
import { Redis } from 'ioredis'
import { createRedisStore } from '../../src/store/redis.ts'
import { createCache, type CacheEntry } from '../../src/cache/entries.ts'
import { createSingleFlight, lockKeyOf, type SingleFlight } from '../../src/cache/single-flight.ts'
import type { Store } from '../../src/store/index.ts'
import { cacheKeyOf } from '../../src/cache/key.ts'
import { parseQuery } from '../../src/schemas/query.ts'
import { build, qs } from '../helpers/build.ts'
import { startFixtureServer } from '../helpers/fixture-server.ts'
import { monitorRedis } from '../helpers/redis-monitor.ts'
import { spawn } from 'node:child_process'
import net from 'node:net'

/** A redis-server of this file's own on a free port. */
async function startOwnRedis (): Promise<{ url: string, stop: () => void }> {
  const port = await new Promise<number>((resolve, reject) => {
    const server = net.createServer().once('error', reject).listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => { resolve(port) })
    })
  })
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' })
  const url = `redis://127.0.0.1:${port}`
  const probe = new Redis(url, { lazyConnect: true, retryStrategy: () => 50, maxRetriesPerRequest: null })
  await probe.ping()
  probe.disconnect()
  return { url, stop: () => { child.kill('SIGKILL') } }
}

// The whole file runs on a redis-server of its own: MONITOR shows every client's commands, and the run's shared Redis
// has other files' instances (their job workers) talking to it.
let own: { url: string, stop: () => void }
beforeAll(async () => { own = await startOwnRedis() })
afterAll(() => { own?.stop() })

const log = pino({ level: 'silent' })
const PREFIX = 'pagecast-sf-test:'
// Long enough that a renewal (every third of it) late by a loaded machine's stall does not lapse the lease: at 600 ms
// the first test failed about one run in seven at a load average of 13.
const LEASE_MS = 1000
const stores: Store[] = []

function instance (): { store: Store, flights: SingleFlight, cache: ReturnType<typeof createCache> } {
  const store = createRedisStore({ connection: { kind: 'node', url: own.url }, prefix: PREFIX }, { log })
  stores.push(store)
  const cache = createCache(store, { hotTtlMs: 0 })
  return { store, cache, flights: createSingleFlight({ store, cache, log, pollMs: 20, leaseMs: LEASE_MS }) }
}

afterEach(async () => {
  for (const store of stores.splice(0)) await store.close().catch(() => {})
})

function entry (body: string): CacheEntry {
  return { meta: { createdAt: Date.now(), ttl: 60_000, fetchMode: 'fetch', fetchTime: 1, files: {}, status: 'MISS' }, body }
}

describe('single flight across instances', () => {
  it('keeps the lock while the leader computes past its lease: the follower takes the leader\'s entry', async () => {
    const key = `renewed-${Date.now()}`
    const a = instance()
    const b = instance()
    const since = Date.now()
    let computedByB = 0
    const leader = a.flights.run(key, async () => {
      await new Promise(r => setTimeout(r, LEASE_MS * 4))
      const written = entry('from a')
      await a.cache.write(key, written)
      return { entry: written }
    }, { signal: new AbortController().signal, lockTtl: 30_000, since })
    await new Promise(r => setTimeout(r, 50))
    const follower = await b.flights.run(key, async () => { computedByB++; return { entry: entry('from b') } },
      { signal: new AbortController().signal, lockTtl: 30_000, since })
    expect((await leader).computedHere).toBe(true)
    expect(follower.computedHere).toBe(false)
    expect(follower.entry.body).toBe('from a')
    expect(computedByB).toBe(0)
  })

  it('answers without waiting for the lock\'s release, which still comes before whatever the instance asks next', async () => {
    const key = `released-${Date.now()}`
    const a = instance()
    // A store whose release takes 8 s (a slow round trip): the flight must not wait for it.
    let release: Promise<void> | undefined
    const slow = Object.assign(Object.create(a.store) as Store, {
      releaseLock: async (lockKey: string, token: string) => {
        release = new Promise<void>(resolve => setTimeout(resolve, 8000)).then(async () => { await a.store.releaseLock(lockKey, token) })
        await release
      }
    })
    const flights = createSingleFlight({ store: slow, cache: a.cache, log, pollMs: 20, leaseMs: LEASE_MS })
    const started = Date.now()
    const flight = await flights.run(key, async () => {
      const written = entry('from a')
      await a.cache.write(key, written)
      return { entry: written }
    }, { signal: new AbortController().signal, lockTtl: 30_000, since: started })
    expect(flight.computedHere).toBe(true)
    expect(Date.now() - started).toBeLessThan(5000)
    expect(await a.store.get(lockKeyOf(key))).not.toBeNull()
    await release
    expect(await a.store.get(lockKeyOf(key))).toBeNull()

    // With the store as it is, a lock on the key asked for right after the flight comes after its release.
    const b = instance()
    const next = `${key}-next`
    await b.flights.run(next, async () => ({ entry: entry('first') }), { signal: new AbortController().signal, lockTtl: 30_000, since: started })
    expect(await b.store.acquireLock(lockKeyOf(next), 1000)).toEqual(expect.any(String))
  })

  it('takes over within a few leases when the holder dies mid-computation', async () => {
    const key = `dead-${Date.now()}`
    const a = instance()
    const b = instance()
    const since = Date.now()
    // The holder starts a computation that never ends, then loses its store for good (as a killed process does).
    void a.flights.run(key, async () => await new Promise<never>(() => {}), { signal: new AbortController().signal, lockTtl: 30_000, since })
      .catch(() => {})
    await new Promise(r => setTimeout(r, 50))
    await a.store.close()
    const started = Date.now()
    const taken = await b.flights.run(key, async () => ({ entry: entry('from b') }), { signal: AbortSignal.timeout(20_000), lockTtl: 30_000, since })
    const waited = Date.now() - started
    expect(taken.computedHere).toBe(true)
    expect(taken.entry.body).toBe('from b')
    // Not the 30 s the lock would have lived without a lease.
    expect(waited).toBeLessThan(LEASE_MS * 3)
    expect(waited).toBeGreaterThan(LEASE_MS / 3)
  })
})

/**
 * The commands clients send to the shared redis-server that name `key` (MONITOR; those a script runs are left out),
 * as [command, …the rest without the prefix] (a script's EVAL or EVALSHA as `script`: ioredis sends EVAL the first time
 * on a connection). settled() waits until the server has seen everything sent before it.
 */
async function watch (key: string, url = own.url): Promise<{ settled (): Promise<string[][]>, stop (): void }> {
  const monitor = await monitorRedis(url)
  const seen: string[][] = []
  monitor.on(({ args, source }) => {
    if (source === 'lua' || !args.some(a => a.includes(key))) return
    const [name, ...rest] = args.map(a => a.replaceAll(PREFIX, ''))
    seen.push([/^eval(sha)?$/i.test(name!) ? 'script' : name!.toLowerCase(), ...rest])
  })
  const marker = new Redis(url)
  let n = 0
  return {
    async settled () {
      const mark = `${key}-settled-${n++}`
      await marker.get(mark)
      // Up to 10 s for MONITOR to show the marker: it lags on a loaded machine.
      for (let i = 0; i < 1000 && !seen.some(c => c.includes(mark)); i++) await new Promise(r => setTimeout(r, 10))
      // A lease renewal (a script naming the lock alone) comes once a third of a lease while a computation runs:
      // how many depends on the machine's speed, not on the round trips counted here.
      return seen.filter(c => !c.some(a => a.includes('-settled-')) && !(c[0] === 'script' && !c.some(a => a.includes(`cache:{${key}}`))))
    },
    stop () { monitor.stop(); marker.disconnect() }
  }
}

describe('a follower that finds the lock gone', () => {
  it('takes the entry written between its two reads rather than computing again', async () => {
    const key = `crossed-${Date.now()}`
    const a = instance()
    const since = Date.now()
    const token = await a.store.acquireLock(lockKeyOf(key), 30_000)
    expect(token).toEqual(expect.any(String))
    // Another instance's leader writes its entry and releases its lock just after this follower's entry read, before
    // it asks for the lock: the follower's store answers the lock's read once that has happened.
    const racing = Object.assign(Object.create(a.store) as Store, {
      get: async (k: string) => {
        if (k === lockKeyOf(key)) {
          await a.cache.write(key, entry('from the leader'))
          await a.store.releaseLock(lockKeyOf(key), token!)
        }
        return await a.store.get(k)
      }
    })
    const flights = createSingleFlight({ store: racing, cache: a.cache, log, pollMs: 20, leaseMs: LEASE_MS })
    let computed = 0
    const flight = await flights.run(key, async () => { computed++; return { entry: entry('computed again') } },
      { signal: new AbortController().signal, lockTtl: 30_000, since })
    expect(computed).toBe(0)
    expect(flight).toMatchObject({ computedHere: false, entry: { body: 'from the leader' } })
  })
})

describe('the read before the flight (one round trip for a miss)', () => {
  const run = { signal: new AbortController().signal, lockTtl: 30_000 }

  it('takes the lock in the read of a miss and releases it in the entry\'s write: one command before the computation, one after', async () => {
    const key = `cold-${Date.now()}`
    const a = instance()
    const watched = await watch(key)
    try {
      const read = await a.flights.read(key, { lockTtl: 30_000 })
      expect(read).toEqual({ entry: undefined, lock: expect.any(String) })
      let before: string[][] = []
      let held: string | null = null
      const flight = await a.flights.run(key, async (_signal, lock) => {
        before = await watched.settled()
        held = await a.store.get(lockKeyOf(key))
        const written = entry('cold')
        await a.cache.write(key, written, lock)
        return { entry: written }
      }, { ...run, since: Date.now(), claim: read.lock })
      expect(flight.computedHere).toBe(true)
      expect(held).toBe(read.lock)
      expect(before.map(c => c[0])).toEqual(['script'])
      expect(before[0]).toEqual(expect.arrayContaining([`cache:{${key}}`, `lock:{${key}}`]))
      // Released with the write, before the flight's answer: nothing comes after it.
      expect(await a.store.get(lockKeyOf(key))).toBeNull()
      const all = await watched.settled()
      expect(all.map(c => c[0])).toEqual(['script', 'get', 'script', 'get'])
      expect(all[2]).toEqual(expect.arrayContaining([`cache:{${key}}`, `lock:{${key}}`, read.lock]))
      expect(await a.store.get(`cache:{${key}}`)).toMatch(/\ncold$/)
    } finally {
      watched.stop()
    }
  })

  it('takes no lock when the read finds the entry in the store', async () => {
    const key = `hit-${Date.now()}`
    const a = instance()
    const b = instance()
    await a.cache.write(key, entry('stored'))
    const watched = await watch(key)
    try {
      const read = await b.flights.read(key, { lockTtl: 30_000 })
      expect(read.entry?.body).toBe('stored')
      expect(read.lock).toBeUndefined()
      expect(await b.store.get(lockKeyOf(key))).toBeNull()
      expect((await watched.settled()).map(c => c[0])).toEqual(['script', 'get'])
    } finally {
      watched.stop()
    }
  })

  it('computes once for concurrent cold callers on two instances', async () => {
    const key = `two-${Date.now()}`
    const instances = [instance(), instance()]
    const since = Date.now()
    let computed = 0
    const flights = await Promise.all(instances.flatMap(i => [0, 1, 2].map(async () => {
      const read = await i.flights.read(key, { lockTtl: 30_000 })
      return await i.flights.run(key, async () => {
        computed++
        await new Promise(r => setTimeout(r, 100))
        const written = entry('once')
        await i.cache.write(key, written)
        return { entry: written }
      }, { ...run, since, claim: read.lock })
    })))
    expect(computed).toBe(1)
    expect(flights.every(f => f.entry.body === 'once')).toBe(true)
    expect(flights.filter(f => f.computedHere)).toHaveLength(1)
  })

  it('gives up a lock its read took when a flight of the same key started here in between (reads that crossed)', async () => {
    const key = `crossed-${Date.now()}`
    const a = instance()
    const since = Date.now()
    const [first, second] = await Promise.all([a.flights.read(key, { lockTtl: 30_000 }), a.flights.read(key, { lockTtl: 30_000 })])
    const taken = [first!, second!].find(r => typeof r.lock === 'string')!
    const held = [first!, second!].find(r => r.lock === null)!
    let computed = 0
    const compute = async (): Promise<{ entry: CacheEntry }> => {
      computed++
      const written = entry('crossed')
      await a.cache.write(key, written)
      return { entry: written }
    }
    // The read that found the lock held starts the flight here (it follows); the one holding the lock joins it.
    const follower = a.flights.run(key, compute, { ...run, since, claim: held.lock })
    const joined = a.flights.run(key, compute, { ...run, since, claim: taken.lock })
    const flights = await Promise.all([follower, joined])
    expect(computed).toBe(1)
    expect(flights.map(f => f.entry.body)).toEqual(['crossed', 'crossed'])
  })
})

describe('a cold request to the service on Redis', () => {
  it('asks Redis twice for a miss (read or lock, then write and release), once for a hit read from Redis, not at all for a held one', async () => {
    const fx = await startFixtureServer()
    const env = { ALLOW_PRIVATE_HOSTS: fx.host, API_KEYS: 'k', REDIS_URL: own.url, JOB_CONCURRENCY: '0' }
    const [one, two] = [await build(env), await build(env)]
    // As a readiness probe would: a first connection that timed out while the instance was starting on a loaded
    // machine (its event loop busy) leaves the store away until ioredis reconnects, and the first request a plain miss.
    await vi.waitFor(async () => { expect([await one.ctx.store.health(), await two.ctx.store.health()]).toEqual([true, true]) }, { timeout: 30_000, interval: 100 })
    const query = qs({ url: `${fx.origin}/plain/?sf=${Date.now()}` })
    const key = cacheKeyOf(parseQuery(query, { plan: 'pro', headers: {}, maxTimeout: one.config.maxTimeout }))
    const watched = await watch(key, own.url)
    const get = async (app: typeof one): Promise<string | undefined> =>
      (await app.pro.inject({ url: `/?${query}`, headers: { 'x-api-key': 'k' } })).headers['x-cache-status'] as string | undefined
    try {
      expect(await get(one)).toBe('MISS')
      const miss = await watched.settled()
      expect(miss.map(c => c[0])).toEqual(['script', 'script'])
      for (const command of miss) expect(command).toEqual(expect.arrayContaining([`pagecast:cache:{${key}}`, `pagecast:lock:{${key}}`]))
      expect(await get(one)).toBe('HIT')
      expect(await watched.settled()).toHaveLength(2)
      // Another instance reads it from Redis: one script, which finds the entry and takes no lock.
      expect(await get(two)).toBe('HIT')
      expect((await watched.settled()).map(c => c[0])).toEqual(['script', 'script', 'script'])
      expect(await one.ctx.store.get(lockKeyOf(key))).toBeNull()
    } finally {
      watched.stop()
      await one.close()
      await two.close()
      await fx.close()
    }
  })
})
