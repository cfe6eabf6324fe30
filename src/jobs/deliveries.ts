// Webhook deliveries and their retries (docs/jobs.md#webhooks), behind one interface (DeliveryQueue, types.ts). With
// Redis each delivery is a BullMQ job of the `webhooks` queue (under the `{pagecast}` hash tag): a failed attempt is
// retried after the next of WEBHOOK_RETRY_DELAYS as a delayed job, which any instance's worker takes, so an instance
// that dies or stops between attempts loses no delivery. Only what a delivery needs travels: the event's body (on the
// storage when larger than a job store entry, results.ts), its headers, its owner; never a secret, which each attempt
// reads from the owner on the instance that makes it. Without Redis the same attempts run on timers in process.
import type { Logger } from 'pino'
import type { RedisConnection } from '../config.ts'
import type { Storage } from '../storage/index.ts'
import { sleep } from '../util/abort.ts'
import { openBullQueue } from './connection.ts'
import { readStashed, stashJson } from './results.ts'
import type { Delivery, DeliveryAttempt, DeliveryQueue } from './types.ts'

const QUEUE = 'webhooks'
/** Deliveries attempted at once by one instance. */
const CONCURRENCY = 8
/** How long a stashed body is kept beyond the last retry's delay. */
const KEEP_MS = 3_600_000

export interface DeliveryOptions {
  /** The waits before each retry (WEBHOOK_RETRY_DELAYS); attempts are one more. */
  retryMs: readonly number[]
}

/** Without Redis: each delivery's attempts in a loop of this process, the waits abandoned on close. */
export function createMemoryDeliveryQueue (options: DeliveryOptions): DeliveryQueue {
  const stop = new AbortController()
  const inFlight = new Set<Promise<void>>()
  let attempt: DeliveryAttempt | undefined
  const waiting: Delivery[] = []

  async function run (delivery: Delivery, tryOnce: DeliveryAttempt): Promise<void> {
    for (let n = 0; ; n++) {
      try {
        await tryOnce(delivery, n)
        return
      } catch {
        const wait = options.retryMs[n]
        if (wait === undefined || stop.signal.aborted) return
        try { await sleep(wait, stop.signal) } catch { return }
      }
    }
  }

  function start (delivery: Delivery, tryOnce: DeliveryAttempt): void {
    const work = run(delivery, tryOnce)
    inFlight.add(work)
    void work.finally(() => inFlight.delete(work))
  }

  return {
    kind: 'memory',
    async add (delivery) {
      if (stop.signal.aborted) return
      if (attempt === undefined) waiting.push(delivery)
      else start(delivery, attempt)
    },
    work (tryOnce) {
      attempt ??= tryOnce
      for (const delivery of waiting.splice(0)) start(delivery, tryOnce)
    },
    async close () {
      stop.abort()
      await Promise.allSettled([...inFlight])
    }
  }
}

/** A delivery as its BullMQ job keeps it: the body as a stash entry. */
type Stored = Omit<Delivery, 'body'> & { body: string }

/** With Redis: one BullMQ job per delivery, retried as delayed jobs (WEBHOOK_RETRY_DELAYS) by any instance. */
export function createBullDeliveryQueue (options: DeliveryOptions & { connection: RedisConnection, storage: Storage }, deps: { log: Logger }): DeliveryQueue {
  const { retryMs, storage } = options
  const bull = openBullQueue<Stored>(QUEUE, options.connection, deps.log, 'webhook')
  const { queue } = bull
  const keepMs = retryMs.reduce((sum, ms) => sum + ms, 0) + KEEP_MS
  return {
    kind: 'bullmq',
    async add (delivery) {
      const body = await stashJson(storage, delivery.body, Date.now() + keepMs)
      await queue.add('delivery', { ...delivery, body }, {
        // The webhook-id names the BullMQ job: a delivery added twice is queued once.
        jobId: delivery.id,
        attempts: retryMs.length + 1,
        backoff: { type: 'webhook' },
        removeOnComplete: true,
        removeOnFail: { age: 3600 }
      })
    },
    work (attempt) {
      bull.work(async (job) => {
        const body = await readStashed(storage, job.data.body)
        // The stashed body expired with the storage's file: nothing left to deliver.
        if (body === undefined) return
        await attempt({ ...job.data, body }, job.attemptsMade)
      }, {
        concurrency: CONCURRENCY,
        // After the n-th failed attempt (n from 1), the n-th delay.
        settings: { backoffStrategy: (attemptsMade: number) => retryMs[attemptsMade - 1] ?? retryMs.at(-1) ?? 0 }
      })
    },
    close: bull.close
  }
}
