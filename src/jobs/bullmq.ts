// The page queue on Redis (REDIS_URL set): BullMQ, under the `{pagecast}` hash-tagged prefix so it runs on a Cluster.
// One BullMQ job per page, not a batch of pages: a replica that dies loses only the pages it was working, BullMQ's
// stalled-job check hands exactly those to another worker after JOB_STALL_TIMEOUT, and the per-host limit and the
// job store's `done` set act per page, so a page worked again after a crash is still recorded once. A page costs a
// few Redis round trips, small beside the fetch or render it stands for.
import type { Logger } from 'pino'
import type { RedisConnection } from '../config.ts'
import { sha256 } from '../util/hash.ts'
import { openBullQueue } from './connection.ts'
import type { PageQueue, PageTask } from './types.ts'

const QUEUE = 'pages'

export interface BullQueueOptions {
  connection: RedisConnection
  /** Pages worked at once by this instance (JOB_CONCURRENCY). */
  concurrency: number
  /** How long a page's lock lasts without renewal; a dead worker's page is taken over after about this long twice. */
  stallMs: number
}

/** The BullMQ id of a page: one per job and URL, so a page added twice is queued once. */
function pageId (task: PageTask): string {
  return `${task.job}-${sha256(task.url).slice(0, 40)}`
}

export function createBullPageQueue (options: BullQueueOptions, deps: { log: Logger }): PageQueue {
  const bull = openBullQueue<PageTask>(QUEUE, options.connection, deps.log, 'job')
  const { queue } = bull
  return {
    kind: 'bullmq',
    async add (tasks) {
      if (tasks.length === 0) return
      await queue.addBulk(tasks.map(task => ({
        name: 'page',
        data: task,
        opts: {
          jobId: pageId(task),
          // A handler that throws (Redis away mid-page) is tried again; a page's own failure is recorded, not thrown.
          attempts: 5,
          backoff: { type: 'exponential', delay: 1000 },
          removeOnComplete: true,
          removeOnFail: { age: 3600 }
        }
      })))
    },
    work (handle) {
      // JOB_CONCURRENCY=0: this instance adds jobs and answers for them, other instances work their pages.
      if (options.concurrency === 0) return
      const worker = bull.work(async (job) => { await handle(job.data) }, {
        concurrency: options.concurrency,
        lockDuration: options.stallMs,
        stalledInterval: Math.max(1000, Math.round(options.stallMs / 2)),
        maxStalledCount: 5
      })
      worker?.on('failed', (job, err) => { deps.log.warn({ job: job?.data.job, err: { message: err.message } }, 'page task failed') })
    },
    close: bull.close
  }
}
