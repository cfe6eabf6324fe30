// What /ready answers (docs/api.md §12.2), as a pure decision: each check says whether its dependency answers, and
// the status says whether this listener can serve. A load balancer keeps sending traffic on `ok` and `degraded`
// (200) and stops on `error` (503), which is kept for what stops the listener from serving.
import type { Plan } from '../config.ts'
import type { BrowserReadiness } from '../browser/pool/index.ts'

export type Check = 'ok' | 'error'
export type ReadyStatus = 'ok' | 'degraded' | 'error'

export interface ReadinessInput {
  plan: Plan
  /** Draining for shutdown. */
  closing: boolean
  browser: BrowserReadiness
  /** The store (Redis) answers. */
  store: boolean
  /** The file storage (S3 or disk) answers. */
  storage: boolean
  /** QUOTA_FAIL_MODE. */
  quotaFailMode: 'open' | 'closed'
  /** FREE_DAILY_LIMIT (0: no quota, so the store is never asked). */
  freeDailyLimit: number
}

export interface Readiness {
  httpStatus: 200 | 503
  body: { status: ReadyStatus, checks: Record<string, Check> }
}

export function readiness (input: ReadinessInput): Readiness {
  const checks: Record<string, Check> = {
    browser: input.browser === 'ok' ? 'ok' : 'error',
    store: input.store ? 'ok' : 'error',
    storage: input.storage ? 'ok' : 'error'
  }
  // Draining for shutdown: the dependencies may be fine, the service is going.
  if (input.closing) return { httpStatus: 503, body: { status: 'error', checks: { ...checks, service: 'error' } } }
  // Cannot serve: the browser is unrecoverable after relaunch attempts, or every free request would be refused
  // (QUOTA_FAIL_MODE=closed with Redis away; the pro listener has no quota and serves on).
  const quotaRefusesAll = !input.store && input.plan === 'free' && input.quotaFailMode === 'closed' && input.freeDailyLimit > 0
  if (input.browser === 'failed' || quotaRefusesAll) return { httpStatus: 503, body: { status: 'error', checks } }
  // Served around: Redis away (quota open, cache misses), storage away (metadata still works, files fail), the
  // browser failing to (re)launch for now (metadata still works, renders fail until it is back).
  const degraded = Object.values(checks).some(check => check !== 'ok')
  return { httpStatus: 200, body: { status: degraded ? 'degraded' : 'ok', checks } }
}
