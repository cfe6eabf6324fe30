// A browser pool created on first use. The server warms it at start; an app that never renders (most
// tests, a metadata-only deployment's first minutes) never launches Chromium.
// A pool that would not start (Chromium missing, or exiting at once: docs/api.md §12.3) is tried again after a
// backoff, on the first request that needs it then: in between, such requests get 503 EBROWSER at once, without a
// launch attempt each, and requests that need no browser are served as ever.
import { browserShuttingDown, browserUnavailable } from '../errors.ts'
import { zeroCounters, type BrowserJob, type BrowserPool, type BrowserPoolLog, type BrowserPoolStats, type PoolRunOptions, type SlotRunOptions, type SlotWork } from './types.ts'

export interface LazyBrowserPool extends Omit<BrowserPool, 'chromiumVersion'> {
  /** Creates the pool (launching the browser) if it is not there yet. */
  warm (): Promise<void>
  /** The browser's version; warms the pool first. */
  chromiumVersion (): Promise<string>
  /** Whether the pool exists yet. */
  started (): boolean
}

export interface LazyPoolOptions {
  log?: BrowserPoolLog
  /** The waits after 1, 2, ... failed starts before the next is tried, ms (the last one repeats). */
  backoffMs?: readonly number[]
  now?: () => number
}

/** After a failed start: 1 s, 2 s, 5 s, 10 s, then every 30 s (docs/api.md EBROWSER). */
export const START_BACKOFF_MS: readonly number[] = [1_000, 2_000, 5_000, 10_000, 30_000]

const IDLE: BrowserPoolStats = { active: 0, queued: 0, ...zeroCounters(), refused: { full: 0, late: 0, left: 0 }, jobMs: 0, paceMs: 0, resetMs: 0 }

/** `create` gets a signal aborted when the lazy pool closes: a start under way then stops rather than finish. */
export function createLazyBrowserPool (create: (signal: AbortSignal) => Promise<BrowserPool>, options: LazyPoolOptions = {}): LazyBrowserPool {
  const backoff = options.backoffMs ?? START_BACKOFF_MS
  const now = options.now ?? Date.now
  let pool: Promise<BrowserPool> | undefined
  let ready: BrowserPool | undefined
  /** Aborted by close(): a start under way stops, and nothing starts again. */
  const closing = new AbortController()
  const closed = (): boolean => closing.signal.aborted
  /** Starts failed since the last success: the next request that needs the browser tries again. */
  let startFailures = 0
  /** The last failed start and when the next may be tried. */
  let failed: { cause: unknown, retryAt: number } | undefined

  /** EBROWSER while the last start failed and the next is not due yet. */
  function unavailable (): ReturnType<typeof browserUnavailable> | undefined {
    if (failed === undefined || ready !== undefined) return undefined
    const wait = failed.retryAt - now()
    return wait > 0 ? browserUnavailable(failed.cause, wait) : undefined
  }

  function ensure (): Promise<BrowserPool> {
    if (closed()) return Promise.reject(browserShuttingDown())
    const refusal = unavailable()
    if (refusal !== undefined) return Promise.reject(refusal)
    pool ??= create(closing.signal).then(
      (p) => { ready = p; startFailures = 0; failed = undefined; return p },
      (err: unknown) => {
        // Stopped by close(): nothing failed, and nothing starts again.
        if (closed()) throw browserShuttingDown()
        startFailures += 1
        const wait = backoff[Math.min(startFailures, backoff.length) - 1] ?? 0
        failed = { cause: err, retryAt: now() + wait }
        // The next request after the backoff tries again.
        pool = undefined
        options.log?.error({ err, attempt: startFailures, retryInMs: wait }, 'browser failed to start; requests that need it get EBROWSER until the next attempt')
        throw browserUnavailable(err, wait)
      }
    )
    return pool
  }

  return {
    async warm () { await ensure() },
    started: () => ready !== undefined,
    async run<T> (job: BrowserJob<T>, options: PoolRunOptions): Promise<T> {
      return await (await ensure()).run(job, options)
    },
    async runSlot<T> (work: SlotWork<T>, options: SlotRunOptions): Promise<T> {
      return await (await ensure()).runSlot(work, options)
    },
    // Not started yet: nothing waits, so the queue would take it (the first request starts the browser); a start that
    // failed, until the next is due: EBROWSER.
    admissible: (deadline) => ready === undefined ? unavailable() : ready.admissible(deadline),
    // Not started yet is healthy: the browser starts on demand.
    health: () => ready === undefined ? !closed() && pool === undefined : ready.health(),
    // Never started is ok (it starts on demand); a browser that would not start is down, not failed: the service
    // serves metadata without one (docs/operations.md), and the next render tries again.
    readiness: () => {
      if (ready !== undefined) return ready.readiness()
      if (closed()) return 'failed'
      return startFailures > 0 ? 'down' : 'ok'
    },
    stats: () => ready?.stats() ?? IDLE,
    async chromiumVersion () { return (await ensure()).chromiumVersion() },
    browserPid: () => ready?.browserPid(),
    async close () {
      closing.abort()
      if (pool === undefined) return
      const p = await pool.catch(() => undefined)
      await p?.close()
    }
  }
}
