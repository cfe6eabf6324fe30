// The in-process copy kept in front of a shared store: hot keys skip the round trip, for a bounded time.
import { describe, expect, inject, it } from 'vitest'
import pino from 'pino'
import { createRedisStore } from '../../src/store/redis.ts'
import { createMemoryStore } from '../../src/store/memory.ts'
import { createCache, type CacheEntry } from '../../src/cache/entries.ts'
import type { Store } from '../../src/store/index.ts'

function counting (store: Store): Store & { gets: number } {
  const wrapped = Object.assign(Object.create(store) as Store, { gets: 0 })
  wrapped.get = async (key: string) => { wrapped.gets++; return await store.get(key) }
  return wrapped as Store & { gets: number }
}

const entry = (createdAt: number): CacheEntry => ({ meta: { createdAt, ttl: 60_000, fetchMode: 'fetch', fetchTime: 1, files: {}, status: 'MISS' }, body: '{}' })

describe('hot cache', () => {
  it('answers repeated reads in process, for at most hotTtlMs, and shared reads always ask Redis', async () => {
    const redis = createRedisStore({ connection: { kind: 'node', url: inject('redisUrl') }, prefix: `hot${Date.now()}:` }, { log: pino({ level: 'silent' }) })
    const store = counting(redis)
    const a = createCache(store, { hotTtlMs: 150 })
    const b = createCache(store, { hotTtlMs: 150 })
    try {
      await a.write('k', entry(1))
      expect((await b.read('k'))?.meta.createdAt).toBe(1)
      const gets = store.gets
      expect((await b.read('k'))?.meta.createdAt).toBe(1)
      expect(store.gets).toBe(gets)
      // Another instance replaces the entry: b sees it once its copy lapses, and at once when it asks Redis.
      await a.write('k', entry(2))
      expect((await b.read('k', { shared: true }))?.meta.createdAt).toBe(2)
      expect(store.gets).toBe(gets + 1)
      await new Promise(r => setTimeout(r, 200))
      expect((await b.read('k'))?.meta.createdAt).toBe(2)
    } finally {
      await redis.close()
    }
  })

  it('holds parsed entries over the in-memory store too, and a write there replaces the copy at once', async () => {
    const store = counting(createMemoryStore({ maxEntries: 10 }))
    const cache = createCache(store, { hotTtlMs: 150 })
    await cache.write('k', entry(1))
    expect((await cache.read('k'))?.meta.createdAt).toBe(1)
    expect(store.gets).toBe(0)
    await cache.write('k', entry(2))
    expect(cache.held('k')?.meta.createdAt).toBe(2)
    expect((await cache.read('k'))?.meta.createdAt).toBe(2)
    expect(store.gets).toBe(0)
    // Shared reads still ask the store; once the copy lapses, nothing is held until the next read.
    expect((await cache.read('k', { shared: true }))?.meta.createdAt).toBe(2)
    expect(store.gets).toBe(1)
    await new Promise(r => setTimeout(r, 200))
    expect(cache.held('k')).toBeUndefined()
    expect((await cache.read('k'))?.meta.createdAt).toBe(2)
    expect(store.gets).toBe(2)
    expect(cache.held('k')?.meta.createdAt).toBe(2)
  })

  it('holds nothing when hotTtlMs is 0', async () => {
    const store = counting(createMemoryStore({ maxEntries: 10 }))
    const cache = createCache(store, { hotTtlMs: 0 })
    await cache.write('k', entry(1))
    await cache.read('k')
    await cache.read('k')
    expect(store.gets).toBe(2)
    expect(cache.held('k')).toBeUndefined()
  })
})
