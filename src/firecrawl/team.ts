// GET /v1|v2/team/credit-usage and GET /v2/concurrency-check (docs/firecrawl.md#team): what the caller's plan allows,
// in Firecrawl's shapes. A credit is one request (one page). n8n's credential test calls /v1/team/credit-usage.
import type { AppContext } from '../context.ts'
import type { Caller } from '../tenants/types.ts'
import type { ApiVersion } from './request.ts'

/** `remainingCredits` when the plan has no daily limit: a large number, as §17 says, that every client can add to. */
export const UNLIMITED_CREDITS = 1_000_000_000

/** Scrapes under way in this process, by caller (tenant name, or the free client's address). */
const inFlight = new Map<string, number>()

function callerKey (caller: Caller): string {
  return caller.tenant === undefined ? `free:${caller.client ?? ''}` : `tenant:${caller.tenant.name}`
}

/** Counts one scrape of `caller` as under way until the returned function is called. */
export function trackScrape (caller: Caller): () => void {
  const key = callerKey(caller)
  inFlight.set(key, (inFlight.get(key) ?? 0) + 1)
  let done = false
  return () => {
    if (done) return
    done = true
    const left = (inFlight.get(key) ?? 1) - 1
    if (left <= 0) inFlight.delete(key)
    else inFlight.set(key, left)
  }
}

/** The day's allowance of the caller's plan (undefined: unlimited). */
function dailyOf (ctx: AppContext, caller: Caller): number | undefined {
  if (caller.listener === 'free') return ctx.config.freeDailyLimit === 0 ? undefined : ctx.config.freeDailyLimit
  return caller.tenant?.plan.daily
}

export function creditUsage (ctx: AppContext, caller: Caller, version: ApiVersion): Record<string, unknown> {
  const daily = dailyOf(ctx, caller)
  const remaining = daily ?? UNLIMITED_CREDITS
  // v1 answered in snake_case, v2 in camelCase (what each client reads).
  return version === 'v1'
    ? { remaining_credits: remaining, plan_credits: daily ?? null }
    : { remainingCredits: remaining, planCredits: daily ?? null, billingPeriodStart: null, billingPeriodEnd: null }
}

export function concurrencyCheck (ctx: AppContext, caller: Caller): { concurrency: number, maxConcurrency: number } {
  const max = caller.tenant?.plan.concurrency ?? ctx.config.browserConcurrency
  return { concurrency: inFlight.get(callerKey(caller)) ?? 0, maxConcurrency: max }
}
