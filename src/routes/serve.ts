// What every extraction route shares (GET /, the content endpoints of docs/api.md §14): the plan, the quota, the
// query (memoized with its cache key), then the pipeline under the request's deadline and the reply (docs/api.md §1.4).
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Logger } from 'pino'
import type { AppContext } from '../context.ts'
import type { Plan } from '../config.ts'
import type { Served } from '../cache/entries.ts'
import type { ExtractOptions } from '../schemas/options.ts'
import { AppError } from '../errors.ts'
import { createDeadline } from '../util/abort.ts'
import { consumeQuota } from '../http/quota.ts'
import { quotaSubject } from '../http/client-ip.ts'
import { serverTiming, setCacheHeaders } from '../http/reply.ts'
import { parseQuery } from '../schemas/query.ts'
import { serveExtract } from '../pipeline/index.ts'
import { cacheKeyOf } from '../pipeline/cache-key.ts'
import { createParsedQueries } from '../http/parsed-queries.ts'
import { runWithEgress } from '../net/egress-scope.ts'
import { assertProxyLiteralAllowed, parseUpstreamProxy } from '../net/proxy-tunnel.ts'

/** Sends a served result; headers of the cache and timing are already set. */
export type SendServed = (reply: FastifyReply, served: Served, options: Readonly<ExtractOptions>, signal: AbortSignal) => Promise<FastifyReply>

/**
 * Serves one request: `query` gives the raw `GET /` query string to parse; it runs after the plan and quota checks,
 * so its errors come in the order of docs/api.md §1.4.
 */
export type Serve = (request: FastifyRequest, reply: FastifyReply, query: () => string, send: SendServed) => Promise<FastifyReply>

export function createServe (ctx: AppContext, plan: Plan): Serve {
  const parsedQueries = createParsedQueries()

  async function checkPlan (request: FastifyRequest): Promise<void> {
    const key = request.headers['x-api-key']
    if (plan === 'free') {
      if (key !== undefined) {
        throw new AppError('EPRO', {
          data: { 'x-api-key': `Requests with an API key go to the pro endpoint (port ${ctx.config.proPort}).` }
        })
      }
      return
    }
    if (!ctx.verifyKey(Array.isArray(key) ? key[0] : key)) {
      throw new AppError('EAUTH', { data: { 'x-api-key': key === undefined ? 'The header is missing.' : 'The key is not registered.' } })
    }
  }

  async function checkQuota (request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const limit = ctx.config.freeDailyLimit
    if (plan !== 'free' || limit === 0) return
    try {
      const { headers } = await consumeQuota(ctx.store, quotaSubject(request.ip), limit)
      reply.headers(headers)
    } catch (err) {
      if (err instanceof AppError) {
        if (err.code === 'ERATE') ctx.metrics.quotaRefused('limit')
        throw err
      }
      // The store is away. QUOTA_FAIL_MODE=open (default) serves uncounted rather than refusing everyone;
      // closed refuses with a retryable 503 until the store answers again.
      if (ctx.config.quotaFailMode === 'closed') {
        ctx.metrics.quotaRefused('store_unavailable')
        request.log.warn({ err }, 'quota store unavailable; request refused (QUOTA_FAIL_MODE=closed)')
        throw new AppError('EBUSY', {
          data: { quota: 'The quota store is unreachable.' },
          headers: { 'retry-after': '5' },
          cause: err
        })
      }
      request.log.warn({ err }, 'quota store unavailable; request not counted')
    }
  }

  return async function serve (request, reply, query, send) {
    await checkPlan(request)
    await checkQuota(request, reply)
    const raw = query()
    const { options, cacheKey } = parsedQueries.get(plan, raw, request.headers, () => {
      const parsed = parseQuery(raw, { plan, headers: request.headers, maxTimeout: ctx.config.maxTimeout })
      // Literal address checks belong to validation (docs/api.md §1.4 step 6), before the cache lookup.
      ctx.guard.assertUrlAllowed(new URL(parsed.url))
      if (parsed.proxy !== undefined) assertProxyLiteralAllowed(ctx.guard, parseUpstreamProxy(parsed.proxy))
      return { options: parsed, cacheKey: cacheKeyOf(parsed) }
    })

    const deadline = Date.now() + options.timeout
    const timer = createDeadline(options.timeout, () =>
      new AppError('ETIMEOUT', { data: { timeout: `The request did not finish within ${options.timeout} ms.` } }))
    // A client that goes away stops waiting; its computation stops once nobody else waits on it.
    const onClose = (): void => {
      if (!reply.raw.writableFinished) timer.abort(new AppError('ETIMEOUT', { data: { client: 'The client closed the connection.' } }))
    }
    reply.raw.once('close', onClose)
    try {
      // Everything fetched for this request, an embedded asset included, goes through its proxy (egress-scope.ts).
      return await runWithEgress({ proxy: options.proxy, carried: false }, async () => {
        const served = await serveExtract(ctx, options, { signal: timer.signal, log: request.log as Logger, cacheKey, deadline })
        setCacheHeaders(reply, served, Date.now())
        reply.header('server-timing', serverTiming(served.timings, performance.now() - request.startedAt))
        return await send(reply, served, options, timer.signal)
      })
    } finally {
      timer.dispose()
      reply.raw.removeListener('close', onClose)
    }
  }
}
