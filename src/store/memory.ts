// In-process store: an LRU of cache entries (bounded by count and by size, per-entry expiry), counters and locks.
// One instance only: nothing here is shared across processes.
import { randomUUID } from 'node:crypto'
import { LRUCache } from 'lru-cache'
import { DEFAULT_CACHE_MEMORY_BYTES } from '../config.ts'
import type { ReadOrLock, Store, UsageCount, WindowHit } from './types.ts'

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
  // Tenants' day and month counters (31 days of history each), apart from the quota's so neither evicts the other.
  const usage = new LRUCache<string, number>({ max: options.maxCounters ?? 1_000_000 })
  // Concurrency slots: by key, the tokens holding one and when their lease lapses.
  const slots = new Map<string, Map<string, number>>()

  function held (key: string): Map<string, number> {
    const now = Date.now()
    const leases = slots.get(key) ?? new Map<string, number>()
    for (const [token, expiresAt] of leases) if (expiresAt <= now) leases.delete(token)
    if (leases.size === 0) slots.delete(key)
    return leases
  }

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
    async countUsage ({ dayKey, monthKey, daily, monthly, dayTtlMs, monthTtlMs, count = 1 }): Promise<UsageCount> {
      const day = usage.get(dayKey) ?? 0
      const month = usage.get(monthKey) ?? 0
      if (daily > 0 && day >= daily) return { refused: 'daily', day, month }
      if (monthly > 0 && month >= monthly) return { refused: 'monthly', day, month }
      usage.set(dayKey, day + count, day === 0 ? { ttl: dayTtlMs } : { noUpdateTTL: true })
      usage.set(monthKey, month + count, month === 0 ? { ttl: monthTtlMs } : { noUpdateTTL: true })
      return { day: day + count, month: month + count }
    },
    async readCounts (keys) {
      return keys.map(key => usage.get(key) ?? 0)
    },
    async takeSlot (key, token, limit, leaseMs) {
      const leases = held(key)
      if (leases.size >= limit) return false
      leases.set(token, Date.now() + leaseMs)
      slots.set(key, leases)
      return true
    },
    async renewSlot (key, token, leaseMs) {
      const leases = held(key)
      if (!leases.has(token)) return false
      leases.set(token, Date.now() + leaseMs)
      return true
    },
    async releaseSlot (key, token) {
      const leases = slots.get(key)
      leases?.delete(token)
      if (leases?.size === 0) slots.delete(key)
    },
    async slotsHeld (key) {
      return held(key).size
    },
    async health () {
      return true
    },
    async close () {
      values.clear()
      counters.clear()
      locks.clear()
      usage.clear()
      slots.clear()
    }
  }
}
