// The hit lane (docs/architecture.md#the-hit-lane): a `GET /` whose answer is a fresh entry held in process is
// answered on Node's request event, before Fastify builds its request and reply and runs its hooks, with the same
// headers in the same order, the same access line and metrics, and the quota counted on free. Everything else, and
// anything the lane is unsure of, goes to Fastify unchanged (`next`): a query not parsed yet, a key that does not
// verify, a request with a body, an answer that would be compressed, a listener that is closing, debug logging.
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
import { cacheControlOf, headersOf, JSON_TYPE, pretty, serverTiming } from '../http/reply.ts'
import { NOSNIFF_HEADERS } from '../http/security-headers.ts'

export interface HitLaneDeps {
  ctx: AppContext
  core: ServeCore
  plan: Plan
  clientAddress: ClientAddress
  accessLog: AccessLog
  newRequestId: () => string
  /** Headers every answer of the listener carries before its own (x-pricing-plan aside): CORS, nosniff. */
  commonHeaders: Readonly<Record<string, string>>
  /** Bodies of this many bytes or more are compressed for clients that accept it; those go to Fastify. */
  compressThreshold: number
}

export interface HitLane {
  /** Answers the request here, or calls `next` to give it to Fastify (at once, or after counting the quota). */
  handle: (req: IncomingMessage, res: ServerResponse, next: () => void) => void
  /** From now on everything goes to Fastify (it answers 503 while closing). */
  close: () => void
}

const SLASH = 47
const QUESTION_MARK = 63

export function createHitLane (deps: HitLaneDeps): HitLane {
  const { ctx, core, plan, accessLog } = deps
  let open = !ctx.log.isLevelEnabled('debug')
  const countsQuota = plan === 'free' && ctx.config.freeDailyLimit !== 0
  // The headers before the per-request ones, flattened once: [name, value, name, value, ...].
  const leading: string[] = ['x-pricing-plan', plan]
  for (const [name, value] of Object.entries({ ...NOSNIFF_HEADERS, ...deps.commonHeaders })) leading.push(name, value)
  const quotaLog = ctx.log.child({ listener: plan })

  /** The held fresh entry for this query when the lane may answer it, else undefined. */
  function laneEntry (req: IncomingMessage, raw: string): CacheEntry | undefined {
    const parsed = core.peek(raw, req.headers)
    if (parsed === undefined || parsed.options.embed !== undefined || parsed.options.filter !== undefined) return undefined
    const entry = heldHit(ctx, parsed.options, parsed.cacheKey)
    if (entry === undefined) return undefined
    // @fastify/compress would compress this answer: leave it to the path that does.
    if (req.headers['accept-encoding'] !== undefined && req.headers['x-no-compression'] === undefined &&
      Number(headersOf(entry).length) >= deps.compressThreshold) return undefined
    return entry
  }

  function answer (req: IncomingMessage, res: ServerResponse, entry: CacheEntry, startedAt: number, lookupMs: number, quota: Record<string, string>): void {
    ctx.metrics.cache('HIT')
    const id = deps.newRequestId()
    const prepared = headersOf(entry)
    const headers = ['x-request-id', id, ...leading]
    for (const name in quota) headers.push(name, quota[name]!)
    const total = performance.now() - startedAt
    headers.push(
      'x-cache-status', 'HIT',
      'x-cache-ttl', prepared.ttl,
      'x-timestamp', prepared.timestamp,
      'cache-control', cacheControlOf({ entry, status: 'HIT' }, Date.now()),
      'x-fetch-mode', entry.meta.fetchMode,
      'x-fetch-time', prepared.fetchTime,
      'server-timing', serverTiming({ cache: lookupMs }, total),
      'content-type', JSON_TYPE,
      'x-response-time', pretty(total),
      'content-length', prepared.length
    )
    res.writeHead(200, headers)
    res.end(entry.body)
    accessLog({ reqId: id, method: 'GET', url: req.url!, status: 200, ms: performance.now() - startedAt, code: '', cache: 'HIT', counted: true })
  }

  /**
   * Answers here and returns true, or returns false for Fastify to take the request. On free, true once the quota
   * step is started: its continuation answers or hands over itself.
   */
  function tryAnswer (req: IncomingMessage, res: ServerResponse, next: () => void): boolean {
    const url = req.url
    if (!open || ctx.closing || req.method !== 'GET' || url === undefined ||
      url.charCodeAt(0) !== SLASH || url.charCodeAt(1) !== QUESTION_MARK) return false
    const startedAt = performance.now()
    const headers = req.headers
    // A body would have to be drained or the connection closed (http/request-body.ts): Fastify's path does that.
    if (headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0')) return false
    const key = headerValue(headers['x-api-key'])
    if (plan === 'pro' ? !ctx.verifyKey(key) : key !== undefined) return false
    const raw = url.slice(2)
    const entry = laneEntry(req, raw)
    if (entry === undefined) return false
    const lookupMs = performance.now() - startedAt
    if (!countsQuota) {
      answer(req, res, entry, startedAt, lookupMs, {})
      return true
    }

    // Free: step 3 before the answer, as on the Fastify path. The entry may have changed meanwhile: ask again.
    // Whatever happens from here, the request is counted once: a failure is handed over with its outcome.
    core.countQuota(deps.clientAddress.of(req), quotaLog).then(
      quota => {
        const now = laneEntry(req, raw)
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
