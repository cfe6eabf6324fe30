// What every extraction route shares (GET /, the content endpoints of docs/api.md §14, the MCP tools of §15): the
// plan, the quota, the query (memoized with its cache key), then the pipeline under the request's deadline and the
// reply (docs/api.md §1.4). `createServeCore` holds the steps one by one, for a caller (POST /mcp) that takes them in
// its own order; `createServe` runs them in order for one GET request.
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http'
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify'
import type { Logger } from 'pino'
import type { AppContext } from '../context.ts'
import type { Plan } from '../config.ts'
import type { Served } from '../cache/entries.ts'
import type { ExtractOptions } from '../schemas/options.ts'
import { AppError } from '../errors.ts'
import { createDeadline } from '../util/abort.ts'
import { consumeQuota } from '../http/quota.ts'
import { tenantOf } from '../http/auth.ts'
import type { Tenant } from '../tenants/types.ts'
import { checkDenied, checkMaxTtl, givenParameters } from '../tenants/plan.ts'
import { quotaSubject } from '../http/client-ip.ts'
import { audienceOf, serverTiming, setCacheHeaders } from '../http/reply.ts'
import { parseQuery } from '../schemas/query.ts'
import { serveExtract, serveHeld } from '../pipeline/index.ts'
import { cacheKeyOf } from '../pipeline/cache-key.ts'
import { createParsedQueries, type ParsedQuery } from '../http/parsed-queries.ts'
import { createQueryTemplates } from './query-templates.ts'
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
  /** Step 2: EPRO on free when a key is presented, EAUTH on pro when it is missing or unknown; the pro key's tenant. */
  checkPlan: (key: string | undefined) => Tenant | undefined
  /** Whether step 3 counts anything here (the free listener with a limit): without it, countQuota answers {}. */
  readonly countsQuota: boolean
  /** Step 3: counts one request of this client against the free quota (ERATE when spent); the quota headers. */
  countQuota: (ip: string, log: FastifyBaseLogger) => Promise<Record<string, string>>
  /** The raw query's options and cache key when an earlier request parsed them (the memo), without parsing. */
  peek: (raw: string, headers: IncomingHttpHeaders) => ParsedQuery | undefined
  /**
   * Steps 4 to 10: the raw `GET /` query parsed (memoized) and checked, then the pipeline, then `answer` with the
   * result, both under the request's deadline (its signal is the one `answer` gets). Given `held` (what `held` found
   * for this query), `answer` gets that at once.
   */
  run: <T>(raw: string, headers: IncomingHttpHeaders, log: FastifyBaseLogger, watch: WatchClient, answer: (ran: Ran, signal: AbortSignal) => Promise<T>, held?: Ran, tenant?: Tenant) => Promise<T>
  /**
   * Whether a pro request of `tenant` may be answered from an entry in hand without waiting on anything: its plan
   * allows the query and cannot refuse it by a count (no daily or monthly limit); the request is then counted.
   */
  admitsHeld: (tenant: Tenant, raw: string, headers: IncomingHttpHeaders, options: Readonly<ExtractOptions>) => boolean
  /**
   * The query's answer when it waits on nothing (the entry held in process, as `run` finds it), for a caller that
   * decides by it before the quota; undefined otherwise, a query that is refused included (`run` reports that, in its
   * order). Nothing is counted and nothing thrown.
   */
  held: (raw: string, headers: IncomingHttpHeaders) => Ran | undefined
  /** What `run` does with `held` (the hit counted, then `answer`), at once, for a caller whose answer is synchronous. */
  answerHeld: <T>(held: Ran, answer: (ran: Ran, signal: AbortSignal) => T, tenant?: Tenant) => T
}

/** The signal of an answer that waits on nothing (see run): it never aborts. */
const NEVER_ABORTED = new AbortController().signal

/** The first value of a header that may be repeated. */
export function headerValue (value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value
}

export function createServeCore (ctx: AppContext, plan: Plan): ServeCore {
  const parsedQueries = createParsedQueries()
  const templates = createQueryTemplates()

  function checkPlan (key: string | undefined): Tenant | undefined {
    if (plan === 'free') {
      if (key !== undefined) {
        throw new AppError('EPRO', {
          data: { 'x-api-key': `Requests with an API key go to the pro endpoint (port ${ctx.config.proPort}).` }
        })
      }
      return undefined
    }
    return tenantOf(ctx.tenants, key)
  }

  const countsQuota = plan === 'free' && ctx.config.freeDailyLimit !== 0

  async function countQuota (ip: string, log: FastifyBaseLogger): Promise<Record<string, string>> {
    const limit = ctx.config.freeDailyLimit
    if (!countsQuota) return {}
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
    return parsedQueries.get(plan, raw, headers, () => {
      const parseContext = { plan, headers, maxTimeout: ctx.config.maxTimeout }
      // A query like one parsed before but for its `url` is read from that one's template (routes/query-templates.ts).
      const known = templates(raw, parseContext)
      const options = known?.options ?? parseQuery(raw, parseContext)
      // Literal address checks belong to validation (docs/api.md §1.4 step 6), before the cache lookup.
      ctx.guard.assertUrlAllowed(new URL(options.url))
      if (options.proxy !== undefined) assertProxyLiteralAllowed(ctx.guard, parseUpstreamProxy(options.proxy))
      return { options, cacheKey: known?.cacheKey ?? cacheKeyOf(options) }
    })
  }

  // A JSON or text answer from the entry held in process waits on nothing (no store, no fetch, no file): it is sent
  // without a deadline timer, a client watch or an egress scope. An embed of a media URL (`<field>.url`) may read
  // a stored file or fetch an asset, so it takes the full path; other embeds (the content endpoints' text) do not.
  function heldFor ({ options, cacheKey }: ParsedQuery): Ran | undefined {
    if (options.embed !== undefined && options.embed.split('.').at(-1) === 'url') return undefined
    const served = serveHeld(ctx, options, cacheKey)
    return served === undefined ? undefined : { served, options }
  }

  function answerHeld<T> (ran: Ran, answer: (ran: Ran, signal: AbortSignal) => T, tenant?: Tenant): T {
    ctx.metrics.cache('HIT')
    if (tenant !== undefined) ctx.metrics.tenantHit(tenant.name)
    return answer(ran, NEVER_ABORTED)
  }

  /** The tenant's maxTtl (EPLAN) and count (ERATE) once the query is known good: its x-rate-limit-* headers. */
  async function admit (tenant: Tenant, given: ReadonlySet<string>, options: Readonly<ExtractOptions>, log: FastifyBaseLogger): Promise<Record<string, string>> {
    checkMaxTtl(tenant.plan, given, options.ttl)
    return await ctx.limits.count(tenant, log as Logger)
  }

  function admitsHeld (tenant: Tenant, raw: string, headers: IncomingHttpHeaders, options: Readonly<ExtractOptions>): boolean {
    if (tenant.plan.daily !== undefined || tenant.plan.monthly !== undefined) return false
    try {
      const given = givenParameters(raw, headers)
      checkDenied(tenant.plan, given)
      checkMaxTtl(tenant.plan, given, options.ttl)
    } catch {
      return false
    }
    ctx.limits.record(tenant)
    return true
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
    raw: string, headers: IncomingHttpHeaders, log: FastifyBaseLogger, watch: WatchClient, answer: (ran: Ran, signal: AbortSignal) => Promise<T>, known?: Ran, tenant?: Tenant
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
        const served = await serveExtract(ctx, options, { signal: timer.signal, log: log as Logger, cacheKey, deadline, ...(gate === undefined ? {} : { gate }) })
        if (tenant !== undefined && served.status === 'HIT') ctx.metrics.tenantHit(tenant.name)
        return await answer({ served, options, ...(limits === undefined ? {} : { limits }) }, timer.signal)
      })
    } finally {
      timer.dispose()
      unwatch()
    }
  }

  return { plan, countsQuota, checkPlan, countQuota, run, held, answerHeld, admitsHeld, peek: (raw, headers) => parsedQueries.peek(plan, raw, headers) }
}

/** The outcome of step 3 when the hit lane counted the request before handing it over (http/hit-lane.ts). */
export type QuotaCounted = { headers: Record<string, string> } | { error: unknown }

const QUOTA_COUNTED = Symbol('pagecast.quotaCounted')

/** Records on the raw request that its quota step is done, so the Fastify path does not count it again. */
export function markQuotaCounted (raw: IncomingMessage, outcome: QuotaCounted): void {
  (raw as IncomingMessage & { [QUOTA_COUNTED]?: QuotaCounted })[QUOTA_COUNTED] = outcome
}

function quotaCounted (raw: IncomingMessage): QuotaCounted | undefined {
  return (raw as IncomingMessage & { [QUOTA_COUNTED]?: QuotaCounted })[QUOTA_COUNTED]
}

export function createServe (core: ServeCore): Serve {
  return async function serve (request, reply, query, send) {
    const tenant = core.checkPlan(headerValue(request.headers['x-api-key']))
    const counted = quotaCounted(request.raw)
    // Nothing to count (pro, or no limit): no call and no await.
    if (counted === undefined) { if (core.countsQuota) reply.headers(await core.countQuota(request.ip, request.log)) } else if ('error' in counted) throw counted.error
    else reply.headers(counted.headers)
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
