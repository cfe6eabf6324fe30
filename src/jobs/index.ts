// The job engine (docs/jobs.md): batch scrapes and crawls as pages on a queue. BullMQ and the Redis store when Redis
// is configured (any instance works any page; limits hold across instances), in process otherwise. A page is worked
// by the same steps wherever it lands: skip it when its job has ended, take a slot of its host
// (CRAWL_HOST_CONCURRENCY), run the page handler the caller of createJobs gives (the Firecrawl layer: scrapeDocument,
// the crawl's rules), admit and queue the links it follows, record the outcome once, send the webhooks.
import { randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import type { Config } from '../config.ts'
import type { AddressGuard } from '../net/guard.ts'
import type { Storage } from '../storage/index.ts'
import { createSlotLeases } from '../store/slot-leases.ts'
import type { Store } from '../store/types.ts'
import { createBullPageQueue } from './bullmq.ts'
import { createBullDeliveryQueue, createMemoryDeliveryQueue } from './deliveries.ts'
import { closeClient, connectJobs, jobsErrorLog } from './connection.ts'
import { createMemoryJobStore, createMemoryPageQueue } from './memory.ts'
import { createRedisJobStore } from './redis.ts'
import { readDocuments, storeDocument } from './results.ts'
import type { Candidate, DeliveryQueue, JobKind, JobOwner, JobRecord, JobStore, PageQueue, PageTask, SecretOf, WebhookSpec } from './types.ts'
import { ownerKeyOf } from './types.ts'
import { createWebhookSender, type WebhookEvent } from './webhooks.ts'

export type { Candidate, JobKind, JobOwner, PageTask, JobRecord, JobStatus, WebhookSpec, JobErrorEntry, SecretOf } from './types.ts'
export { assertWebhookAllowed, parseWebhook, signWebhook } from './webhooks.ts'

/** What the page handler made of one page. */
export interface PageResult {
  /** The page's document (absent when the page failed: then `error`). */
  document?: Record<string, unknown>
  error?: { message: string, code?: string }
  /** URLs the crawl would follow from this page (already filtered by its rules); the engine admits each key once. */
  follow?: Candidate[]
  /** URLs robots.txt kept out, listed by GET …/errors. */
  robotsBlocked?: string[]
  /**
   * The seen-set key of the URL the page was redirected to, when it differs from the page's own: the engine claims it
   * (claimFinal), and drops the page when another page of the job has it, so each final URL is returned once.
   */
  finalKey?: string
  /** The page is not part of the job's result (a redirect off the crawl's rules, or onto a page already in it). */
  dropped?: true
}

/** Works one page of `job`: never throws for the page's own failure (that is `error`). */
export type PageHandler = (job: JobRecord, task: PageTask, signal: AbortSignal) => Promise<PageResult>

export interface JobsDeps {
  config: Pick<Readonly<Config>, 'redis' | 'jobs' | 'maxTimeout'>
  log: Logger
  guard: AddressGuard
  storage: Storage
  /** The service's shared state: the crawl limits' slots live there. */
  store: Store
}

export interface StartJob {
  kind: JobKind
  owner: JobOwner
  /** The crawl's start URL, or the batch's URLs (a batch's keys are its URLs). */
  first: readonly Candidate[]
  limit: number
  /** Pages of the job in flight at most, across instances. */
  maxConcurrency?: number
  request: Record<string, unknown>
  webhook?: WebhookSpec
}

export interface JobPage {
  record: JobRecord
  data: unknown[]
  /** The index of the next document when there are more recorded than this page holds. */
  nextSkip?: number
}

export interface Jobs {
  readonly backend: 'bullmq' | 'memory'
  /** Starts working pages with `handle` on this instance (once; later calls are ignored); `secretOf` signs webhooks. */
  work (handle: PageHandler, secretOf: SecretOf): void
  start (input: StartJob): Promise<JobRecord>
  get (id: string): Promise<JobRecord | undefined>
  /** The job with its documents from `skip`, at most `maxBytes` of JSON (at least one document). */
  page (id: string, skip: number, maxBytes: number): Promise<JobPage | undefined>
  errors: JobStore['errors']
  /** Cancels a scraping job; false when it had already ended. */
  cancel (id: string): Promise<boolean>
  ongoing (owner: JobOwner): Promise<JobRecord[]>
  close (): Promise<void>
}

const hostSlotKey = (host: string): string => `crawl:host:${host}`
const jobSlotKey = (id: string): string => `crawl:job:${id}`

/** A page's backstop beyond its own timeout: the handler's work is cut off after this. */
const PAGE_MARGIN_MS = 15_000

export function createJobs (deps: JobsDeps): Jobs {
  const { config, log } = deps
  const settings = config.jobs
  const client = config.redis === undefined ? undefined : connectJobs(config.redis)
  client?.on('error', jobsErrorLog(log, 'job store redis error'))
  const store: JobStore = client === undefined ? createMemoryJobStore() : createRedisJobStore(client)
  // CRAWL_HOST_CONCURRENCY and a job's maxConcurrency: leased slots in the service's Store, shared by every instance.
  const slots = createSlotLeases(deps.store, { onReleaseError: (err) => { log.warn({ err: { message: (err as Error).message } }, 'crawl slot release failed; its lease lapses') } })
  const queue: PageQueue = config.redis === undefined
    ? createMemoryPageQueue({ concurrency: settings.concurrency })
    : createBullPageQueue({ connection: config.redis, concurrency: settings.concurrency, stallMs: settings.stallMs }, { log })
  const retryMs = settings.webhookRetryMs
  const deliveries: DeliveryQueue = config.redis === undefined
    ? createMemoryDeliveryQueue({ retryMs })
    : createBullDeliveryQueue({ connection: config.redis, retryMs, storage: deps.storage }, { log })
  const webhooks = createWebhookSender({ guard: deps.guard, retryMs, queue: deliveries }, { log })
  const closing = new AbortController()
  let working = false

  function notify (job: JobRecord, event: WebhookEvent, extra: { data?: unknown[], error?: string } = {}): void {
    if (job.webhook === undefined) return
    webhooks.send({ kind: job.kind, jobId: job.id, spec: job.webhook, event, ...extra, owner: job.owner })
  }

  async function finishPage (job: JobRecord, task: PageTask, result: PageResult): Promise<void> {
    if (result.dropped === true) {
      const { finished } = await store.finish(job.id, task.url, { kind: 'dropped' })
      if (finished) await notifyEnd(job)
      return
    }
    if (result.robotsBlocked !== undefined && result.robotsBlocked.length > 0) await store.robotsBlocked(job.id, result.robotsBlocked)
    // Links are admitted before the page is recorded, so the job never looks finished while pages are still coming.
    if (result.follow !== undefined && result.follow.length > 0) {
      const depths = new Map(result.follow.map(c => [c.url, c.depth ?? task.depth + 1]))
      const admitted = await store.admit(job.id, task.url, result.follow, job.limit)
      await queue.add(admitted.map(url => ({ job: job.id, url, depth: depths.get(url) ?? task.depth + 1 })))
    }
    const outcome = result.document === undefined
      ? { kind: 'error' as const, error: result.error?.message ?? 'The page could not be scraped.', ...(result.error?.code === undefined ? {} : { code: result.error.code }) }
      : { kind: 'document' as const, json: await storeDocument(deps.storage, result.document, job.expiresAt) }
    const { recorded, finished } = await store.finish(job.id, task.url, outcome)
    if (recorded && result.document !== undefined) notify(job, 'page', { data: [result.document] })
    if (finished) await notifyEnd(job)
  }

  async function notifyEnd (job: JobRecord): Promise<void> {
    const ended = await store.get(job.id)
    if (ended?.status === 'failed') notify(job, 'failed', { error: 'No page of the job could be scraped.' })
    else notify(job, 'completed')
  }

  async function workPage (handle: PageHandler, task: PageTask): Promise<void> {
    const job = await store.get(task.job)
    if (job === undefined || job.status !== 'scraping') return
    // Worked again after a crash: the links it admitted may never have been queued; queueing again is idempotent.
    const children = job.kind === 'crawl' ? await store.children(job.id, task.url) : []
    if (children.length > 0) await queue.add(children.map(url => ({ job: job.id, url, depth: task.depth + 1 })))
    if (await store.isDone(job.id, task.url)) return
    const signal = AbortSignal.any([closing.signal, AbortSignal.timeout(config.maxTimeout + PAGE_MARGIN_MS)])
    let host: string
    try { host = new URL(task.url).host } catch { host = '' }
    let result: PageResult
    // The job's own limit first, then its target host's.
    const own = job.maxConcurrency === undefined ? undefined : await slots.acquire(jobSlotKey(job.id), job.maxConcurrency, signal)
    const slot = await slots.acquire(hostSlotKey(host), settings.hostConcurrency, signal).catch((err: unknown) => { own?.release(); throw err })
    try {
      result = await handle(job, task, signal)
    } catch (err) {
      if (closing.signal.aborted) throw err
      result = { error: { message: (err as Error).message } }
    } finally {
      slot.release()
      own?.release()
    }
    if (result.finalKey !== undefined && result.dropped !== true && !await store.claimFinal(job.id, task.url, result.finalKey)) result = { dropped: true }
    await finishPage(job, task, result)
  }

  return {
    backend: queue.kind,
    work (handle, secrets) {
      if (working) return
      working = true
      // Every instance that works makes webhook attempts, JOB_CONCURRENCY=0 included: they are light.
      webhooks.work(secrets)
      queue.work(async (task) => { await workPage(handle, task) })
    },
    async start (input) {
      const createdAt = Date.now()
      const keys = new Set<string>()
      const first = input.first.filter(c => !keys.has(c.key) && keys.add(c.key) !== undefined).slice(0, input.limit)
      const urls = first.map(c => c.url)
      const record: JobRecord = {
        id: randomUUID(),
        kind: input.kind,
        status: 'scraping',
        ...(input.kind === 'crawl' && urls[0] !== undefined ? { url: urls[0] } : {}),
        owner: input.owner,
        total: urls.length,
        completed: 0,
        failed: 0,
        limit: input.limit,
        ...(input.maxConcurrency === undefined ? {} : { maxConcurrency: input.maxConcurrency }),
        createdAt,
        expiresAt: createdAt + settings.ttlMs,
        request: input.request,
        ...(input.webhook === undefined ? {} : { webhook: input.webhook })
      }
      await store.create(record, first)
      notify(record, 'started')
      await queue.add(urls.map(url => ({ job: record.id, url, depth: 0 })))
      return record
    },
    get: async (id) => await store.get(id),
    async page (id, skip, maxBytes) {
      const record = await store.get(id)
      if (record === undefined) return undefined
      const { data, next } = await readDocuments(store, deps.storage, id, skip, record.completed, maxBytes)
      return { record, data, ...(next === undefined ? {} : { nextSkip: next }) }
    },
    errors: async (id) => await store.errors(id),
    cancel: async (id) => await store.end(id, 'cancelled'),
    ongoing: async (owner) => await store.ongoing(ownerKeyOf(owner)),
    async close () {
      closing.abort()
      await queue.close()
      await webhooks.close()
      slots.close()
      await store.close()
      if (client !== undefined) await closeClient(client)
    }
  }
}
