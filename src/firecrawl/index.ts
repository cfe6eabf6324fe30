// The Firecrawl-compatible API (docs/firecrawl.md, API.md §17) as one Fastify plugin, registered on both listeners:
// POST /v1|v2/scrape, POST /v1|v2/map (map.ts), GET /v1|v2/team/credit-usage, GET /v2/concurrency-check, and the
// CORS preflight of all of them (POST and DELETE allowed, for browser clients). A base URL given with a trailing
// slash (`//v2/scrape`) reaches the same routes. Its own scope: a JSON body parser (the app reads no other bodies,
// http/request-body.ts) and the Firecrawl error envelope (errors.ts) instead of ours.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { AppContext } from '../context.ts'
import type { Plan } from '../config.ts'
import { JSON_TYPE } from '../http/reply.ts'
import { preflightRoute } from '../http/cors.ts'
import { callerOf } from './auth.ts'
import { firecrawlErrorHandler } from './errors.ts'
import { API_VERSIONS, SCRAPE_BODY_SCHEMA, type ApiVersion } from '../schemas/firecrawl.ts'
import { readScrapeRequest } from './request.ts'
import { scrapeDepsOf, scrapePage } from './scrape.ts'
import { creditUsage, concurrencyCheck } from './team.ts'
import { jobRoutes } from './jobs.ts'
import { mapRoutes } from './map.ts'

/** The largest body a Firecrawl route reads. */
export const FIRECRAWL_BODY_LIMIT = 1024 * 1024

/**
 * A scrape's `data` also says `success: true`: firecrawl-js 4 unwraps `data` in its v2 `scrape` (and its v1-style
 * alias `scrapeUrl`), and LangChain JS's FireCrawlLoader (1.1) checks `success` on what it gets back, so without it
 * the loader fails against any server (docs/firecrawl.md#what-differs).
 */
const CLIENT_SHIM = { success: true } as const

/**
 * What a browser's preflight for a Firecrawl route is allowed (docs/firecrawl.md#browsers): the methods the routes
 * use; the headers asked for (Authorization, content-type) are echoed by preflightRoute. No cookies are read, so the
 * origin `*` of every answer is enough: the key is what the caller's code sends.
 */
export const FIRECRAWL_CORS_METHODS = ['GET', 'HEAD', 'POST', 'DELETE', 'OPTIONS']

/** The path prefixes of a version: as documented, and after a base URL that ended in a slash (`//v2/scrape`). */
export function prefixesOf (version: ApiVersion): string[] {
  return [`/${version}`, `//${version}`]
}

/** Stops `signal`'s wait when the client goes away before its answer. */
function clientSignal (_request: FastifyRequest, reply: FastifyReply): { signal: AbortSignal, done: () => void } {
  const controller = new AbortController()
  const onClose = (): void => { if (!reply.raw.writableFinished) controller.abort() }
  reply.raw.once('close', onClose)
  return { signal: controller.signal, done: () => { reply.raw.removeListener('close', onClose) } }
}

export async function firecrawlRoutes (app: FastifyInstance, { ctx, plan }: { ctx: AppContext, plan: Plan }): Promise<void> {
  const deps = scrapeDepsOf(ctx)
  const json = app.getDefaultJsonParser('error', 'error')
  // An empty body is no body: a client that sets `content-type: application/json` on every call (a browser client's
  // DELETE) is not refused for it; a POST without a body still fails its schema (400).
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: FIRECRAWL_BODY_LIMIT }, (request, body, done) => {
    const text = body.toString()
    if (text === '') { done(null, undefined); return }
    json(request, text, done)
  })
  app.setErrorHandler(firecrawlErrorHandler)

  // POST /v1|v2/map (map.ts), in this scope: the same body parser and error envelope.
  await mapRoutes(app, { ctx, plan, prefixesOf, clientSignal })

  for (const version of API_VERSIONS) {
    for (const prefix of prefixesOf(version)) {
      app.route(preflightRoute(`${prefix}/*`, FIRECRAWL_CORS_METHODS))
      app.post(`${prefix}/scrape`, { bodyLimit: FIRECRAWL_BODY_LIMIT, schema: { body: SCRAPE_BODY_SCHEMA } }, async (request, reply) => {
        const caller = callerOf(ctx, plan, request)
        const scrape = readScrapeRequest(request.body as Record<string, unknown>, version)
        const { signal, done } = clientSignal(request, reply)
        try {
          const { document, headers } = await scrapePage(deps, scrape, caller, signal, request.log)
          return await reply.headers(headers).type(JSON_TYPE).send({ success: true, data: { ...document, ...CLIENT_SHIM } })
        } finally {
          done()
        }
      })
      app.get(`${prefix}/team/credit-usage`, async (request, reply) =>
        await reply.type(JSON_TYPE).send({ success: true, data: await creditUsage(ctx, callerOf(ctx, plan, request), version) }))
      if (version === 'v2') {
        app.get(`${prefix}/concurrency-check`, async (request, reply) =>
          await reply.type(JSON_TYPE).send({ success: true, ...await concurrencyCheck(ctx, callerOf(ctx, plan, request)) }))
      }
    }
    // Batch scrape and crawl jobs (docs/jobs.md).
    await jobRoutes(app, { ctx, plan, version, prefixes: prefixesOf(version) })
  }
}
