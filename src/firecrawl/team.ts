// GET /v1|v2/team/credit-usage and GET /v2/concurrency-check (docs/firecrawl.md#team): what the caller's plan allows,
// in Firecrawl's shapes, from the tenant's usage (docs/api.md §16) or the free listener's settings. A credit is one
// request (one page). n8n's credential test calls /v1/team/credit-usage.
import type { AppContext } from '../context.ts'
import type { Caller } from '../tenants/types.ts'
import type { ApiVersion } from './request.ts'

/** `remainingCredits` when the plan has no daily limit: a large number, as §17 says, that every client can add to. */
export const UNLIMITED_CREDITS = 1_000_000_000

/** Scrapes of free clients under way in this process, by client (a tenant's are counted by its limits, §16). */
const inFlight = new Map<string, number>()

function callerKey (caller: Caller): string {
  return caller.tenant === undefined ? `free:${caller.client ?? ''}` : `tenant:${caller.tenant.name}`
}

/** Counts one scrape of `caller` as under way until the returned function is called. */
export function trackScrape (caller: Caller): () => void {
  if (caller.tenant !== undefined) return () => {}
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

/** What the caller may still do today and at once: the tenant's usage (docs/api.md §16), or the free listener's. */
async function standing (ctx: AppContext, caller: Caller): Promise<{ daily: number | null, remaining: number | null, inFlight: number, maxConcurrency: number | null }> {
  if (caller.tenant !== undefined) {
    const usage = await ctx.limits.usage(caller.tenant)
    return { daily: usage.day.limit, remaining: usage.day.remaining, inFlight: usage.concurrency.inFlight, maxConcurrency: usage.concurrency.limit }
  }
  // The free quota's window is not read back without counting: its allowance is reported.
  const daily = ctx.config.freeDailyLimit === 0 ? null : ctx.config.freeDailyLimit
  return { daily, remaining: daily, inFlight: inFlight.get(callerKey(caller)) ?? 0, maxConcurrency: null }
}

export async function creditUsage (ctx: AppContext, caller: Caller, version: ApiVersion): Promise<Record<string, unknown>> {
  const { daily, remaining } = await standing(ctx, caller)
  const credits = remaining ?? UNLIMITED_CREDITS
  // v1 answered in snake_case, v2 in camelCase (what each client reads).
  return version === 'v1'
    ? { remaining_credits: credits, plan_credits: daily }
    : { remainingCredits: credits, planCredits: daily, billingPeriodStart: null, billingPeriodEnd: null }
}

export async function concurrencyCheck (ctx: AppContext, caller: Caller): Promise<{ concurrency: number, maxConcurrency: number }> {
  const { inFlight: concurrency, maxConcurrency } = await standing(ctx, caller)
  return { concurrency, maxConcurrency: maxConcurrency ?? ctx.config.browserConcurrency }
}
