// The single flight across instances (docs/api.md §7) on a real redis-server: two instances' flights on one store,
// as two replicas have. The lock is a lease its holder renews: a computation longer than the lease keeps it (the
// other instance waits and takes the leader's entry), and the lock of a holder that died (its store connection
// gone, so it renews nothing) lapses within a few seconds, after which the other instance computes itself.
import { afterEach, describe, expect, inject, it } from 'vitest'
import pino from 'pino'
import { createRedisStore } from '../../src/store/redis.ts'
import { createCache, type CacheEntry } from '../../src/cache/entries.ts'
import { createSingleFlight, type SingleFlight } from '../../src/cache/single-flight.ts'
import type { Store } from '../../src/store/index.ts'

const log = pino({ level: 'silent' })
// Long enough that a renewal (every third of it) late by a loaded machine's stall does not lapse the lease: at 600 ms
// the first test failed about one run in seven at a load average of 13.
const LEASE_MS = 1000
const stores: Store[] = []

function instance (): { store: Store, flights: SingleFlight, cache: ReturnType<typeof createCache> } {
  const store = createRedisStore({ connection: { kind: 'node', url: inject('redisUrl') }, prefix: 'pagecast-sf-test:' }, { log })
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
    // A store whose release takes 2 s (a slow round trip): the flight must not wait for it.
    let release: Promise<void> | undefined
    const slow = Object.assign(Object.create(a.store) as Store, {
      releaseLock: async (lockKey: string, token: string) => {
        release = new Promise<void>(resolve => setTimeout(resolve, 2000)).then(async () => { await a.store.releaseLock(lockKey, token) })
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
    expect(Date.now() - started).toBeLessThan(1000)
    expect(await a.store.get(`lock:${key}`)).not.toBeNull()
    await release
    expect(await a.store.get(`lock:${key}`)).toBeNull()

    // With the store as it is, a lock on the key asked for right after the flight comes after its release.
    const b = instance()
    const next = `${key}-next`
    await b.flights.run(next, async () => ({ entry: entry('first') }), { signal: new AbortController().signal, lockTtl: 30_000, since: started })
    expect(await b.store.acquireLock(`lock:${next}`, 1000)).toEqual(expect.any(String))
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
