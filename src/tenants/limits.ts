// A tenant's plan at request time (docs/api.md §16, docs/tenants.md): its requests counted per UTC day and month in
// the Store (one atomic step: both counted, or neither when one is spent, ERATE), its computations in flight held to
// `concurrency` by leased slots (ECONCURRENCY when none frees before the request's deadline), and its usage read back
// for GET /usage. The clock is injected (tests move it across a month's end); slot leases run on the store's clock.
import type { Logger } from 'pino'
import { AppError } from '../errors.ts'
import type { Store } from '../store/index.ts'
import { createSlotLeases, type SlotLease } from '../store/slot-leases.ts'
import { logStoreFailure } from '../store/unavailable.ts'
import type { Tenant, TenantPlan } from './types.ts'

const DAY_MS = 86_400_000
/** Days of history GET /usage shows; a day's counter is kept a little longer. */
export const HISTORY_DAYS = 31
const DAY_TTL_MS = (HISTORY_DAYS + 2) * DAY_MS
const MONTH_TTL_MS = 63 * DAY_MS
/**
 * A request stops waiting for a slot this long before its deadline, to answer ECONCURRENCY rather than ETIMEOUT. With
 * 100 ms, a full test run on a loaded 2-core machine once answered ETIMEOUT: the refusal did not reach the reply in time.
 */
const WAIT_MARGIN_MS = 250
/** How long requests of a plan without limits are gathered before they are counted in one store call. */
const RECORD_EVERY_MS = 100

export interface UsageWindow { used: number, limit: number | null, remaining: number | null, reset: number }

/** GET /usage's `data` (docs/api.md §16). */
export interface TenantUsage {
  tenant: string
  plan: TenantPlan
  day: UsageWindow
  month: UsageWindow
  concurrency: { limit: number | null, inFlight: number }
  history: Array<{ date: string, requests: number }>
}

/** Where the tenant's request spends its plan, reported to the metrics (by tenant name, never by key). */
export interface TenantMeter {
  request (tenant: string): void
  browserSeconds (tenant: string, seconds: number): void
}

export interface TenantLimitsDeps {
  store: Store
  log: Logger
  meter: TenantMeter
  /** The clock of the day and month (epoch ms); Date.now by default. */
  now?: () => number
  /** What a store that is away does: serve uncounted (open) or refuse with EBUSY (closed), as QUOTA_FAIL_MODE says. */
  failMode: 'open' | 'closed'
}

/** Called when a computation ends, with whether it used the browser: gives the slot back. */
export type SlotRelease = (browser: boolean) => void

export interface TenantLimits {
  /** Whether the plan can refuse a request before it is computed (daily, monthly, maxTtl, deny). */
  refuses (tenant: Tenant): boolean
  /**
   * Counts one request (ERATE when the day or month is spent, not counted then); the x-rate-limit-* headers. A plan
   * without daily or monthly cannot refuse: its count is not waited for.
   */
  count (tenant: Tenant, log?: Logger): Promise<Record<string, string>>
  /** Counts one request of a tenant whose plan cannot refuse it, without waiting for the store. */
  record (tenant: Tenant): void
  /** Takes one of the tenant's concurrency slots, waiting until the deadline (ECONCURRENCY); undefined without a limit. */
  slot (tenant: Tenant, signal: AbortSignal, deadline: number): Promise<SlotRelease | undefined>
  usage (tenant: Tenant): Promise<TenantUsage>
}

const isoDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10)

/** The UTC day and month of `ms`, and when each ends (epoch ms). */
function calendar (ms: number): { day: string, month: string, dayEnd: number, monthEnd: number } {
  const d = new Date(ms)
  const day = isoDay(ms)
  return {
    day,
    month: day.slice(0, 7),
    dayEnd: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1),
    monthEnd: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1)
  }
}

// One hash tag per tenant: its counters and slots sit in one Cluster slot, so one script may touch several.
const dayKey = (name: string, day: string): string => `tenant:{${name}}:d:${day}`
const monthKey = (name: string, month: string): string => `tenant:{${name}}:m:${month}`
const slotKey = (name: string): string => `tenant:{${name}}:slots`

export function createTenantLimits (deps: TenantLimitsDeps): TenantLimits {
  const { store, meter } = deps
  const now = deps.now ?? Date.now
  const leases = createSlotLeases(store, { onReleaseError: (err) => { logStoreFailure(deps.log, err, 'tenant slot release failed; its lease lapses') } })

  /** The store is away: open serves uncounted (logged), closed refuses with a retryable EBUSY. */
  function storeAway (err: unknown, log: Logger, what: string): void {
    if (deps.failMode === 'closed') {
      logStoreFailure(log, err, `tenant ${what} store unavailable; request refused (QUOTA_FAIL_MODE=closed)`)
      throw new AppError('EBUSY', { data: { quota: 'The quota store is unreachable.' }, headers: { 'retry-after': '5' }, cause: err })
    }
    logStoreFailure(log, err, `tenant ${what} store unavailable; request not counted`)
  }

  async function count (tenant: Tenant, log: Logger = deps.log): Promise<Record<string, string>> {
    const { daily, monthly } = tenant.plan
    // Nothing to refuse: the answer does not wait for the store.
    if (daily === undefined && monthly === undefined) {
      record(tenant)
      return {}
    }
    return await countNow(tenant, log)
  }

  // A plan with no daily or monthly limit refuses nothing, so its requests are counted in batches, as the free
  // quota's are (store/hit-batches.ts): one store call per tenant every RECORD_EVERY_MS, not one per request. GET
  // /usage counts the batch first, so it reads every request answered.
  const pending = new Map<string, { tenant: Tenant, count: number }>()
  let flushing: NodeJS.Timeout | undefined

  function record (tenant: Tenant): void {
    const entry = pending.get(tenant.name)
    if (entry === undefined) pending.set(tenant.name, { tenant, count: 1 })
    else entry.count += 1
    if (flushing === undefined) {
      flushing = setTimeout(() => { flushing = undefined; flush().catch(() => {}) }, RECORD_EVERY_MS)
      flushing.unref()
    }
  }

  async function flush (name?: string): Promise<void> {
    const batch = name === undefined ? [...pending.values()] : [pending.get(name)].filter((e) => e !== undefined)
    for (const entry of batch) pending.delete(entry.tenant.name)
    await Promise.all(batch.map(async (entry) => await countNow(entry.tenant, deps.log, entry.count).catch(() => {})))
  }

  async function countNow (tenant: Tenant, log: Logger, count = 1): Promise<Record<string, string>> {
    const { daily, monthly } = tenant.plan
    const at = now()
    const cal = calendar(at)
    let counted
    try {
      counted = await store.countUsage({
        dayKey: dayKey(tenant.name, cal.day),
        monthKey: monthKey(tenant.name, cal.month),
        daily: daily ?? 0,
        monthly: monthly ?? 0,
        dayTtlMs: DAY_TTL_MS,
        monthTtlMs: MONTH_TTL_MS,
        count
      })
    } catch (err) {
      storeAway(err, log, 'usage')
      return {}
    }
    const headers: Record<string, string> = daily === undefined
      ? {}
      : {
          'x-rate-limit-limit': String(daily),
          'x-rate-limit-remaining': String(Math.max(0, daily - counted.day)),
          'x-rate-limit-reset': String(cal.dayEnd / 1000)
        }
    if (counted.refused !== undefined) {
      const limit = counted.refused === 'daily' ? daily : monthly
      const end = counted.refused === 'daily' ? cal.dayEnd : cal.monthEnd
      throw new AppError('ERATE', {
        data: { [counted.refused]: `The ${counted.refused} limit of ${String(limit)} requests was reached; it resets at ${new Date(end).toISOString()}.` },
        headers: { ...headers, 'retry-after': String(Math.max(1, Math.ceil((end - at) / 1000))) }
      })
    }
    for (let i = 0; i < count; i++) meter.request(tenant.name)
    return headers
  }

  async function slot (tenant: Tenant, signal: AbortSignal, deadline: number): Promise<SlotRelease | undefined> {
    const limit = tenant.plan.concurrency
    if (limit === undefined) return undefined
    let lease: SlotLease | undefined
    try {
      lease = await leases.acquireBy(slotKey(tenant.name), limit, signal, deadline - WAIT_MARGIN_MS)
    } catch (err) {
      if (signal.aborted) throw err
      storeAway(err, deps.log, 'concurrency')
      return undefined
    }
    if (lease === undefined) {
      throw new AppError('ECONCURRENCY', {
        data: { concurrency: `The plan allows ${limit} computation${limit === 1 ? '' : 's'} at once; none finished before the request's deadline.` },
        headers: { 'retry-after': '1' }
      })
    }
    const taken = lease
    const startedAt = performance.now()
    let released = false
    return (browser) => {
      if (released) return
      released = true
      if (browser) meter.browserSeconds(tenant.name, (performance.now() - startedAt) / 1000)
      taken.release()
    }
  }

  async function usage (tenant: Tenant): Promise<TenantUsage> {
    await flush(tenant.name)
    const at = now()
    const cal = calendar(at)
    const days = Array.from({ length: HISTORY_DAYS }, (_, i) => isoDay(at - (HISTORY_DAYS - 1 - i) * DAY_MS))
    const [counts, inFlight] = await Promise.all([
      store.readCounts([...days.map(day => dayKey(tenant.name, day)), monthKey(tenant.name, cal.month)]),
      tenant.plan.concurrency === undefined ? 0 : store.slotsHeld(slotKey(tenant.name))
    ])
    const window = (used: number, limit: number | undefined, end: number): UsageWindow =>
      ({ used, limit: limit ?? null, remaining: limit === undefined ? null : Math.max(0, limit - used), reset: end / 1000 })
    return {
      tenant: tenant.name,
      plan: tenant.plan,
      day: window(counts[HISTORY_DAYS - 1]!, tenant.plan.daily, cal.dayEnd),
      month: window(counts[HISTORY_DAYS]!, tenant.plan.monthly, cal.monthEnd),
      concurrency: { limit: tenant.plan.concurrency ?? null, inFlight },
      history: days.map((date, i) => ({ date, requests: counts[i]! }))
    }
  }

  return {
    refuses: ({ plan }) => plan.daily !== undefined || plan.monthly !== undefined || plan.maxTtl !== undefined || plan.deny !== undefined,
    count,
    record,
    slot,
    usage
  }
}
