// The job system's own Redis connections (BullMQ needs clients without a key prefix and with no per-command retry
// limit, unlike the store's): one node by URL, a Sentinel-watched master, or a Cluster, as REDIS_* configure them.
// Every key of the job system starts with the hash tag `{pagecast}`, so on a Cluster all of them live in one slot and
// the Lua scripts and BullMQ's own scripts may touch several at once.
import { Queue, Worker, type Processor, type WorkerOptions } from 'bullmq'
import type { Cluster, Redis } from 'ioredis'
import type { Logger } from 'pino'
import { connectRedis } from '../store/redis-connect.ts'
import { within } from '../util/abort.ts'
import { isUnreachable } from '../util/unreachable.ts'
import type { RedisConnection } from '../config.ts'

/** The hash-tagged prefix of every job key (BullMQ's `prefix` too). */
export const JOBS_PREFIX = '{pagecast}'

/** A new client for `connection`; BullMQ workers block on theirs, so each user gets its own. */
export function connectJobs (connection: RedisConnection): Redis | Cluster {
  return connectRedis(connection, { maxRetriesPerRequest: null })
}

/** Errors of the connection itself: Redis away or going. Node's socket codes, and ioredis's own words for a closed link. */
function isConnectionError (err: Error): boolean {
  return isUnreachable(err) || /Connection is closed|ECONNREFUSED|ECONNRESET|ETIMEDOUT/.test(err.message)
}

/**
 * The error handler of a job connection, queue or worker, named `what` in the log. Redis away is the store's to
 * report: its own connection warns once per outage with the error and counts what it refused (docs/api.md §12.3),
 * and the job system's half a dozen connections to the same Redis would otherwise add a warning each, and again on
 * every reconnect. So connection errors here are debug lines; anything else (a script error, a wrong type) warns.
 */
export function jobsErrorLog (log: Logger, what: string): (err: Error) => void {
  return (err) => {
    if (isConnectionError(err)) log.debug({ err: { message: err.message } }, what)
    else log.warn({ err: { message: err.message } }, what)
  }
}

/** A BullMQ queue on connections of its own (BullMQ leaves a given connection open), and its worker once started. */
export interface BullQueue<T> {
  queue: Queue<T>
  /** Starts this instance's worker (once; later calls are ignored), on a connection of its own. */
  work (processor: Processor<T>, options: Omit<WorkerOptions, 'connection' | 'prefix'>): Worker<T> | undefined
  /** Closes the worker, the queue and every connection. */
  close (): Promise<void>
}

/** How long close() waits for the tasks this worker is running to be recorded finished before it lets go of them. */
const CLOSE_GRACE_MS = 5_000

/**
 * Closes a client of ours: QUIT when it is connected, else at once. QUIT on a client that is reconnecting waits in
 * its offline queue for a Redis that may not come back.
 */
export async function closeClient (client: Redis | Cluster): Promise<void> {
  if (client.status !== 'ready') { client.disconnect(); return }
  await client.quit().then(() => {}, () => { client.disconnect() })
}

/** Opens queue `name` under JOBS_PREFIX; `label` names it in the log (jobsErrorLog). */
export function openBullQueue<T> (name: string, connection: RedisConnection, log: Logger, label: string): BullQueue<T> {
  const connections = [connectJobs(connection)]
  const quiet = jobsErrorLog(log, `${label} queue connection error`)
  connections[0]?.on('error', quiet)
  const queue = new Queue<T>(name, { connection: connections[0] as Redis | Cluster, prefix: JOBS_PREFIX })
  queue.on('error', jobsErrorLog(log, `${label} queue error`))
  let worker: Worker<T> | undefined
  // The tasks this worker has started and BullMQ has not yet recorded finished (completed or failed).
  const running = new Set<string>()
  let settled: (() => void) | undefined
  const finished = (id: string | undefined): void => {
    if (id !== undefined) running.delete(id)
    if (running.size === 0) settled?.()
  }
  return {
    queue,
    work (processor, options) {
      if (worker !== undefined) return undefined
      const own = connectJobs(connection)
      own.on('error', quiet)
      connections.push(own)
      const counted: Processor<T> = async (job, token, signal) => {
        if (job.id !== undefined) running.add(job.id)
        return await processor(job, token, signal)
      }
      worker = new Worker<T>(name, counted, { ...options, connection: own, prefix: JOBS_PREFIX })
      worker.on('error', jobsErrorLog(log, `${label} worker error`))
      worker.on('completed', (job) => { finished(job.id) })
      worker.on('failed', (job) => { finished(job?.id) })
      return worker
    },
    // The caller has told its tasks to stop. BullMQ's graceful close (worker.close()) waits for them, then for its
    // blocking connection's 'end', which never comes when that connection is between two reconnect attempts (a Redis
    // outage just over: bullmq#4656, open in 6.7). So this waits for the tasks itself, bounded, and then closes the
    // worker without waiting (force): a task still unrecorded then stays active until its lock lapses, and the stalled
    // check hands it to a worker again (the job store records a page once).
    async close () {
      if (worker !== undefined) {
        // Paused, it takes no new task as the running ones are recorded (pause(true) does not wait for them).
        await worker.pause(true)
        if (running.size > 0) await within(new Promise<void>(resolve => { settled = resolve }), CLOSE_GRACE_MS)
        await worker.close(true)
      }
      await queue.close()
      await Promise.all(connections.map(closeClient))
    }
  }
}
