// /ready's decision (docs/api.md §12.2): ok, degraded (200, the failing check named) or error (503, only when the
// listener cannot serve).
import { describe, expect, it } from 'vitest'
import { readiness, type ReadinessInput } from '../../src/http/readiness.ts'

const HEALTHY: ReadinessInput = { plan: 'free', closing: false, browser: 'ok', store: true, storage: true, quotaFailMode: 'open', freeDailyLimit: 50 }

function ready (change: Partial<ReadinessInput>): { httpStatus: number, status: string, checks: Record<string, string> } {
  const { httpStatus, body } = readiness({ ...HEALTHY, ...change })
  return { httpStatus, ...body }
}

describe('readiness', () => {
  it('is ok while everything answers, on both listeners', () => {
    for (const plan of ['free', 'pro'] as const) {
      expect(ready({ plan })).toEqual({ httpStatus: 200, status: 'ok', checks: { browser: 'ok', store: 'ok', storage: 'ok' } })
    }
  })

  it('is degraded (200) with the check named for what the service serves around', () => {
    expect(ready({ store: false })).toEqual({ httpStatus: 200, status: 'degraded', checks: { browser: 'ok', store: 'error', storage: 'ok' } })
    expect(ready({ storage: false })).toEqual({ httpStatus: 200, status: 'degraded', checks: { browser: 'ok', store: 'ok', storage: 'error' } })
    expect(ready({ browser: 'down' })).toEqual({ httpStatus: 200, status: 'degraded', checks: { browser: 'error', store: 'ok', storage: 'ok' } })
    expect(ready({ store: false, storage: false })).toMatchObject({ httpStatus: 200, status: 'degraded' })
  })

  it('is error (503) only when the listener cannot serve', () => {
    expect(ready({ browser: 'failed' })).toEqual({ httpStatus: 503, status: 'error', checks: { browser: 'error', store: 'ok', storage: 'ok' } })
    // Draining: the dependencies answer, the service is going.
    expect(ready({ closing: true })).toEqual({ httpStatus: 503, status: 'error', checks: { browser: 'ok', store: 'ok', storage: 'ok', service: 'error' } })
    expect(ready({ closing: true, plan: 'pro', store: false })).toMatchObject({ httpStatus: 503, status: 'error', checks: { store: 'error', service: 'error' } })
    // QUOTA_FAIL_MODE=closed with Redis away refuses every free request; the pro listener has no quota.
    expect(ready({ store: false, quotaFailMode: 'closed' })).toEqual({ httpStatus: 503, status: 'error', checks: { browser: 'ok', store: 'error', storage: 'ok' } })
    expect(ready({ store: false, quotaFailMode: 'closed', plan: 'pro' })).toMatchObject({ httpStatus: 200, status: 'degraded' })
    // Without a quota (FREE_DAILY_LIMIT=0) the store is never asked for one.
    expect(ready({ store: false, quotaFailMode: 'closed', freeDailyLimit: 0 })).toMatchObject({ httpStatus: 200, status: 'degraded' })
  })
})
