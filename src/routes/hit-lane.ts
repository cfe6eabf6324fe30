// The hit lane (docs/architecture.md#a-requests-path): a `GET /` (or a content endpoint's GET, docs/api.md §14) whose
// answer is a fresh entry held in process is answered on Node's request event, before Fastify builds its request and reply and runs its hooks, with the same
// headers in the same order, the same access line and metrics, and the quota counted on free. Everything else, and
// anything the lane is unsure of, goes to Fastify unchanged (`next`): a query not parsed yet, a key that does not
// verify, a request with a body, an answer @fastify/compress would stream, a listener that is closing, debug logging.
// Answers are compressed as @fastify/compress compresses them (http/compression.ts), once per entry and encoding.
// The lane never answers an error: a free request whose quota step fails is handed over with that outcome, so it
// is counted once and refused by the usual path. test/integration/hit-lane.test.ts holds its answers against the
// Fastify path's.
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { AppContext } from '../context.ts'
import type { Plan } from '../config.ts'
import type { CacheEntry } from '../cache/entries.ts'
import type { AccessLog } from '../http/access-log.ts'
import type { ClientAddress } from '../http/client-ip.ts'
import { headerValue, markQuotaCounted, type QuotaCounted, type ServeCore } from './serve.ts'
import { heldHit } from '../pipeline/index.ts'
import { audienceOf, cacheHeaderPairs, envelopeOf, getPath, JSON_TYPE, knownTextHeaders, pretty, serverTiming, type Audience } from '../http/reply.ts'
import { NOSNIFF_HEADERS, SANDBOX_HEADERS } from '../http/security-headers.ts'
import { declaredLength } from '../http/request-body.ts'
import type { ExtractOptions } from '../schemas/options.ts'
import { contentPathQuery, type ContentAttr } from '../schemas/content-query.ts'
import { ANSWERS, memoQuery } from './content.ts'
import { createMcpLane } from './mcp-lane.ts'
import { COMPRESSION, compressedBody, encodingFor, type Encoding } from '../http/compression.ts'
import type { McpQuick } from './mcp.ts'

export interface HitLaneDeps {
  ctx: AppContext
  core: ServeCore
  plan: Plan
  clientAddress: ClientAddress
  accessLog: AccessLog
  newRequestId: () => string
  /** Headers every answer of the listener carries before its own (x-pricing-plan aside): CORS, nosniff. */
  commonHeaders: Readonly<Record<string, string>>
  /** POST /mcp's quick way, on the pro listener (routes/mcp-lane.ts). */
  mcp?: McpQuick
}

export interface HitLane {
  /** Answers the request here, or calls `next` to give it to Fastify (at once, or after counting the quota). */
  handle: (req: IncomingMessage, res: ServerResponse, next: () => void) => void
  /** From now on everything goes to Fastify (it answers 503 while closing). */
  close: () => void
}

/** What the lane sends: the body and the headers that depend on the answer's kind, between server-timing and x-response-time. */
interface Body {
  text: string
  length: string
  headers: readonly string[]
}

/** One kind of request the lane takes: the `GET /` query it stands for, and its answer from a held entry. */
interface LaneRoute {
  /** The `GET /` query of the request's URL, or undefined when the URL is not this route's. */
  query: (url: string) => string | undefined
  /** The answer from the entry, or undefined when the Fastify path must shape it (a missing value, no tokens yet). */
  body: (entry: CacheEntry, embed: string | undefined) => Body | undefined
  /** Whether the parsed query is answered as this route answers (the content endpoints' own embed). */
  accepts: (options: Readonly<ExtractOptions>) => boolean
}

// The JSON answer of an entry, one object per entry (its compressed forms are kept by it).
const jsonBodies = new WeakMap<CacheEntry, Body>()

const JSON_ROUTE: LaneRoute = {
  query: url => url.startsWith('/?') ? url.slice(2) : undefined,
  accepts: options => options.embed === undefined && options.filter === undefined,
  body (entry) {
    let body = jsonBodies.get(entry)
    if (body === undefined) jsonBodies.set(entry, body = { text: entry.body, length: String(Buffer.byteLength(entry.body)), headers: ['content-type', JSON_TYPE] })
    return body
  }
}

/** Where the `vary` header's name is among the pairs (name, value, ...), or -1. */
function varyIndex (pairs: readonly string[]): number {
  for (let i = 0; i < pairs.length; i += 2) if (pairs[i] === 'vary') return i
  return -1
}

/** Whether Fastify's router takes the URL's path (find-my-way refuses an invalid percent escape: a 404 of ours). */
function routable (url: string): boolean {
  const q = url.indexOf('?')
  const path = q === -1 ? url : url.slice(0, q)
  if (!path.includes('%')) return true
  try {
    decodeURIComponent(path)
    return true
  } catch {
    return false
  }
}

// A text answer's body and headers, by entry and embed path (the entry's envelope is parsed once, in reply.ts).
const textBodies = new WeakMap<CacheEntry, Map<string, Body>>()

function contentRoute (attr: ContentAttr): LaneRoute {
  const queryForm = `/${attr}?`
  const pathForm = `/${attr}/`
  const answer = ANSWERS[attr]
  return {
    query: url => url.startsWith(queryForm)
      ? memoQuery(url.slice(queryForm.length), attr)
      : url.startsWith(pathForm) && routable(url) ? contentPathQuery(url.slice(pathForm.length), attr) : undefined,
    accepts: options => options.embed !== undefined && options.filter === undefined,
    body (entry, embed) {
      const path = embed!
      const known = textBodies.get(entry)?.get(path)
      if (known !== undefined) return known
      const value = getPath(envelopeOf({ entry }).data, path)
      // Only what the Fastify path answered before, with its x-markdown-tokens counted then.
      const tokens = answer.headers === undefined ? {} : knownTextHeaders(entry, path)
      if (typeof value !== 'string' || tokens === undefined) return undefined
      const headers: string[] = []
      for (const [name, v] of Object.entries({ ...SANDBOX_HEADERS, ...tokens, 'content-type': answer.type })) {
        if (name !== 'x-content-type-options') headers.push(name, v) // already among the leading headers
      }
      const body = { text: value, length: String(Buffer.byteLength(value)), headers }
      const byPath = textBodies.get(entry) ?? new Map<string, Body>()
      byPath.set(path, body)
      textBodies.set(entry, byPath)
      return body
    }
  }
}

const ROUTES: readonly LaneRoute[] = [JSON_ROUTE, ...(Object.keys(ANSWERS) as ContentAttr[]).map(contentRoute)]

/** A held entry and the answer the lane gives from it: the body as it is, or compressed; who may keep it. */
interface Held { entry: CacheEntry, options: Readonly<ExtractOptions>, body: Body, audience: Audience, encoded?: { encoding: Encoding, bytes: Buffer } }

export function createHitLane (deps: HitLaneDeps): HitLane {
  const { ctx, core, plan, accessLog } = deps
  let open = !ctx.log.isLevelEnabled('debug')
  const countsQuota = core.countsQuota
  // The headers before the per-request ones, flattened once: [name, value, name, value, ...].
  const leading: string[] = ['x-pricing-plan', plan]
  for (const [name, value] of Object.entries({ ...NOSNIFF_HEADERS, ...deps.commonHeaders })) leading.push(name, value)
  const quotaLog = ctx.log.child({ listener: plan })
  const mcpLane = deps.mcp === undefined ? undefined : createMcpLane({ ctx, quick: deps.mcp, send })

  /** The held fresh entry for this query and its answer when the lane may give it, else undefined. */
  function held (req: IncomingMessage, route: LaneRoute, raw: string): Held | undefined {
    const parsed = core.peek(raw, req.headers)
    if (parsed === undefined || !route.accepts(parsed.options)) return undefined
    const entry = heldHit(ctx, parsed.options, parsed.cacheKey)
    if (entry === undefined) return undefined
    const body = route.body(entry, parsed.options.embed)
    if (body === undefined) return undefined
    const audience = audienceOf(plan, parsed.options)
    // Compressed as @fastify/compress would (http/compression.ts), once per body; an answer it would stream goes to it.
    const encoding = encodingFor(req.headers['accept-encoding'], req.headers['x-no-compression'] !== undefined)
    const length = Number(body.length)
    const options = parsed.options
    if (encoding === undefined || length < COMPRESSION.threshold) return { entry, options, body, audience }
    if (length > COMPRESSION.syncThreshold) return undefined
    return { entry, options, body, audience, encoded: { encoding, bytes: compressedBody(body, encoding) } }
  }

  /**
   * Writes a lane's 200 and logs it: the request id and the listener's leading headers, then `tail` (the answer's
   * own headers, in the Fastify path's order), then the body. Both lanes answer through it (routes/mcp-lane.ts).
   */
  function send (req: IncomingMessage, res: ServerResponse, tail: readonly string[], body: string | Buffer, startedAt: number, cache?: string): void {
    const id = deps.newRequestId()
    res.writeHead(200, ['x-request-id', id, ...leading, ...tail])
    res.end(body)
    accessLog({ reqId: id, method: req.method!, url: req.url!, status: 200, ms: performance.now() - startedAt, code: '', cache, counted: true })
  }

  function answer (req: IncomingMessage, res: ServerResponse, { entry, body, audience, encoded }: Held, startedAt: number, lookupMs: number, quota: Record<string, string>): void {
    ctx.metrics.cache('HIT')
    const tail: string[] = []
    for (const name in quota) tail.push(name, quota[name]!)
    const total = performance.now() - startedAt
    tail.push(
      ...cacheHeaderPairs({ entry, status: 'HIT' }, Date.now(), audience),
      'server-timing', serverTiming({ cache: lookupMs }, total),
      ...body.headers,
      'x-response-time', pretty(total)
    )
    if (encoded === undefined) {
      tail.push('content-length', body.length)
      send(req, res, tail, body.text, startedAt, 'HIT')
    } else {
      // @fastify/compress adds to a `vary` already set (a private answer's), in its place, else sets it last.
      const vary = varyIndex(tail)
      if (vary === -1) tail.push('vary', 'accept-encoding')
      else tail[vary + 1] = `${tail[vary + 1]!}, accept-encoding`
      tail.push('content-encoding', encoded.encoding, 'content-length', String(encoded.bytes.length))
      send(req, res, tail, encoded.bytes, startedAt, 'HIT')
    }
  }

  /**
   * Answers here and returns true, or returns false for Fastify to take the request. On free, true once the quota
   * step is started: its continuation answers or hands over itself.
   */
  function tryAnswer (req: IncomingMessage, res: ServerResponse, next: () => void): boolean {
    const url = req.url
    if (!open || ctx.closing || url === undefined) return false
    if (req.method === 'POST') return mcpLane?.(req, res, next) ?? false
    if (req.method !== 'GET') return false
    let route: LaneRoute | undefined
    let raw: string | undefined
    for (const r of ROUTES) {
      raw = r.query(url)
      if (raw !== undefined) { route = r; break }
    }
    if (route === undefined || raw === undefined) return false
    const startedAt = performance.now()
    const headers = req.headers
    // A body would have to be drained or the connection closed (http/request-body.ts): Fastify's path does that.
    if (declaredLength(headers) !== 0) return false
    const key = headerValue(headers['x-api-key'])
    const tenant = plan === 'pro' && key !== undefined ? ctx.tenants.byKey(key) : undefined
    if (plan === 'pro' ? tenant === undefined : key !== undefined) return false
    const found = held(req, route, raw)
    if (found === undefined) return false
    // A tenant whose plan may refuse (a limit to count, a parameter denied) takes the usual path.
    if (tenant !== undefined && !core.admitsHeld(tenant, raw, headers, found.options)) return false
    const lookupMs = performance.now() - startedAt
    if (!countsQuota) {
      if (tenant !== undefined) ctx.metrics.tenantHit(tenant.name)
      answer(req, res, found, startedAt, lookupMs, {})
      return true
    }

    // Free: step 3 before the answer, as on the Fastify path. The entry may have changed meanwhile: ask again.
    // Whatever happens from here, the request is counted once: a failure is handed over with its outcome.
    const query = raw
    const laneRoute = route
    core.countQuota(deps.clientAddress.of(req), quotaLog).then(
      quota => {
        const now = held(req, laneRoute, query)
        if (now !== undefined) answer(req, res, now, startedAt, lookupMs, quota)
        else handOver(req, res, next, { headers: quota })
      },
      (error: unknown) => { handOver(req, res, next, { error }) }
    ).catch((err: unknown) => { handOver(req, res, next, { error: err }) })
    return true
  }

  function handOver (req: IncomingMessage, res: ServerResponse, next: () => void, outcome: QuotaCounted): void {
    if (res.headersSent) {
      ctx.log.error({ err: 'error' in outcome ? outcome.error : undefined }, 'hit lane failed after writing its answer')
      return
    }
    markQuotaCounted(req, outcome)
    next()
  }

  return {
    handle (req, res, next) {
      let answered: boolean
      try {
        answered = tryAnswer(req, res, next)
      } catch (err) {
        // Nothing written yet: the usual path answers (and logs) whatever went wrong.
        answered = res.headersSent
        if (answered) ctx.log.error({ err }, 'hit lane failed after writing its answer')
      }
      if (!answered) next()
    },
    close () { open = false }
  }
}
