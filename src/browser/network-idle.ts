// Network idleness of one page (docs/api.md §3.6 `waitUntil`): `networkidle0` is no request in flight for 500 ms,
// `networkidle2` (and the last step of `auto`) at most two in flight for 500 ms. Playwright's own `networkidle`
// only knows the first, so requests are counted here from the page's request events.
import type { Page, Request } from 'playwright-core'

/** How long the in-flight count must stay at or under the limit. */
export const NETWORK_QUIET_MS = 500

export interface NetworkTracker {
  /** Requests started and not yet finished or failed. */
  readonly inflight: number
  /**
   * Resolves true once at most `maxInflight` requests have been in flight for the last `quietMs` (at once when
   * that is already so), false when `timeoutMs` passes first. Rejects with the signal's reason on abort.
   */
  waitForIdle (maxInflight: number, timeoutMs: number, signal: AbortSignal): Promise<boolean>
  /** Stops listening; pending waits resolve false. */
  dispose (): void
}

interface Waiter {
  check (): void
  finish (idle: boolean): void
}

/** Starts counting the page's requests now; call it before the navigation whose idleness matters. */
export function trackNetwork (page: Page, quietMs: number = NETWORK_QUIET_MS): NetworkTracker {
  const inflight = new Set<Request>()
  const started = performance.now()
  // Per limit: when the in-flight count last came down to (or under) it. The limits the API uses are tracked from
  // the start, when the page counts as quiet; any other is tracked from its first wait.
  const quietSince = new Map<number, number>([[0, started], [2, started]])
  const waiters = new Set<Waiter>()

  const onChange = (before: number): void => {
    const now = performance.now()
    const after = inflight.size
    for (const limit of quietSince.keys()) {
      if (before > limit && after <= limit) quietSince.set(limit, now)
    }
    for (const waiter of waiters) waiter.check()
  }
  const onRequest = (request: Request): void => {
    const before = inflight.size
    inflight.add(request)
    onChange(before)
  }
  const onDone = (request: Request): void => {
    const before = inflight.size
    if (!inflight.delete(request)) return
    onChange(before)
  }
  page.on('request', onRequest)
  page.on('requestfinished', onDone)
  page.on('requestfailed', onDone)

  /** Start of the current quiet period for `limit`, or undefined while more requests than that are in flight. */
  const quietStart = (limit: number): number | undefined => {
    if (inflight.size > limit) return undefined
    let since = quietSince.get(limit)
    if (since === undefined) {
      // No history for this limit: its quiet period starts now.
      since = performance.now()
      quietSince.set(limit, since)
    }
    return since
  }

  return {
    get inflight () { return inflight.size },
    waitForIdle (maxInflight, timeoutMs, signal) {
      return new Promise<boolean>((resolve, reject) => {
        if (signal.aborted) { reject(signal.reason); return }
        let quietTimer: NodeJS.Timeout | undefined
        const deadline = setTimeout(() => waiter.finish(false), Math.max(0, timeoutMs))
        const onAbort = (): void => {
          cleanup()
          reject(signal.reason)
        }
        const cleanup = (): void => {
          clearTimeout(deadline)
          if (quietTimer !== undefined) clearTimeout(quietTimer)
          signal.removeEventListener('abort', onAbort)
          waiters.delete(waiter)
        }
        const waiter: Waiter = {
          check () {
            if (quietTimer !== undefined) { clearTimeout(quietTimer); quietTimer = undefined }
            const since = quietStart(maxInflight)
            if (since === undefined) return
            const left = since + quietMs - performance.now()
            if (left <= 0) { waiter.finish(true); return }
            quietTimer = setTimeout(() => waiter.check(), Math.ceil(left))
          },
          finish (idle) {
            cleanup()
            resolve(idle)
          }
        }
        signal.addEventListener('abort', onAbort, { once: true })
        waiters.add(waiter)
        waiter.check()
      })
    },
    dispose () {
      page.off('request', onRequest)
      page.off('requestfinished', onDone)
      page.off('requestfailed', onDone)
      for (const waiter of [...waiters]) waiter.finish(false)
      inflight.clear()
    }
  }
}
