// POST /mcp in the hit lane (routes/hit-lane.ts), pro listener only: a POST of one `tools/call` whose answer is in
// hand (routes/mcp.ts's quick way: the SDK's schemas, the tool and its arguments checked, the entry held in process)
// is answered before Fastify, with the headers and access line the Fastify path gives it. The lane reads the body
// itself, so a POST it does not answer is handed to Fastify with that body (markPreread), which parses it as if it
// came off the socket. It takes nothing it could not answer the same way: a body that is not plain JSON of one
// message, an `apiKey` argument, SSE, a compressible answer (any accept-encoding), a forwarded host (TRUST_PROXY).
// A call whose checks passed is kept by its body with the id cut out (routes/mcp-memo.ts): the same call under a new
// id is neither parsed nor checked again, only looked for in hand, and answered under its own id.
import type { IncomingMessage, ServerResponse } from 'node:http'
import { LRUCache } from 'lru-cache'
import type { AppContext } from '../context.ts'
import { JSON_TYPE, pretty } from '../http/reply.ts'
import { declaredLength } from '../http/request-body.ts'
import type { RequestId } from '@modelcontextprotocol/sdk/types.js'
import { deepFreeze } from '../util/freeze.ts'
import { markPreread, MCP_BODY_LIMIT, MCP_MAX_DEPTH, presentedKey, wantsSse, type LaneCall, type McpQuick } from './mcp.ts'
import { jsonDeeperThan } from '../util/json-depth.ts'
import { idSlot, MEMO_SIZE, MEMO_TEXT, parseCall } from './mcp-memo.ts'
import { headerValue } from './serve.ts'

/** Bodies the lane reads; larger ones (rare for one call) go to Fastify unread. */
const MAX_LANE_BODY = Math.min(64 * 1024, MCP_BODY_LIMIT)
const JSON_MEDIA = /^application\/json\s*(;|$)/i
// Fastify's JSON parser refuses these keys (prototype poisoning); a body that has them anywhere goes to it.
const POISON = /__proto__|constructor/

export interface McpLaneDeps {
  ctx: AppContext
  quick: McpQuick
  /** The hit lane's writer: request id and leading headers, `tail`, body, access line. */
  send: (req: IncomingMessage, res: ServerResponse, tail: readonly string[], body: string, startedAt: number) => void
}

/** Whether the key is a tenant's (the lane leaves EAUTH to the Fastify path). */
function knownKey (ctx: AppContext, key: string | undefined): boolean {
  return key !== undefined && ctx.tenants.byKey(key) !== undefined
}

/** Returns true when the lane takes the POST (it answers it, or hands it over with its body once read). */
export function createMcpLane (deps: McpLaneDeps): (req: IncomingMessage, res: ServerResponse, next: () => void) => boolean {
  const { ctx } = deps
  const untrusted = ctx.config.trustProxy === false
  // The calls checked before, by their key (IdSlot).
  const memo = new LRUCache<string, LaneCall>({ max: MEMO_SIZE })

  function answer (req: IncomingMessage, res: ServerResponse, { text, bytes }: { text: string, bytes: number }, startedAt: number): void {
    deps.send(req, res, [
      'content-type', JSON_TYPE,
      'x-response-time', pretty(performance.now() - startedAt),
      'cache-control', 'no-store',
      'content-length', String(bytes)
    ], text, startedAt)
  }

  function handOver (req: IncomingMessage, body: Buffer, next: () => void): void {
    markPreread(req, body)
    next()
  }

  /**
   * After the body is read: the quick answer, or Fastify with the body. A call checked before (the same body but for
   * its `id`, routes/mcp-memo.ts) is not parsed or checked again; its answer is looked for as any other's.
   */
  function decide (req: IncomingMessage, res: ServerResponse, next: () => void, body: Buffer, startedAt: number): void {
    const text = body.toString('utf8')
    // Bodies Fastify's parser refuses (poisoning, nesting past MCP_MAX_DEPTH) go to it, to be answered there.
    if (POISON.test(text) || jsonDeeperThan(text, MCP_MAX_DEPTH)) {
      handOver(req, body, next)
      return
    }
    const slot = text.length <= MEMO_TEXT ? idSlot(text) : undefined
    const known = slot === undefined ? undefined : memo.get(slot.key)
    if (known !== undefined) {
      reply(req, res, next, body, known, slot!.id, startedAt)
      return
    }
    let parsed: { message: unknown, exact: boolean }
    try {
      parsed = parseCall(text, slot)
    } catch {
      handOver(req, body, next)
      return
    }
    const message = parsed.message
    const args = (message as { params?: { arguments?: { apiKey?: unknown } } } | null)?.params?.arguments
    if (message === null || typeof message !== 'object' || Array.isArray(message) || (args !== null && typeof args === 'object' && 'apiKey' in args)) {
      handOver(req, body, next)
      return
    }
    const checked = deps.quick.check(message)
    if (checked === undefined) {
      handOver(req, body, next)
      return
    }
    // Kept frozen (its arguments and query; the tool is the server's): later POSTs share it.
    if (parsed.exact) {
      const { prepared, args, mapped } = checked.call
      memo.set(slot!.key, Object.freeze({ prepared, args: deepFreeze(args), mapped: deepFreeze(mapped) }))
    }
    reply(req, res, next, body, checked.call, checked.id, startedAt)
  }

  function reply (req: IncomingMessage, res: ServerResponse, next: () => void, body: Buffer, call: LaneCall, id: RequestId, startedAt: number): void {
    const host = req.headers.host ?? ''
    const text = deps.quick.answer(call, id, req.headers, headerValue(req.headers['mcp-protocol-version']), query => `http://${host}/?${query}`)
    if (text === undefined) handOver(req, body, next)
    else answer(req, res, text, startedAt)
  }

  return function tryPost (req, res, next) {
    const h = req.headers
    const length = declaredLength(h)
    if (!untrusted || req.url !== '/mcp' || !JSON_MEDIA.test(h['content-type'] ?? '') || length === undefined ||
      length === 0 || length > MAX_LANE_BODY || h['content-encoding'] !== undefined || h['accept-encoding'] !== undefined ||
      wantsSse(h.accept) || !knownKey(ctx, presentedKey(h))) return false
    const startedAt = performance.now()
    const chunks: Buffer[] = []
    // A client gone mid-body: nothing to answer, and no unhandled 'error' event.
    req.on('error', () => {})
    req.on('data', (chunk: Buffer) => { chunks.push(chunk) })
    req.once('end', () => {
      try {
        decide(req, res, next, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), startedAt)
      } catch (err) {
        if (res.headersSent) ctx.log.error({ err }, 'hit lane failed after writing its answer')
        else handOver(req, Buffer.concat(chunks), next)
      }
    })
    return true
  }
}
