// POST /v1/map and /v2/map (docs/firecrawl.md#map): a site's URLs from its start page's links and its sitemaps
// (src/crawl/discover.ts), v1 as strings, v2 as `{url}` objects. In the Firecrawl scope of index.ts (its JSON body
// parser and error envelope); the same caller rules as a scrape (auth.ts), and on the free listener one request of
// the quota per map. The target passes the address guard before anything is fetched; every fetch (robots.txt,
// sitemaps, the start page) goes through the guarded client under the map's deadline.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { AppContext } from '../context.ts'
import type { Plan } from '../config.ts'
import { AppError } from '../errors.ts'
import { JSON_TYPE } from '../http/reply.ts'
import { abortError, createDeadline } from '../util/abort.ts'
import { mapSite, type MapRequest } from '../crawl/discover.ts'
import { MAP_BODY_SCHEMA } from '../schemas/firecrawl-map.ts'
import { canonicalUrl } from '../crawl/url.ts'
import { callerOf } from './auth.ts'
import { scrapeDepsOf } from './scrape.ts'
import { API_VERSIONS, type ApiVersion } from '../schemas/firecrawl.ts'

/** A map's deadline when the body gives no `timeout`, and its ceiling (MAX_TIMEOUT when that is longer). */
export const MAP_TIMEOUT_MS = 60_000

interface MapBody {
  url: string
  search?: string
  sitemap?: MapRequest['sitemap']
  ignoreSitemap?: boolean
  sitemapOnly?: boolean
  includeSubdomains: boolean
  ignoreQueryParameters: boolean
  limit: number
  timeout?: number
}

/** The body (shape checked by MAP_BODY_SCHEMA, schemas/firecrawl-map.ts, defaults applied) as a MapRequest; EINVALQUERY for a non-http(s) URL. */
export function readMapRequest (body: MapBody): MapRequest {
  if (canonicalUrl(body.url) === undefined) {
    const message = `\`url\` must be an absolute http or https URL: \`${body.url.slice(0, 200)}\` is not.`
    throw new AppError('EINVALQUERY', { message, data: { url: message } })
  }
  const sitemap = body.sitemap ?? (body.sitemapOnly === true ? 'only' : body.ignoreSitemap === true ? 'skip' : 'include')
  return {
    url: body.url,
    sitemap,
    includeSubdomains: body.includeSubdomains,
    ignoreQueryParameters: body.ignoreQueryParameters,
    search: body.search ?? '',
    limit: body.limit
  }
}

export interface MapRouteDeps {
  ctx: AppContext
  plan: Plan
  /** The path prefixes of a version (index.ts: `/v2` and `//v2`). */
  prefixesOf: (version: ApiVersion) => string[]
  /** A signal that fires when the client goes away before its answer (index.ts). */
  clientSignal: (request: FastifyRequest, reply: FastifyReply) => { signal: AbortSignal, done: () => void }
}

export async function mapRoutes (app: FastifyInstance, deps: MapRouteDeps): Promise<void> {
  const { ctx, plan } = deps
  const cores = scrapeDepsOf(ctx).cores
  const ceiling = Math.max(ctx.config.maxTimeout, MAP_TIMEOUT_MS)

  async function map (request: FastifyRequest, reply: FastifyReply, version: ApiVersion): Promise<unknown> {
    const caller = callerOf(ctx, plan, request)
    const body = request.body as MapBody
    const mapRequest = readMapRequest(body)
    // One map is one request of the free quota, counted before anything is fetched.
    const headers = caller.listener === 'free' && caller.client !== undefined ? (await cores.free.countQuota(caller.client, request.log) ?? {}) : {}
    await ctx.guard.assertUrlResolvesAllowed(new URL(mapRequest.url))
    const client = deps.clientSignal(request, reply)
    const deadline = createDeadline(Math.min(body.timeout ?? ceiling, ceiling), () => new AppError('ETIMEOUT'), client.signal)
    try {
      const result = await mapSite(mapRequest, { fetch: ctx.http.fetchPage, signal: deadline.signal, maxHtmlBytes: ctx.config.maxHtmlBytes })
      request.log.debug({ links: result.links.length, sitemaps: result.sitemaps?.files.length, startPageError: result.startPageError }, 'map')
      const links = version === 'v1' ? result.links : result.links.map((url) => ({ url }))
      return await reply.headers(headers).type(JSON_TYPE).send({ success: true, links })
    } catch (err) {
      if (deadline.signal.aborted) throw abortError(deadline.signal)
      throw err
    } finally {
      deadline.dispose()
      client.done()
    }
  }

  for (const version of API_VERSIONS) {
    for (const prefix of deps.prefixesOf(version)) {
      app.post(`${prefix}/map`, { schema: { body: MAP_BODY_SCHEMA } }, async (request, reply) => await map(request, reply, version))
    }
  }
}
