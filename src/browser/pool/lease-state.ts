// A lease's life as a named state, and the reuse policy, kept pure so they can be tested without Chromium.
//
//   busy ──release──▶ resetting ──ready──▶ idle ──take──▶ busy
//     └─────────────────┴──────── close ──────┴──────────▶ closed
//
// A lease is opened for the job that needs it (busy). When the job is released the lease is reset and parked in
// the idle list, or closed when the reuse policy says it is not worth it or the reset fails.

export type LeaseState = 'busy' | 'resetting' | 'idle' | 'closed'
export type LeaseEvent = 'release' | 'ready' | 'take' | 'close'

const TRANSITIONS: Readonly<Record<LeaseState, Partial<Record<LeaseEvent, LeaseState>>>> = {
  busy: { release: 'resetting', close: 'closed' },
  resetting: { ready: 'idle', close: 'closed' },
  idle: { take: 'busy', close: 'closed' },
  closed: {}
}

/** The state after `event`; throws for an event the state does not allow (a bug in the pool). */
export function nextLeaseState (state: LeaseState, event: LeaseEvent): LeaseState {
  const next = TRANSITIONS[state][event]
  if (next === undefined) throw new Error(`a ${state} lease cannot ${event}`)
  return next
}

/** What a job did that a plain reset does not undo, noticed as it happened (page-guards.ts). */
export interface Taint {
  /** Changed the context for good (init scripts, routes, clock, geolocation, ...): the context is closed. */
  context: boolean
  /** Changed the page for good (init scripts, bindings, held keys, coverage, ...), or it crashed: a new page. */
  page: boolean
  /** Resized the viewport: the profile's is set back. */
  viewport: boolean
  /** Changed the page's default timeouts: Playwright's are set back. */
  timeouts: boolean
  /** Routed the page's requests (`page.route`): the routes are removed. */
  routes: boolean
}

export function cleanTaint (): Taint {
  return { context: false, page: false, viewport: false, timeouts: false, routes: false }
}

/** A new page starts clean of everything but the context's taint (derived from cleanTaint: no list of its own). */
export function pageReplaced (taint: Taint): void {
  Object.assign(taint, cleanTaint(), { context: taint.context })
}

export interface ReusePolicy {
  /** Reset contexts kept for later jobs; 0 keeps none. */
  maxIdleContexts: number
  /** Jobs a context serves before it is replaced. */
  maxJobsPerContext: number
}

export interface ReleasedLease {
  /** The pool is closing. */
  closing: boolean
  /** The lease's browser is still the one jobs go to (not retiring or dead). */
  generationUp: boolean
  contextTainted: boolean
  /** Jobs it has served. */
  jobs: number
}

/** Whether a released lease is reset for another job (else it is closed at once). */
export function worthResetting (lease: ReleasedLease, policy: ReusePolicy): boolean {
  return !lease.closing && policy.maxIdleContexts > 0 && lease.generationUp && !lease.contextTainted &&
    lease.jobs < policy.maxJobsPerContext
}

/** Whether a lease whose reset ended (`resetOk`) goes to the idle list: its browser may have gone meanwhile. */
export function parkAfterReset (resetOk: boolean, closing: boolean, generationUp: boolean): boolean {
  return resetOk && !closing && generationUp
}
