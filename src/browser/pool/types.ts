// The browser pool's public interface (what src/context.ts, lazy-pool.ts and the pipeline see), and the counters
// its parts share.
import type { BrowserContext, BrowserContextOptions, Page } from 'playwright-core'
import type { Adblocker } from '../../adblock/index.ts'
import type { AddressGuard } from '../../net/guard.ts'
import type { EgressRefusal } from '../egress-proxy.ts'
import type { Emulation, JobEmulation } from '../emulation.ts'
import type { PageCdpSession } from '../page/cdp-session.ts'
import type { AppError } from '../../errors.ts'

export type BrowserReadiness = 'ok' | 'down' | 'failed'

export interface BrowserPoolOptions {
  /** CHROMIUM_PATH; else the first of chromium, chromium-browser, google-chrome on PATH. */
  chromiumPath?: string | undefined
  /** The PATH to search (`:`-separated); default: the process's own, via the shell. */
  searchPath?: string | undefined
  /** BROWSER_WS_ENDPOINT: connect to a remote Playwright browser server instead of launching. */
  wsEndpoint?: string | undefined
  /** BROWSER_CONCURRENCY: jobs at once. */
  concurrency: number
  /** BROWSER_QUEUE_LIMIT: jobs that may wait for a page; beyond, EBUSY. */
  queueLimit: number
  /** Jobs per browser before it is replaced (the running ones finish first). Default 1000. */
  maxJobsPerBrowser?: number
  /** Jobs per context before it is replaced. Default 100. */
  maxJobsPerContext?: number
  /** Reset contexts kept for later jobs, across profiles (each keeps a renderer). Default `concurrency + 2`. */
  maxIdleContexts?: number
  /** Launch or connect deadline. Default 30 s. */
  launchTimeoutMs?: number
  /** How long browser.close() may take before the process group is killed. Default 5 s. */
  closeTimeoutMs?: number
  /** How long a job may take to settle after its signal aborted, and a reset may take. Default 5 s. */
  resetTimeoutMs?: number
  /** How long close() lets running jobs finish before aborting them. Default 30 s. */
  drainTimeoutMs?: number
  /**
   * Where the egress proxies listen, and the host the browser is told. Defaults to 127.0.0.1 for both; a remote
   * browser (wsEndpoint) must be able to reach that host.
   */
  egress?: { listenHost?: string, advertisedHost?: string }
  /**
   * The whole environment Chromium starts with (config.childEnv), never the service's own. Default: PATH only.
   * Its PATH is also where Chromium is looked for when `searchPath` is not given.
   */
  env?: Readonly<Record<string, string>>
  /** More Chromium switches (never `--disable-features`: Playwright's own would be lost). */
  extraArgs?: readonly string[]
  /** Extra CA trusted for https proxies (tests with a self-signed proxy). */
  proxyCa?: string | Buffer | undefined
}

export interface BrowserPoolLog {
  debug (obj: object, msg: string): void
  info (obj: object, msg: string): void
  warn (obj: object, msg: string): void
  error (obj: object, msg: string): void
}

export interface BrowserPoolDeps {
  guard: AddressGuard
  log?: BrowserPoolLog
  /** Aborted when whoever waits for the pool closes before it is up: the first launch stops at once. */
  signal?: AbortSignal
}

export interface JobInfo {
  /** Aborts when the caller's signal does, when the browser or page dies, or when the pool closes. */
  signal: AbortSignal
  /** Requests the egress layer refused during this job (sub-requests included: those just fail in the page). */
  refusals (): readonly EgressRefusal[]
  /** The refusal of this job's main-frame navigation (any redirect hop, meta refresh or script navigation). */
  refusedNavigation (): EgressRefusal | undefined
  /** The page's CDP session for captures (producers/capture-session.ts), kept by the pool for the page's life. */
  captureSession (): PageCdpSession
  /** Sub-requests `adblock` blocked so far in this job. */
  blockedRequests (): number
  /** Marks the page as not to be reused: the lease replaces it once the job is released (user code ran past its limit). */
  discardPage (): void
  /** Connections this job opened through its `proxy` so far (0 without one). */
  proxied (): number
  /**
   * A short-lived context of the same browser for a stage of this job (the screenshot overlay), its requests going
   * through this job's egress proxy with its credential; the caller closes it.
   */
  stageContext (options: BrowserContextOptions): Promise<BrowserContext>
}

export type BrowserJob<T> = (page: Page, info: JobInfo) => Promise<T>

/**
 * Work that holds one slot of the browser queue but no page of the pool (a Lighthouse run, which drives a Chromium
 * of its own). Its signal aborts when the caller's does, or when the pool closes and the work overstays the drain.
 */
export type SlotWork<T> = (signal: AbortSignal) => Promise<T>

export interface PoolRunOptions {
  signal: AbortSignal
  /**
   * When the job must be done (epoch ms; the request's deadline). A job that could not start early enough to finish by
   * then, at the queue's measured pace, is refused at once with EBUSY instead of waiting to time out.
   */
  deadline?: number | undefined
  /** The job's emulation; without a user agent the pool sends its own (the desktop one of its Chromium). */
  emulation: JobEmulation
  /** The job's `proxy` (href with credentials): every request of the job goes through it, behind the egress layer. */
  proxy?: string | undefined
  /**
   * `adblock` on: the engine that filters the job's sub-requests (docs/browser.md#adblock; the page step answers
   * consent banners). Undefined: nothing is filtered.
   */
  adblock?: Adblocker | undefined
  /**
   * Where the pool writes, in ms for server-timing, how long the job waited for a slot (`queue`), for its context and
   * page (`lease`: an idle one taken, or a new one opened) and for the job's emulation and interception (`prepare`).
   */
  timings?: Record<string, number> | undefined
  /**
   * False when the job will not emulate a CSS media type (page steps' `mediaType`): the page's emulation then stays
   * as the pool applied it, and the next job with the same emulation need not apply it again. Unknown (true) by default.
   */
  changesMedia?: boolean | undefined
}

/** A slot's run: the caller's signal, and when it must be done (epoch ms; see PoolRunOptions.deadline). */
export interface SlotRunOptions {
  signal: AbortSignal
  deadline?: number | undefined
}

/** A job's run options once the pool filled in its emulation's defaults (what the runner and the leases see). */
export type FilledRunOptions = Omit<PoolRunOptions, 'emulation'> & { emulation: Emulation }

export interface AdmissionRefusals {
  full: number
  late: number
  left: number
}

/** The pool's running totals (PoolCounters) and what it is doing now. */
export interface BrowserPoolStats extends PoolCounters {
  /** Jobs running (a job's reset included). */
  active: number
  queued: number
  /** Jobs refused so far: the queue full, too late to start before their deadline, or left the queue for that. */
  refused: AdmissionRefusals
  /** A slot's measured hold time, ms (what admission by deadline keeps for a job). */
  jobMs: number
  /** The queue's measured pace, ms between two slots given back while requests wait (what a wait is estimated with). */
  paceMs: number
  /** A reset's measured time, ms, from a job's answer to its slot given back (resets that worked only). */
  resetMs: number
}

export interface BrowserPool {
  run<T> (job: BrowserJob<T>, options: PoolRunOptions): Promise<T>
  /**
   * Runs `work` in a slot of the browser queue, as a job would be (same concurrency, same FIFO queue, EBUSY when the
   * queue is full), without a context or page: the slot is given back when the work settles.
   */
  runSlot<T> (work: SlotWork<T>, options: SlotRunOptions): Promise<T>
  /**
   * The early verdict of admission by deadline (docs/browser.md#admission): the 503 EBUSY a job with this deadline
   * would get from the queue now (counted as a refusal), or undefined when it would start or queue. Asked before a
   * request does work that the browser's refusal would throw away; run() decides again when the job comes.
   */
  admissible (deadline?: number): AppError | undefined
  /** True while a browser is connected and the pool is open. */
  health (): boolean
  /**
   * For /ready (docs/api.md §12.2): `ok` while a browser is up or coming (a planned relaunch included), `down` while
   * launches fail, `failed` when it is unrecoverable after relaunch attempts or the pool is closed.
   */
  readiness (): BrowserReadiness
  stats (): BrowserPoolStats
  /** The browser's version, e.g. `156.0.8078.79` (of the first browser until a relaunch says otherwise). */
  chromiumVersion (): string
  /** The pid of the launched browser (undefined for a remote one or while down). */
  browserPid (): number | undefined
  /** Rejects queued jobs (EBUSY), lets running ones finish, closes the browser; kills it if that hangs. */
  close (): Promise<void>
}

/** Running totals, shared by the supervisor (launches), the runner (jobs) and the leases (contexts, pages). */
export interface PoolCounters {
  /** Browsers launched (or connected) so far. */
  launches: number
  /** Jobs started so far. */
  jobs: number
  /** Contexts created so far (a job that reuses one creates none). */
  contexts: number
  /** Pages created so far. */
  pages: number
  /** Resets of a lease between jobs so far (done after the job's answer, before the slot is given back). */
  resets: number
  /** Seconds those resets took, in all. */
  resetSeconds: number
}

/** Counters at zero (a new pool; a lazy pool not started yet). */
export function zeroCounters (): PoolCounters {
  return { launches: 0, jobs: 0, contexts: 0, pages: 0, resets: 0, resetSeconds: 0 }
}
