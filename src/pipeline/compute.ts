// One computation of a result: load the page (or skip it), extract, and build the cache entry.
import type { Logger } from 'pino'
import type { AppContext } from '../context.ts'
import type { ExtractOptions } from '../schemas/options.ts'
import type { CacheEntry, FetchMode } from './cache.ts'
import { loadPage } from './fetch.ts'

/** Results whose target answered 5xx are cached for one minute at most (API.md §7). */
const SERVER_ERROR_TTL_MS = 60_000

export interface Envelope {
  status: 'success'
  data: Record<string, unknown>
  statusCode: number | null
  headers: Record<string, string>
  redirects: Array<{ statusCode: number, url: string }>
}

export async function computeEntry (
  ctx: AppContext,
  options: ExtractOptions,
  run: { signal: AbortSignal, log: Logger, status: 'MISS' | 'BYPASS', timings: Record<string, number> }
): Promise<CacheEntry> {
  let envelope: Envelope
  let fetchMode: FetchMode
  let fetchTime = 0

  if (!needsPage(options)) {
    // Nothing needs the page: no fetch at all, but the target is still resolved and checked.
    await ctx.guard.assertUrlResolvesAllowed(new URL(options.url))
    envelope = { status: 'success', data: {}, statusCode: null, headers: {}, redirects: [] }
    fetchMode = 'skipped'
  } else {
    const t = performance.now()
    const page = await loadPage(ctx, options, run.signal)
    fetchTime = performance.now() - t
    run.timings.fetch = fetchTime
    const te = performance.now()
    const data = options.meta === false
      ? {}
      : await ctx.metadata.extract({
        url: page.url,
        statusCode: page.statusCode,
        headers: page.headers,
        body: page.body,
        fields: options.meta.fields,
        ping: { image: options.ping.image, logo: options.ping.logo },
        signal: run.signal
      })
    run.timings.extract = performance.now() - te
    envelope = { status: 'success', data, statusCode: page.statusCode, headers: page.headers, redirects: page.redirects }
    fetchMode = 'fetch'
  }

  const ttl = envelope.statusCode !== null && envelope.statusCode >= 500
    ? Math.min(options.ttl, SERVER_ERROR_TTL_MS)
    : options.ttl
  return {
    meta: { createdAt: Date.now(), ttl, fetchMode, fetchTime: Math.round(fetchTime), files: [], status: run.status },
    body: JSON.stringify(envelope)
  }
}

/** Whether anything asked for needs the target's content. */
function needsPage (options: ExtractOptions): boolean {
  return options.meta !== false
}
