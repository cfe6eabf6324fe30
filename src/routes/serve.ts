// What every extraction route shares (GET /, the content endpoints of docs/api.md §14, the MCP tools of §15): the
// plan, the quota, the query (memoized with its cache key), then the pipeline under the request's deadline and the
// reply (docs/api.md §1.4). `createServeCore` holds the steps one by one, for a caller (POST /mcp) that takes them in
// its own order; `createServe` runs them in order for one GET request.
import type { IncomingHttpHeaders } from 'node:http'
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify'
import type { Logger } from 'pino'
import type { AppContext } from '../context.ts'
import type { Plan } from '../config.ts'
import type { Served } from '../cache/entries.ts'
import type { ServeOptions } from '../pipeline/index.ts'
import type { ExtractOptions } from '../schemas/options.ts'
import { AppError } from '../errors.ts'
import { createDeadline } from '../util/abort.ts'
import { endOfTurn } from '../util/turn.ts'
import { consumeQuota } from '../http/quota.ts'
import { tenantOf } from '../http/auth.ts'
import { isSignedLink, verifySignedLink } from '../tenants/signed-links.ts'
import type { Tenant } from '../tenants/types.ts'
import { checkDenied, checkMaxTtl, givenParameters } from '../tenants/plan.ts'
import { quotaSubject } from '../http/client-ip.ts'
import { audienceOf, setCacheHeaders } from '../http/reply.ts'
import { serverTiming } from '../http/timing.ts'
import { createQueries, type ParsedQuery } from '../query/index.ts'
import { runWithEgress } from '../net/egress-scope.ts'
import { assertProxyLiteralAllowed, parseUpstreamProxy } from '../net/proxy-tunnel.ts'
import { logStoreFailure } from '../store/unavailable.ts'

/** Sends a served result; headers of the cache and timing are already set. */
export type SendServed = (reply: FastifyReply, served: Served, options: Readonly<ExtractOptions>, signal: AbortSignal) => Promise<FastifyReply>

/**
 * Serves one request: `query` gives the raw `GET /` query string to parse; it runs after the plan and quota checks,
 * so its errors come in the order of docs/api.md §1.4.
 */
export type Serve = (request: FastifyRequest, reply: FastifyReply, query: () => string, send: SendServed) => Promise<FastifyReply>

/** Registers `abort` to be called when the caller stops waiting (its client went away); returns the unregister. */
export type WatchClient = (abort: () => void) => () => void

/** One served query. */
export interface Ran {
  served: Served
  options: Readonly<ExtractOptions>
  /** The tenant's x-rate-limit-* headers (a plan with a daily limit, docs/api.md §16). */
  limits?: Record<string, string>
}

/** The steps of docs/api.md §1.4, each on its own. */
export interface ServeCore {
  readonly plan: Plan
  /**
   * Step 2: EPRO on free when a key is presented, EAUTH on pro when it is missing or unknown; the pro key's tenant.
   * Given the request's URL, a pro request without a key may be a signed link (ESIGNATURE when it does not verify).
   */
  checkPlan: (key: string | undefined, url?: string) => Tenant | undefined
  /**
   * Step 3: counts one request of this client against the free quota (ERATE when spent): the quota headers; or
   * undefined, at once, where nothing is counted (pro, or no limit), so that a caller has nothing to wait for.
   */
  countQuota: (ip: string, log: FastifyBaseLogger) => Promise<Record<string, string>> | undefined
  /**
   * Steps 4 to 10: the raw `GET /` query parsed (memoized) and checked, then the pipeline, then `answer` with the
   * result, both under the request's deadline (its signal is the one `answer` gets). Given `held` (what `held` found
   * for this query), `answer` gets that at once.
   */
  run: <T>(raw: string, headers: IncomingHttpHeaders, log: FastifyBaseLogger, watch: WatchClient, answer: (ran: Ran, signal: AbortSignal) => Promise<T>, held?: Ran, tenant?: Tenant, serve?: Pick<ServeOptions, 'store'>) => Promise<T>
  /**
   * The query's answer when it waits on nothing (the entry held in process, as `run` finds it), for POST /mcp's
   * quick way (mcp/server.ts), which then passes it to `run`; undefined otherwise, a query that is refused included
   * (`run` reports that, in its order). Nothing is counted and nothing thrown.
   */
  held: (raw: string, headers: IncomingHttpHeaders) => Ran | undefined
}

/** The signal of an answer that waits on nothing (see run): it never aborts. */
const NEVER_ABORTED = new AbortController().signal

/** The first value of a header that may be repeated. */
export function headerValue (value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value
}

export function createServeCore (ctx: AppContext, plan: Plan): ServeCore {
  const queries = createQueries({
    maxTimeout: ctx.config.maxTimeout,
    // Literal address checks belong to validation (docs/api.md §1.4 step 6), before the cache lookup.
    check: (options) => {
      ctx.guard.assertUrlAllowed(new URL(options.url))
      if (options.proxy !== undefined) assertProxyLiteralAllowed(ctx.guard, parseUpstreamProxy(options.proxy))
    }
  })

  function checkPlan (key: string | undefined, url?: string): Tenant | undefined {
    if (plan === 'free') {
      if (key !== undefined) {
        throw new AppError('EPRO', {
          data: { 'x-api-key': `Requests with an API key go to the pro endpoint (port ${ctx.config.proPort}).` }
        })
      }
      return undefined
    }
    // A signed link (docs/api.md §16) stands for the key when there is none; its raw query is checked as sent.
    const at = key === undefined && url !== undefined ? url.indexOf('?') : -1
    if (at !== -1 && isSignedLink(url!.slice(at + 1))) return verifySignedLink(url!.slice(at + 1), ctx.tenants, Date.now())
    return tenantOf(ctx.tenants, key)
  }

  const countsQuota = plan === 'free' && ctx.config.freeDailyLimit !== 0

  function countQuota (ip: string, log: FastifyBaseLogger): Promise<Record<string, string>> | undefined {
    return countsQuota ? counted(ip, log) : undefined
  }

  async function counted (ip: string, log: FastifyBaseLogger): Promise<Record<string, string>> {
    const limit = ctx.config.freeDailyLimit
    try {
      return (await consumeQuota(ctx.store, quotaSubject(ip), limit)).headers
    } catch (err) {
      if (err instanceof AppError) {
        if (err.code === 'ERATE') ctx.metrics.quotaRefused('limit')
        throw err
      }
      // The store is away. QUOTA_FAIL_MODE=open (default) serves uncounted rather than refusing everyone;
      // closed refuses with a retryable 503 until the store answers again.
      if (ctx.config.quotaFailMode === 'closed') {
        ctx.metrics.quotaRefused('store_unavailable')
        logStoreFailure(log, err, 'quota store unavailable; request refused (QUOTA_FAIL_MODE=closed)')
        throw new AppError('EBUSY', {
          data: { quota: 'The quota store is unreachable.' },
          headers: { 'retry-after': '5' },
          cause: err
        })
      }
      logStoreFailure(log, err, 'quota store unavailable; request not counted')
      return {}
    }
  }

  function parsed (raw: string, headers: IncomingHttpHeaders): ParsedQuery {
    return queries.parse(plan, raw, headers)
  }

  // A JSON or text answer from the entry held in process waits on nothing (no store, no fetch, no file): it is sent
  // without a deadline timer, a client watch or an egress scope. An embed of a media URL (`<field>.url`) may read
  // a stored file or fetch an asset, so it takes the full path; other embeds (the content endpoints' text) do not.
  function heldFor ({ options, cacheKey }: ParsedQuery): Ran | undefined {
    if (options.embed !== undefined && options.embed.split('.').at(-1) === 'url') return undefined
    const served = ctx.pipeline.serveHeld(options, cacheKey)
    return served === undefined ? undefined : { served, options }
  }

  async function answerHeld<T> (ran: Ran, answer: (ran: Ran, signal: AbortSignal) => Promise<T>, tenant?: Tenant): Promise<T> {
    ctx.metrics.cache('HIT')
    if (tenant !== undefined) ctx.metrics.tenantHit(tenant.name)
    await endOfTurn()
    return await answer(ran, NEVER_ABORTED)
  }

  /** The tenant's maxTtl (EPLAN) and count (ERATE) once the query is known good: its x-rate-limit-* headers. */
  async function admit (tenant: Tenant, given: ReadonlySet<string>, options: Readonly<ExtractOptions>, log: FastifyBaseLogger): Promise<Record<string, string>> {
    checkMaxTtl(tenant.plan, given, options.ttl)
    return await ctx.limits.count(tenant, log as Logger)
  }

  function held (raw: string, headers: IncomingHttpHeaders): Ran | undefined {
    let query: ParsedQuery
    try {
      query = parsed(raw, headers)
    } catch {
      return undefined
    }
    return heldFor(query)
  }

  async function run<T> (
    raw: string, headers: IncomingHttpHeaders, log: FastifyBaseLogger, watch: WatchClient, answer: (ran: Ran, signal: AbortSignal) => Promise<T>, known?: Ran, tenant?: Tenant, serve?: Pick<ServeOptions, 'store'>
  ): Promise<T> {
    // A parameter the tenant's plan denies is refused whatever its value; the request is counted once its query is
    // known good and its plan allows it (docs/api.md §16).
    const given = tenant === undefined ? undefined : givenParameters(raw, headers)
    if (given !== undefined) checkDenied(tenant!.plan, given)
    const query = known === undefined ? parsed(raw, headers) : undefined
    const limits = given === undefined ? undefined : await admit(tenant!, given, known?.options ?? query!.options, log)
    const ready = known ?? heldFor(query!)
    if (ready !== undefined) return await answerHeld(limits === undefined ? ready : { ...ready, limits }, answer, tenant)
    const { options, cacheKey } = query!
    // A tenant's computations in flight are held to its plan's concurrency (cache hits and joined flights take no slot).
    const gate = tenant?.plan.concurrency === undefined ? undefined : async (signal: AbortSignal, until: number) => await ctx.limits.slot(tenant, signal, until)

    const deadline = Date.now() + options.timeout
    const timer = createDeadline(options.timeout, () =>
      new AppError('ETIMEOUT', { data: { timeout: `The request did not finish within ${options.timeout} ms.` } }))
    // A client that goes away stops waiting; its computation stops once nobody else waits on it.
    const unwatch = watch(() => { timer.abort(new AppError('ETIMEOUT', { data: { client: 'The client closed the connection.' } })) })
    try {
      // Everything fetched for this request, an embedded asset included, goes through its proxy (egress-scope.ts).
      return await runWithEgress({ proxy: options.proxy, carried: false }, async () => {
        const served = await ctx.pipeline.serve(options, { signal: timer.signal, log: log as Logger, cacheKey, deadline, ...serve, ...(gate === undefined ? {} : { gate }) })
        if (tenant !== undefined && served.status === 'HIT') ctx.metrics.tenantHit(tenant.name)
        return await answer({ served, options, ...(limits === undefined ? {} : { limits }) }, timer.signal)
      })
    } finally {
      timer.dispose()
      unwatch()
    }
  }

  return { plan, checkPlan, countQuota, run, held }

}

export function createServe (core: ServeCore): Serve {
  return async function serve (request, reply, query, send) {
    const tenant = core.checkPlan(headerValue(request.headers['x-api-key']), request.url)
    // Nothing to count (pro, or no limit): no call and no await.
    const counting = core.countQuota(request.ip, request.log)
    if (counting !== undefined) reply.headers(await counting)
    const watch: WatchClient = (abort) => {
      const onClose = (): void => { if (!reply.raw.writableFinished) abort() }
      reply.raw.once('close', onClose)
      return () => { reply.raw.removeListener('close', onClose) }
    }
    return await core.run(query(), request.headers, request.log, watch, async ({ served, options, limits }, signal) => {
      if (limits !== undefined) reply.headers(limits)
      setCacheHeaders(reply, served, Date.now(), audienceOf(core.plan, options))
      reply.header('server-timing', serverTiming(served.timings, performance.now() - request.startedAt))
      return await send(reply, served, options, signal)
    }, undefined, tenant)
  }
}
