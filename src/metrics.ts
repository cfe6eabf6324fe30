// Prometheus metrics (docs/api.md §12.2). One registry per context, never prom-client's global one, so two
// apps in one process keep separate counts. Labels hold fixed enums and declared tenant names only: never a URL, a
// key or a header.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import type { BrowserPoolStats } from './browser/pool/index.ts'
import type { CacheStatus, FetchMode } from './cache/entries.ts'
import type { Plan } from './config.ts'

export type QuotaRefusal = 'limit' | 'store_unavailable'
export type Outcome = 'ok' | 'error'

export interface ServiceMetrics {
  readonly registry: Registry
  /** One answered request; `code` is the error code, or `none` for a success. */
  request (listener: Plan, status: number, code: string, seconds: number): void
  cache (status: CacheStatus): void
  fetchMode (mode: FetchMode): void
  fetchDuration (seconds: number, outcome: Outcome): void
  renderDuration (seconds: number, outcome: Outcome): void
  quotaRefused (reason: QuotaRefusal): void
  /** A tenant's counted request, cache hit, and browser time (labelled by the tenant's name, never a key). */
  tenantRequest (tenant: string): void
  tenantHit (tenant: string): void
  tenantBrowserSeconds (tenant: string, seconds: number): void
  /** The Prometheus text exposition. */
  scrape (): Promise<{ contentType: string, body: string }>
}

const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30]

/** Error codes are a fixed catalog; anything else (never expected) is folded so no label can grow. */
const CODE = /^(none|E[A-Z]{2,20})$/

export interface MetricsDeps {
  browserStats: () => BrowserPoolStats
  /** The service's version (package.json), for pagecast_build_info. */
  version: string
}

export function createMetrics (deps: MetricsDeps): ServiceMetrics {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })

  new Gauge({
    name: 'pagecast_build_info',
    help: 'The running pagecast, by version (package.json); always 1.',
    labelNames: ['version'] as const,
    registers: [registry]
  }).set({ version: deps.version }, 1)

  const requests = new Counter({
    name: 'pagecast_requests_total',
    help: 'Answered HTTP requests (/metrics excluded), by listener, HTTP status and error code (none on success).',
    labelNames: ['listener', 'status', 'code'] as const,
    registers: [registry]
  })
  const requestDuration = new Histogram({
    name: 'pagecast_request_duration_seconds',
    help: 'Time from a request\'s arrival to its answer, by listener.',
    labelNames: ['listener'] as const,
    buckets: DURATION_BUCKETS,
    registers: [registry]
  })
  const cache = new Counter({
    name: 'pagecast_cache_total',
    help: 'API answers by x-cache-status.',
    labelNames: ['status'] as const,
    registers: [registry]
  })
  const fetchTotal = new Counter({
    name: 'pagecast_fetch_total',
    help: 'Computations by how the page was loaded (x-fetch-mode).',
    labelNames: ['mode'] as const,
    registers: [registry]
  })
  const fetchDuration = new Histogram({
    name: 'pagecast_fetch_duration_seconds',
    help: 'Plain HTTP fetches of a target, by outcome.',
    labelNames: ['outcome'] as const,
    buckets: DURATION_BUCKETS,
    registers: [registry]
  })
  const renderDuration = new Histogram({
    name: 'pagecast_render_duration_seconds',
    help: 'Browser renders of a target (queue wait included), by outcome.',
    labelNames: ['outcome'] as const,
    buckets: DURATION_BUCKETS,
    registers: [registry]
  })
  const quota = new Counter({
    name: 'pagecast_quota_refusals_total',
    help: 'Free requests refused by the quota step: limit (ERATE) or store_unavailable (QUOTA_FAIL_MODE=closed).',
    labelNames: ['reason'] as const,
    registers: [registry]
  })
  // By tenant name: the names are the operator's declarations (KEYS_FILE), a bounded set; keys never label anything.
  const tenantRequests = new Counter({
    name: 'pagecast_tenant_requests_total',
    help: 'Requests counted against a tenant\'s plan (cache hits included), by tenant name.',
    labelNames: ['tenant'] as const,
    registers: [registry]
  })
  const tenantHits = new Counter({
    name: 'pagecast_tenant_cache_hits_total',
    help: 'A tenant\'s requests answered from the cache, by tenant name.',
    labelNames: ['tenant'] as const,
    registers: [registry]
  })
  const tenantBrowser = new Counter({
    name: 'pagecast_tenant_browser_seconds_total',
    help: 'Seconds of a tenant\'s computations that used the browser, by tenant name.',
    labelNames: ['tenant'] as const,
    registers: [registry]
  })
  // Pool state is read at scrape time: nothing to keep in step.
  new Gauge({
    name: 'pagecast_browser_pages_active',
    help: 'Browser jobs running now.',
    registers: [registry],
    collect () { this.set(deps.browserStats().active) }
  })
  new Gauge({
    name: 'pagecast_browser_queue_length',
    help: 'Requests waiting for a browser page.',
    registers: [registry],
    collect () { this.set(deps.browserStats().queued) }
  })
  // Monotonic counts kept by the pool are counters (`_total`), copied from it at scrape time.
  new Counter({
    name: 'pagecast_browser_launches_total',
    help: 'Browsers launched (or connected) since start; a rise after the first is a relaunch.',
    registers: [registry],
    collect () { this.reset(); this.inc(deps.browserStats().launches) }
  })
  new Counter({
    name: 'pagecast_browser_jobs_total',
    help: 'Browser jobs started since start.',
    registers: [registry],
    collect () { this.reset(); this.inc(deps.browserStats().jobs) }
  })
  new Counter({
    name: 'pagecast_browser_resets_total',
    help: 'Resets of a reused context and page between jobs since start (after the answer, before the slot is given back).',
    registers: [registry],
    collect () { this.reset(); this.inc(deps.browserStats().resets) }
  })
  new Counter({
    name: 'pagecast_browser_refusals_total',
    help: 'Browser jobs refused with EBUSY since start: full (the queue was full), late (could not start before its deadline at the measured pace), left (left the queue when its time ran short).',
    labelNames: ['reason'] as const,
    registers: [registry],
    collect () {
      this.reset()
      for (const [reason, count] of Object.entries(deps.browserStats().refused)) this.inc({ reason }, count)
    }
  })
  new Gauge({
    name: 'pagecast_browser_job_seconds',
    help: 'A browser slot\'s measured hold time (mean of the last jobs, reset included): the time admission by deadline keeps for a job.',
    registers: [registry],
    collect () { this.set(deps.browserStats().jobMs / 1000) }
  })
  new Gauge({
    name: 'pagecast_browser_pace_seconds',
    help: 'The browser queue\'s measured pace: the mean time between two slots given back while requests wait (a job\'s time over the slots until measured); admission by deadline estimates a wait with it.',
    registers: [registry],
    collect () { this.set(deps.browserStats().paceMs / 1000) }
  })
  new Counter({
    name: 'pagecast_browser_reset_seconds_total',
    help: 'Seconds spent in those resets since start.',
    registers: [registry],
    collect () { this.reset(); this.inc(deps.browserStats().resetSeconds) }
  })

  return {
    registry,
    request (listener, status, code, seconds) {
      requests.inc({ listener, status: String(status), code: CODE.test(code) ? code : 'EOTHER' })
      requestDuration.observe({ listener }, seconds)
    },
    cache (status) { cache.inc({ status }) },
    fetchMode (mode) { fetchTotal.inc({ mode }) },
    fetchDuration (seconds, outcome) { fetchDuration.observe({ outcome }, seconds) },
    renderDuration (seconds, outcome) { renderDuration.observe({ outcome }, seconds) },
    quotaRefused (reason) { quota.inc({ reason }) },
    tenantRequest (tenant) { tenantRequests.inc({ tenant }) },
    tenantHit (tenant) { tenantHits.inc({ tenant }) },
    tenantBrowserSeconds (tenant, seconds) { tenantBrowser.inc({ tenant }, seconds) },
    async scrape () {
      return { contentType: registry.contentType, body: await registry.metrics() }
    }
  }
}
