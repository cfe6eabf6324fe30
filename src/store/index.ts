// The store: cache entries, quota counters and single-flight locks, behind one small interface.
// Two backends pass the same contract suite: Redis (one node, Sentinel or Cluster) and in-memory (the embedded default).
// This file picks one; the contract is types.ts, which the backends import (never this file), re-exported here.
import type { Logger } from 'pino'
import type { RedisConnection } from '../config.ts'
import { createMemoryStore } from './memory.ts'
import { createRedisStore } from './redis.ts'
import type { Store } from './types.ts'

export type { ReadOrLock, Store, UsageCount, UsageKeys, WindowHit } from './types.ts'

export interface StoreOptions {
  redis: RedisConnection | undefined
  /** Largest number of cache entries kept in memory (docs/api.md §7: 1000). */
  memoryMaxEntries?: number
  /** What the cache entries kept in memory may weigh in all (CACHE_MEMORY_BYTES). */
  memoryMaxBytes?: number
}

export function createStore (options: StoreOptions, deps: { log: Logger }): Store {
  if (options.redis !== undefined) return createRedisStore({ connection: options.redis }, deps)
  return createMemoryStore({ maxEntries: options.memoryMaxEntries ?? 1000, ...(options.memoryMaxBytes === undefined ? {} : { maxBytes: options.memoryMaxBytes }) })
}
