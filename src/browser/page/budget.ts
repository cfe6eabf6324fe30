// The time one request has left in the browser, shared by every page step and producer.

/** The time one request has left, shared by every browser step. */
export interface Budget {
  /** Aborted when the request is given up (deadline, client gone); steps stop with its reason. */
  readonly signal: AbortSignal
  /** `performance.now()` value at which the budget is spent. */
  readonly deadline: number
  /** ms left, never negative. */
  remaining (): number
  /** `f` of the ms left (e.g. ⅔ for a navigation), never negative. */
  fraction (f: number): number
}

export function createBudget (timeoutMs: number, signal: AbortSignal): Budget {
  const deadline = performance.now() + Math.max(0, timeoutMs)
  const remaining = (): number => Math.max(0, deadline - performance.now())
  return {
    signal,
    deadline,
    remaining,
    fraction: (f: number) => remaining() * f
  }
}

/** Share of the remaining budget a navigation, and each later wait, may use (docs/api.md §3.6). */
export const WAIT_SHARE = 2 / 3
