// Issue 25's burst (admission by deadline, docs/browser.md#admission): 200 concurrent screenshot requests with the
// default settings (distinct URLs, so none is a cache hit or joins another's flight) against a service in its own
// process. Every request must be answered: a result, or 503 EBUSY with retry-after for those the browser queue cannot
// serve in time, each within 1 s; no 504 from queueing. The time to an EBUSY is measured here, from the request sent
// to its answer read, and the service's own part of it from its x-response-time header.
import { median } from './lib.ts'

export const BURST_REQUESTS = 200

/** The p-quantile (0..1) of the values, nearest rank; NaN for none. */
function quantile (values: readonly number[], p: number): number {
  const sorted = [...values].sort((x, y) => x - y)
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!
}

/** ms of an x-response-time header ("12.3ms", "1.2s"); NaN when absent. */
function responseTimeMs (header: string | null): number {
  const match = /^([\d.]+)\s*(ms|s)$/.exec(header ?? '')
  if (match === null) return NaN
  return Number(match[1]) * (match[2] === 's' ? 1000 : 1)
}

/**
 * Sends `n` screenshot requests at once to `serviceUrl` (pro listener, key `key`) for `pageUrl(i)`; returns the
 * burst's figures: answered, served, refused (EBUSY), timedOut (504), other, refusals without retry-after, and the
 * time to an EBUSY (p50, p95, max; `serverP50`: the service's own part, from x-response-time).
 */
export async function runBurst (serviceUrl: string, key: string, pageUrl: (i: number) => string, n = BURST_REQUESTS): Promise<Record<string, number>> {
  const results = await Promise.all(Array.from({ length: n }, async (_, i) => {
    const t = performance.now()
    const params = new URLSearchParams({ url: pageUrl(i), screenshot: 'true' })
    try {
      // Bounded: a request that never answers counts as unanswered, and the bench goes on.
      const res = await fetch(`${serviceUrl}/?${params}`, { headers: { 'x-api-key': key }, signal: AbortSignal.timeout(120_000) })
      const body = await res.json().catch(() => ({})) as { code?: string }
      return {
        status: res.status,
        code: body.code,
        retryAfter: res.headers.get('retry-after'),
        ms: performance.now() - t,
        serverMs: responseTimeMs(res.headers.get('x-response-time'))
      }
    } catch {
      return { status: 0, code: undefined, retryAfter: null, ms: performance.now() - t, serverMs: NaN }
    }
  }))
  const refused = results.filter(r => r.status === 503 && r.code === 'EBUSY')
  const busyMs = refused.map(r => r.ms)
  return {
    requests: n,
    answered: results.filter(r => r.status !== 0).length,
    served: results.filter(r => r.status === 200).length,
    refused: refused.length,
    timedOut: results.filter(r => r.status === 504).length,
    other: results.filter(r => r.status !== 0 && r.status !== 200 && r.status !== 504 && !(r.status === 503 && r.code === 'EBUSY')).length,
    noRetryAfter: refused.filter(r => !(Number(r.retryAfter) >= 1)).length,
    busyP50: quantile(busyMs, 0.5),
    busyP95: quantile(busyMs, 0.95),
    busyMax: busyMs.length === 0 ? NaN : Math.max(...busyMs),
    busyServerP50: median(refused.map(r => r.serverMs).filter(Number.isFinite)),
    servedP50: median(results.filter(r => r.status === 200).map(r => r.ms))
  }
}

/**
 * The floor under the time to an EBUSY: `n` concurrent GET /health on the same service, each on a connection of its
 * own as the burst's are. What the machine takes to carry that many requests at all (connections, parsing, the
 * client): an EBUSY cannot come sooner.
 */
export async function runFloor (serviceUrl: string, n = BURST_REQUESTS): Promise<Record<string, number>> {
  const times = await Promise.all(Array.from({ length: n }, async () => {
    const t = performance.now()
    const res = await fetch(`${serviceUrl}/health`, { signal: AbortSignal.timeout(60_000) })
    await res.arrayBuffer()
    return performance.now() - t
  }))
  return { floorP50: quantile(times, 0.5), floorP95: quantile(times, 0.95) }
}

/** The burst's lines of `npm run bench -- render` (figures under `burst.`), as issue 25 words its target. */
export function burstLines (f: Readonly<Record<string, number>>, load: string): string[] {
  const v = (name: string): number => f[`burst.${name}`] ?? NaN
  const ms = (x: number): string => Number.isFinite(x) ? `${Math.round(x)} ms` : 'n/a'
  return [
    `burst of ${v('requests')} concurrent screenshot requests, default settings (BROWSER_CONCURRENCY = CPUs, BROWSER_QUEUE_LIMIT 64, MAX_TIMEOUT 28 s; load average ${load}):`,
    `  answered ${v('answered')} of ${v('requests')} (target: all); served ${v('served')}; refused 503 EBUSY ${v('refused')} ` +
      `(${v('noRetryAfter')} without retry-after); 504 ${v('timedOut')} (target 0); other ${v('other')}`,
    `  time to an EBUSY: p50 ${ms(v('busyP50'))}, p95 ${ms(v('busyP95'))}, max ${ms(v('busyMax'))} (target: within 1 s); ` +
      `the service's own part (x-response-time, p50) ${ms(v('busyServerP50'))}; served p50 ${ms(v('servedP50'))}`,
    `  the floor, ${v('requests')} concurrent GET /health on the same service just before: p50 ${ms(v('floorP50'))}, p95 ${ms(v('floorP95'))}; ` +
      `the queue's refusals: full ${v('refusedFull')}, late ${v('refusedLate')}, left ${v('refusedLeft')}`
  ]
}
