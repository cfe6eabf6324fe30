// The job system's own Redis connections (BullMQ needs clients without a key prefix and with no per-command retry
// limit, unlike the store's): one node by URL, a Sentinel-watched master, or a Cluster, as REDIS_* configure them.
// Every key of the job system starts with the hash tag `{pagecast}`, so on a Cluster all of them live in one slot and
// the Lua scripts and BullMQ's own scripts may touch several at once.
import type { Cluster, Redis } from 'ioredis'
import { connectRedis } from '../store/redis-connect.ts'
import type { RedisConnection } from '../config.ts'

/** The hash-tagged prefix of every job key (BullMQ's `prefix` too). */
export const JOBS_PREFIX = '{pagecast}'

/** A new client for `connection`; BullMQ workers block on theirs, so each user gets its own. */
export function connectJobs (connection: RedisConnection): Redis | Cluster {
  return connectRedis(connection, { maxRetriesPerRequest: null })
}
