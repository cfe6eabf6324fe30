// The contracts of the job system (docs/jobs.md): a job's record, the store that keeps it (Redis or memory), the queue
// of pages (BullMQ or in process) and the per-host limiter. Both backends of each pass the same contract tests.

export type JobKind = 'crawl' | 'batch_scrape'
export type JobStatus = 'scraping' | 'completed' | 'failed' | 'cancelled'

/** Where a job's webhook goes and what it carries (the secret is never stored: it comes from the tenant at delivery). */
export interface WebhookSpec {
  url: string
  headers: Record<string, string>
  metadata: Record<string, unknown>
  /** The events wanted (`started`, `page`, `completed`, `failed`). */
  events: readonly string[]
}

/** Who started a job, enough to rebuild the caller on any instance: its listener, tenant name or free client. */
export interface JobOwner {
  listener: 'free' | 'pro'
  tenant?: string
  client?: string
}

export interface JobRecord {
  id: string
  kind: JobKind
  status: JobStatus
  /** The crawl's start URL (absent for a batch). */
  url?: string
  owner: JobOwner
  /** URLs admitted (each scraped once), pages recorded (documents and failures), and the documents among them. */
  total: number
  completed: number
  failed: number
  /** URLs admitted at most (a crawl's `limit`; a batch's URL count). */
  limit: number
  /** Pages of this job in flight at most, across every instance (the request's `maxConcurrency`). */
  maxConcurrency?: number
  createdAt: number
  expiresAt: number
  /** The request as validated by the route: scrape options, crawl rules; opaque to the store. */
  request: Record<string, unknown>
  webhook?: WebhookSpec
  /** Why the job failed, when it did. */
  error?: string
}

/** One page of a job: one queue item. */
export interface PageTask {
  job: string
  url: string
  /** Links followed from the start URL (0 for the start URL and for every page of a batch). */
  depth: number
}

/** A page's outcome: its Document as JSON (or a storage reference to it), or the failure. */
export type PageOutcome =
  | { kind: 'document', json: string }
  | { kind: 'error', error: string, code?: string }
  /** A redirect onto a page already in the job (claimFinal said no): counted neither way, and out of `total`. */
  | { kind: 'dropped' }

export interface FinishResult {
  /** False when the page was already recorded (a retried task after a crash): nothing was changed. */
  recorded: boolean
  /** True for the one call that finished the job (no page left): completed, or failed when no page gave a document. */
  finished: boolean
}

export interface JobErrorEntry { id: string, url: string, error: string, code?: string }

/** A URL offered to a job, and the key its seen set knows it by (the crawl's seenKey; the URL itself for a batch). */
export interface Candidate { key: string, url: string, /** Its depth when not the page's + 1 (sitemap URLs: 0). */ depth?: number }

export interface JobStore {
  /** Records a new job and admits its first URLs (the seen set starts with their keys). */
  create (record: JobRecord, first: readonly Candidate[]): Promise<void>
  get (id: string): Promise<JobRecord | undefined>
  /**
   * Admits the candidates whose key the job has not seen, at most up to `limit` admitted in all, atomically (each URL
   * once across every instance); returns the URLs admitted, in order, and remembers them as `parent`'s children.
   * Nothing is admitted once the job is no longer scraping.
   */
  admit (id: string, parent: string, candidates: readonly Candidate[], limit: number): Promise<string[]>
  /**
   * Claims the key of the page `url` was redirected to, atomically against admit(): false when that key was admitted
   * or claimed by another page of the job already (the page is then dropped); true when it is this page's (a page
   * worked again after a crash gets its own claim back). A claimed key is never admitted later.
   */
  claimFinal (id: string, url: string, key: string): Promise<boolean>
  /** The URLs `parent` admitted (a page worked again after a crash queues them again: queueing is idempotent). */
  children (id: string, parent: string): Promise<string[]>
  /** Whether the page was recorded already. */
  isDone (id: string, url: string): Promise<boolean>
  /** Records a page's outcome once; the job completes when its last admitted page is recorded. A dropped page
   * leaves `total` (and frees its place under `limit`). */
  finish (id: string, url: string, outcome: PageOutcome): Promise<FinishResult>
  /** Recorded documents from index `skip` on, as stored (JSON strings), at most `count`. */
  documents (id: string, skip: number, count: number): Promise<string[]>
  errors (id: string): Promise<{ errors: JobErrorEntry[], robotsBlocked: string[] }>
  /** Adds URLs robots.txt refused to the job's list, each once. */
  robotsBlocked (id: string, urls: readonly string[]): Promise<void>
  /** Sets the status when the job is still scraping; returns whether it changed. */
  end (id: string, status: Exclude<JobStatus, 'scraping'>, error?: string): Promise<boolean>
  /** The crawls still scraping that `ownerKey` started. */
  ongoing (ownerKey: string): Promise<JobRecord[]>
  close (): Promise<void>
}

export interface PageQueue {
  readonly kind: 'bullmq' | 'memory'
  add (tasks: readonly PageTask[]): Promise<void>
  /** Starts working tasks with `handle` (at most JOB_CONCURRENCY at once on this instance). */
  work (handle: (task: PageTask) => Promise<void>): void
  close (): Promise<void>
}

/** The key a caller's ongoing jobs are listed under: its tenant, or its free client. */
export function ownerKeyOf (owner: JobOwner): string {
  return owner.listener === 'pro' ? `pro:${owner.tenant ?? ''}` : `free:${owner.client ?? ''}`
}

/** The webhook secret of a job's owner: its tenant's webhookSecret, else WEBHOOK_SECRET. Never logged, never stored. */
export type SecretOf = (owner: JobOwner) => string | undefined

/** One webhook event to deliver (jobs/webhooks.ts): unsigned; each attempt signs it with its owner's secret. */
export interface Delivery {
  /** The Standard Webhooks `webhook-id`: the same on every attempt, so a receiver can deduplicate on it. */
  id: string
  job: string
  event: string
  url: string
  headers: Record<string, string>
  body: string
  owner: JobOwner
}

/** One attempt at a delivery (0 for the first); throws when it failed, to be tried again after the next delay. */
export type DeliveryAttempt = (delivery: Delivery, attempt: number) => Promise<void>

/**
 * Pending webhook deliveries and their retries (jobs/deliveries.ts): delayed BullMQ jobs on Redis, so a retry that an
 * instance scheduled before it died is made by another; timers in process without Redis.
 */
export interface DeliveryQueue {
  readonly kind: 'bullmq' | 'memory'
  add (delivery: Delivery): Promise<void>
  /** Starts making attempts with `attempt` on this instance. */
  work (attempt: DeliveryAttempt): void
  /** Stops this instance's attempts; on Redis, pending retries stay there for the other instances. */
  close (): Promise<void>
}
