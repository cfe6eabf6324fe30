// The core of a Firecrawl scrape, for POST /v1|v2/scrape and each page of a batch scrape or crawl job:
// `scrapeDocument(deps, request, caller, signal)`. The request becomes the `GET /` query it stands for (query.ts) and
// runs through the same steps as `GET /` (routes/serve.ts ServeCore): the free quota (one page, one request), the
// parse and its plan gates, the address guard, the cache, the single flight, the browser pool and the proxy, under
// the query's deadline. The Document is made from the served envelope (document.ts).
import type { FastifyBaseLogger } from 'fastify'
import type { AppContext } from '../context.ts'
import type { Plan } from '../config.ts'
import type { Caller } from '../tenants/types.ts'
import { AppError } from '../errors.ts'
import { envelopeOf } from '../http/reply.ts'
import { createServeCore, type ServeCore, type WatchClient } from '../routes/serve.ts'
import { documentOf, type Document } from './document.ts'
import { scrapeQuery } from './query.ts'
import { trackScrape } from './team.ts'
import type { ScrapeRequest } from './request.ts'

export type { Document } from './document.ts'
export type { ScrapeRequest } from './request.ts'
export { readScrapeRequest } from './request.ts'

/** What a scrape runs on: the context and one serve core per listener (each its plan, gates and query memo). */
export interface ScrapeDeps {
  readonly ctx: AppContext
  readonly cores: Readonly<Record<Plan, ServeCore>>
}

const made = new WeakMap<AppContext, ScrapeDeps>()

/** The scrape deps of a context, made once per context (the HTTP routes and the job workers share them). */
export function scrapeDepsOf (ctx: AppContext): ScrapeDeps {
  let deps = made.get(ctx)
  if (deps === undefined) {
    deps = { ctx, cores: { free: createServeCore(ctx, 'free'), pro: createServeCore(ctx, 'pro') } }
    made.set(ctx, deps)
  }
  return deps
}

/** A scraped page and the quota headers its counting gave (the free quota's, or the tenant's daily limit's). */
export interface Scraped {
  document: Document
  headers: Record<string, string>
}

/** No client headers reach the query: `x-api-header-*` forwarding is `GET /`'s, not Firecrawl's (it has `headers`). */
const NO_HEADERS = Object.freeze({})

/** scrapeDocument with the quota headers, for the HTTP route. */
export async function scrapePage (deps: ScrapeDeps, request: ScrapeRequest, caller: Caller, signal: AbortSignal, log?: FastifyBaseLogger): Promise<Scraped> {
  const core = deps.cores[caller.listener]
  const logger = log ?? (deps.ctx.log as unknown as FastifyBaseLogger)
  if (caller.listener === 'pro' && caller.tenant === undefined) throw new AppError('EAUTH')
  signal.throwIfAborted()
  // Each page is one request of the free quota (docs/api.md §1.3), counted before anything is loaded.
  const headers = caller.listener === 'free' && caller.client !== undefined ? await core.countQuota(caller.client, logger) : {}
  const watch: WatchClient = (abort) => {
    if (signal.aborted) { abort(); return () => {} }
    signal.addEventListener('abort', abort, { once: true })
    return () => { signal.removeEventListener('abort', abort) }
  }
  const raw = scrapeQuery(request, caller.listener === 'pro')
  const untrack = trackScrape(caller)
  try {
    // The tenant's plan applies as on GET / (docs/api.md §16): denied parameters, maxTtl, its counts and concurrency.
    return await core.run(raw, NO_HEADERS, logger, watch, async ({ served, options, limits }) => ({
      document: documentOf(request, {
        envelope: envelopeOf(served),
        cacheState: served.status === 'HIT' || served.status === 'STALE' ? 'hit' : 'miss',
        createdAt: served.entry.meta.createdAt,
        requestedUrl: options.url
      }),
      headers: { ...headers, ...limits }
    }), undefined, caller.tenant, request.storeInCache ? {} : { store: false })
  } finally {
    untrack()
  }
}

/**
 * One page as a Firecrawl Document, through the path of `GET /`. `caller` says the listener and tenant (or the
 * free client); `signal` stops the wait (the computation stops once nobody else waits on it). Throws AppError.
 */
export async function scrapeDocument (deps: ScrapeDeps, request: ScrapeRequest, caller: Caller, signal: AbortSignal, log?: FastifyBaseLogger): Promise<Document> {
  return (await scrapePage(deps, request, caller, signal, log)).document
}
