// A browser pool created on first use. The server warms it at start; an app that never renders (most
// tests, a metadata-only deployment's first minutes) never launches Chromium.
import { zeroCounters, type BrowserJob, type BrowserPool, type BrowserPoolStats, type PoolRunOptions, type SlotRunOptions, type SlotWork } from './types.ts'

export interface LazyBrowserPool extends Omit<BrowserPool, 'chromiumVersion'> {
  /** Creates the pool (launching the browser) if it is not there yet. */
  warm (): Promise<void>
  /** The browser's version; warms the pool first. */
  chromiumVersion (): Promise<string>
  /** Whether the pool exists yet. */
  started (): boolean
}

const IDLE: BrowserPoolStats = { active: 0, queued: 0, ...zeroCounters(), refused: { full: 0, late: 0, left: 0 }, jobMs: 0, paceMs: 0 }

export function createLazyBrowserPool (create: () => Promise<BrowserPool>): LazyBrowserPool {
  let pool: Promise<BrowserPool> | undefined
  let ready: BrowserPool | undefined
  let closed = false
  /** Starts failed since the last success: the next request that needs the browser tries again. */
  let startFailures = 0

  function ensure (): Promise<BrowserPool> {
    if (pool === undefined) {
      pool = create().then(p => { ready = p; startFailures = 0; return p })
      // A failed start may be retried by the next request.
      pool.catch(() => { pool = undefined; startFailures += 1 })
    }
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
    // Not started yet: nothing waits, so the queue would take it (the first request starts the browser).
    admissible: (deadline) => ready?.admissible(deadline),
    // Not started yet is healthy: the browser starts on demand.
    health: () => ready === undefined ? !closed && pool === undefined : ready.health(),
    // Never started is ok (it starts on demand); a browser that would not start is down, not failed: the service
    // serves metadata without one (docs/operations.md), and the next render tries again.
    readiness: () => {
      if (ready !== undefined) return ready.readiness()
      if (closed) return 'failed'
      return startFailures > 0 ? 'down' : 'ok'
    },
    stats: () => ready?.stats() ?? IDLE,
    async chromiumVersion () { return (await ensure()).chromiumVersion() },
    browserPid: () => ready?.browserPid(),
    async close () {
      closed = true
      if (pool === undefined) return
      const p = await pool.catch(() => undefined)
      await p?.close()
    }
  }
}
