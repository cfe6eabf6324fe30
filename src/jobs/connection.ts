// The job system's own Redis connections (BullMQ needs clients without a key prefix and with no per-command retry
// limit, unlike the store's): one node by URL, a Sentinel-watched master, or a Cluster, as REDIS_* configure them.
// Every key of the job system starts with the hash tag `{pagecast}`, so on a Cluster all of them live in one slot and
// the Lua scripts and BullMQ's own scripts may touch several at once.
import { Queue, Worker, type Processor, type WorkerOptions } from 'bullmq'
import type { Cluster, Redis } from 'ioredis'
import type { Logger } from 'pino'
import { connectRedis } from '../store/redis-connect.ts'
import type { RedisConnection } from '../config.ts'

/** The hash-tagged prefix of every job key (BullMQ's `prefix` too). */
export const JOBS_PREFIX = '{pagecast}'

/** A new client for `connection`; BullMQ workers block on theirs, so each user gets its own. */
export function connectJobs (connection: RedisConnection): Redis | Cluster {
  return connectRedis(connection, { maxRetriesPerRequest: null })
}

/** A BullMQ queue on connections of its own (BullMQ leaves a given connection open), and its worker once started. */
export interface BullQueue<T> {
  queue: Queue<T>
  /** Starts this instance's worker (once; later calls are ignored), on a connection of its own. */
  work (processor: Processor<T>, options: Omit<WorkerOptions, 'connection' | 'prefix'>): Worker<T> | undefined
  /** Closes the worker, the queue and every connection. */
  close (): Promise<void>
}

/** Opens queue `name` under JOBS_PREFIX; `label` names it in the log (connection errors at debug, others as warnings). */
export function openBullQueue<T> (name: string, connection: RedisConnection, log: Logger, label: string): BullQueue<T> {
  const connections = [connectJobs(connection)]
  const quiet = (err: Error): void => { log.debug({ err: { message: err.message } }, `${label} queue connection error`) }
  connections[0]?.on('error', quiet)
  const queue = new Queue<T>(name, { connection: connections[0] as Redis | Cluster, prefix: JOBS_PREFIX })
  queue.on('error', (err) => { log.warn({ err: { message: err.message } }, `${label} queue error`) })
  let worker: Worker<T> | undefined
  return {
    queue,
    work (processor, options) {
      if (worker !== undefined) return undefined
      const own = connectJobs(connection)
      own.on('error', quiet)
      connections.push(own)
      worker = new Worker<T>(name, processor, { ...options, connection: own, prefix: JOBS_PREFIX })
      worker.on('error', (err) => { log.warn({ err: { message: err.message } }, `${label} worker error`) })
      return worker
    },
    async close () {
      await worker?.close()
      await queue.close()
      await Promise.all(connections.map(async c => { await c.quit().catch(() => { c.disconnect() }) }))
    }
  }
}
