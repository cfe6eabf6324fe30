// In-process store: an LRU of cache entries (bounded by count and by size, per-entry expiry), counters and locks.
// One instance only: nothing here is shared across processes.
import { randomUUID } from 'node:crypto'
import { LRUCache } from 'lru-cache'
import { DEFAULT_CACHE_MEMORY_BYTES } from '../config.ts'
import type { ReadOrLock, Store, WindowHit } from './types.ts'

interface Counter { count: number, resetAt: number }

export interface MemoryStoreOptions {
  maxEntries: number
  /**
   * What the values may weigh in all, counted in characters of key and value (a byte each for ASCII text): the least
   * recently used go first, and a value larger than this on its own is not kept (CACHE_MEMORY_BYTES).
   */
  maxBytes?: number
  maxCounters?: number
}

export function createMemoryStore (options: MemoryStoreOptions): Store {
  const values = new LRUCache<string, string>({
    max: options.maxEntries,
    maxSize: options.maxBytes ?? DEFAULT_CACHE_MEMORY_BYTES,
    sizeCalculation: (value, key) => value.length + key.length,
    ttlAutopurge: false
  })
  // Counters live apart from cache entries so that cache pressure never resets anybody's quota.
  const counters = new LRUCache<string, Counter>({ max: options.maxCounters ?? 100_000 })
  const locks = new Map<string, { token: string, expiresAt: number }>()

  function acquire (key: string, ttlMs: number): string | null {
    const now = Date.now()
    const held = locks.get(key)
    if (held !== undefined && held.expiresAt > now) return null
    const token = randomUUID()
    locks.set(key, { token, expiresAt: now + ttlMs })
    return token
  }

  return {
    kind: 'memory',
    async get (key) {
      return values.get(key) ?? null
    },
    async set (key, value, ttlMs) {
      values.set(key, value, { ttl: Math.max(1, Math.round(ttlMs)) })
    },
    async del (key) {
      values.delete(key)
    },
    async hitWindow (key, limit, windowMs): Promise<WindowHit> {
      const now = Date.now()
      let counter = counters.get(key)
      if (counter === undefined || counter.resetAt <= now) {
        counter = { count: 0, resetAt: now + windowMs }
        counters.set(key, counter, { ttl: windowMs })
      }
      if (counter.count >= limit) return { allowed: false, count: counter.count, resetAt: counter.resetAt }
      counter.count += 1
      return { allowed: true, count: counter.count, resetAt: counter.resetAt }
    },
    async acquireLock (key, ttlMs) {
      return acquire(key, ttlMs)
    },
    async readOrLock (key, lockKey, ttlMs): Promise<ReadOrLock> {
      const value = values.get(key)
      return value === undefined ? { value: null, token: acquire(lockKey, ttlMs) } : { value }
    },
    async setAndRelease (key, value, ttlMs, lockKey, token) {
      values.set(key, value, { ttl: Math.max(1, Math.round(ttlMs)) })
      if (locks.get(lockKey)?.token === token) locks.delete(lockKey)
    },
    async releaseLock (key, token) {
      if (locks.get(key)?.token === token) locks.delete(key)
    },
    async renewLock (key, token, ttlMs) {
      const held = locks.get(key)
      const now = Date.now()
      if (held === undefined || held.token !== token || held.expiresAt <= now) return false
      held.expiresAt = now + ttlMs
      return true
    },
    async health () {
      return true
    },
    async close () {
      values.clear()
      counters.clear()
      locks.clear()
    }
  }
}
