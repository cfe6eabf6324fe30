// POST /mcp (docs/api.md §15): the API as MCP tools. Thin, like the other routes: the body is parsed here (this
// plugin's own JSON parser, bounded in size and depth), the plan is checked for the whole POST (EPRO, EAUTH as HTTP errors), then the
// SDK's server (mcp/server.ts) dispatches, and each `tools/call` is served by the steps every route shares
// (routes/serve.ts): the quota, counted once per call, then the query, cache, single flight and pipeline under the
// call's deadline. API errors become `isError` results; the POST itself answers 200.
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http'
import { Readable } from 'node:stream'
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { CallToolResult, RequestId } from '@modelcontextprotocol/sdk/types.js'
import type { AppContext } from '../context.ts'
import type { CacheEntry, Served } from '../cache/entries.ts'
import type { ExtractOptions } from '../schemas/options.ts'
import { AppError, toAppError } from '../errors.ts'
import { applyFilter, envelopeOf, getPath, JSON_TYPE } from '../http/reply.ts'
import { serviceVersion } from '../version.ts'
import { createMcpServer, type CallTool, type QuickCall } from '../mcp/server.ts'
import { callRequest, toolError, toolResult, type CallRequest, type PreparedTool } from '../mcp/calls.ts'
import { resultAnswer } from '../mcp/transport.ts'
import { TOOLS, type Args, type Tool } from '../mcp/tools.ts'
import { API_HEADER_PREFIX } from '../schemas/read-emulation.ts'
import { headerValue, type Ran, type ServeCore, type WatchClient } from './serve.ts'
import { MAX_JSON_DEPTH } from '../schemas/grammar.ts'
import { jsonDeeperThan } from '../util/json-depth.ts'

/** The largest body POST /mcp reads. */
export const MCP_BODY_LIMIT = 1024 * 1024
/**
 * The deepest nesting of arrays and objects a body may have: a message, its params and arguments, and an argument
 * as deep as a query's JSON value may be. Deeper is refused before anything walks it (a stack overflow otherwise).
 */
export const MCP_MAX_DEPTH = MAX_JSON_DEPTH + 8
/** The methods a CORS preflight of /mcp allows. */
export const MCP_CORS_METHODS = ['GET', 'HEAD', 'POST', 'OPTIONS']
/** Screenshots below this size come back inline too (docs/api.md §15). */
const INLINE_IMAGE_BYTES = 1024 * 1024

interface Message { method?: unknown, params?: { name?: unknown, arguments?: { apiKey?: unknown } } }

function messagesOf (body: unknown): Message[] {
  const list = Array.isArray(body) ? body : [body]
  return list.map((item) => item !== null && typeof item === 'object' ? item as Message : {})
}

/** The key a request presents: `x-api-key`, else `Authorization: Bearer <key>`. */
export function presentedKey (headers: IncomingHttpHeaders): string | undefined {
  const key = headerValue(headers['x-api-key'])
  if (key !== undefined) return key
  const match = /^bearer\s+(\S+)\s*$/i.exec(headers.authorization ?? '')
  return match?.[1]
}

/** Whether the client takes only an SSE stream: its `accept` names `text/event-stream` and not JSON. */
export function wantsSse (accept: string | undefined): boolean {
  const value = accept ?? ''
  return value.includes('text/event-stream') && !value.includes('application/json') && !value.includes('*/*')
}

/** A tool call's own key (`apiKey`), when it brings one. */
function argumentKey (message: Message): string | undefined {
  if (message.method !== 'tools/call') return undefined
  const key = message.params?.arguments?.apiKey
  return typeof key === 'string' ? key : undefined
}

/** V: the tool's value in the served `data` (filtered first), or the value at `embed`; ENOTFOUND when that has none. */
function valueOf (tool: Tool, served: Served, options: Readonly<ExtractOptions>): unknown {
  const envelope = envelopeOf(served)
  const data = options.filter === undefined ? envelope.data : applyFilter(envelope.data, options.filter)
  const path = tool.value ?? options.embed
  const value = path === undefined ? data : getPath(data, path)
  if (path !== undefined && tool.value === undefined && (value === undefined || value === null)) {
    throw new AppError('ENOTFOUND', { data: { embed: `The \`${path}\` field has no value.` } })
  }
  return value
}

// Results by entry and call: an entry held in process answers the same call many times, and nothing in it changes
// (reply.ts keeps its parsed envelope the same way), so V is picked and serialized once per entry, not per hit.
const results = new WeakMap<CacheEntry, Map<string, CallToolResult>>()

/** The result of a call whose value is all of it (every tool but the screenshot, whose image is read apart). */
function resultFrom (tool: Tool, served: Served, options: Readonly<ExtractOptions>): CallToolResult {
  const key = `${tool.name}\u0000${options.embed ?? ''}\u0000${options.filter?.join('\u0000') ?? ''}`
  let byCall = results.get(served.entry)
  const known = byCall?.get(key)
  if (known !== undefined) return known
  const value = valueOf(tool, served, options)
  const result = toolResult(value === undefined || value === null ? tool.empty ?? null : value)
  if (byCall === undefined) results.set(served.entry, byCall = new Map())
  byCall.set(key, result)
  return result
}

/** What a call needs of the POST it came in: its headers and logger, its error URL, its quota step, its client watch. */
interface CallContext {
  headers: IncomingHttpHeaders
  log: FastifyBaseLogger
  errorUrl: (query: string) => string
  /** Counts the call on free (ERATE when spent), with the quota headers set on the answer. */
  countQuota: () => Promise<void>
  watch: (signal: AbortSignal) => WatchClient
}

/** A call the hit lane may answer (McpQuick.check): checked as the quick way checks it, its query made. */
export interface LaneCall {
  readonly prepared: PreparedTool
  readonly args: Args
  /** The call's `GET /` with no `x-api-header-*` of the POST's own (those are added per POST). */
  readonly mapped: CallRequest
}

/**
 * The quick way of POST /mcp for the hit lane (routes/hit-lane.ts), on pro only (no quota step), in two parts: the
 * checks that depend on the message alone, which the lane may keep for a later POST of the same message (another id
 * aside), and the answer, which looks for the entry in hand on every POST.
 */
export interface McpQuick {
  /** A parsed body's call and its id when the quick way takes it, else undefined (the POST must go to Fastify). */
  check: (body: unknown) => { call: LaneCall, id: RequestId } | undefined
  /** The response text of a checked call under `id` when its answer is in hand, else undefined (Fastify's then). */
  answer: (call: LaneCall, id: RequestId, headers: IncomingHttpHeaders, protocolVersion: string | undefined, errorUrl: (query: string) => string) => { text: string, bytes: number } | undefined
}

function forwardsHeaders (headers: IncomingHttpHeaders): boolean {
  for (const name in headers) if (name.startsWith(API_HEADER_PREFIX)) return true
  return false
}

const PREREAD = Symbol('pagecast.mcpBody')

/** Hands a body the hit lane read to this route, which parses it as if it came off the socket. */
export function markPreread (raw: IncomingMessage, body: Buffer): void {
  (raw as IncomingMessage & { [PREREAD]?: Buffer })[PREREAD] = body
}

function bodyError (detail: string, cause?: unknown): AppError {
  return new AppError('EINVALQUERY', { data: { body: detail }, cause })
}

export async function mcpRoutes (app: FastifyInstance, { ctx, core, quick }: { ctx: AppContext, core: ServeCore, quick?: (q: McpQuick) => void }): Promise<void> {
  const server = createMcpServer({ name: 'pagecast', version: serviceVersion(), tools: TOOLS })
  const json = app.getDefaultJsonParser('error', 'error')
  // A body the hit lane read before handing the POST over is read again from here (Fastify's body limit applies).
  app.addHook('preParsing', (request, _reply, payload, done) => {
    const preread = (request.raw as IncomingMessage & { [PREREAD]?: Buffer })[PREREAD]
    if (preread === undefined) { done(null, payload); return }
    const stream = Readable.from([preread]) as Readable & { receivedEncodedLength?: number }
    stream.receivedEncodedLength = preread.length
    done(null, stream)
  })
  // This scope's only parser: JSON, prototype poisoning refused; anything else is Fastify's 415.
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: MCP_BODY_LIMIT }, (request, body, done) => {
    const text = String(body)
    if (jsonDeeperThan(text, MCP_MAX_DEPTH)) {
      done(bodyError(`The body nests arrays and objects more than ${MCP_MAX_DEPTH} levels deep.`))
      return
    }
    json(request, text, (err, parsed) => {
      if (err === null) done(null, parsed)
      else done(bodyError('The body is not valid JSON.', err))
    })
  })
  app.setErrorHandler(async (err: Error & { code?: string }, _request, reply) => {
    // Fastify's own body errors, said plainly; everything else goes to the app's handler unchanged.
    if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') throw bodyError(`The body is larger than ${MCP_BODY_LIMIT} bytes.`, err)
    if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') throw bodyError('The body must be JSON (content-type: application/json).', err)
    if (err.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') throw bodyError('The body is empty; it must be a JSON-RPC message.', err)
    throw err
  })

  /** Plan of the whole POST (docs/api.md §15): on free no key at all; on pro a registered key for every message. */
  function checkPlan (request: FastifyRequest, messages: Message[]): void {
    const fromHeader = presentedKey(request.headers)
    if (core.plan === 'free') {
      core.checkPlan(fromHeader)
      return
    }
    for (const message of messages) core.checkPlan(argumentKey(message) ?? fromHeader)
  }

  function watchClient (reply: FastifyReply, signal: AbortSignal): WatchClient {
    return (abort) => {
      const onClose = (): void => { if (!reply.raw.writableFinished) abort() }
      reply.raw.once('close', onClose)
      signal.addEventListener('abort', abort, { once: true })
      return () => {
        reply.raw.removeListener('close', onClose)
        signal.removeEventListener('abort', abort)
      }
    }
  }

  /** The two ways of a POST's calls (mcp/server.ts): the full one, and the one for an answer that waits on nothing. */
  function callsFor (request: FastifyRequest, reply: FastifyReply): { call: CallTool, quick: QuickCall } {
    return callsWith({
      headers: request.headers,
      log: request.log,
      errorUrl: query => `${request.protocol}://${request.host}/?${query}`,
      countQuota: async () => { reply.headers(await countCall(request, reply)) },
      watch: signal => watchClient(reply, signal)
    })
  }

  /** A call's API error as its `isError` result, logged. */
  function failed (c: Pick<CallContext, 'log' | 'errorUrl'>, tool: Tool, query: string, err: unknown): CallToolResult {
    const appError = toAppError(err)
    c.log[appError.status >= 500 ? 'error' : 'info']({ tool: tool.name, code: appError.code, detail: appError.data, ...(appError.status >= 500 ? { err: appError.cause ?? appError } : {}) }, 'tool call failed')
    return toolError(appError, c.errorUrl(query), ctx.config.docsUrl, appError.code === 'ERATE' ? rateHint(appError) : undefined)
  }

  function callsWith (c: CallContext): { call: CallTool, quick: QuickCall } {
    /** A call from its checks to its result: its `apiKey`'s plan, the quota (free only), then the query (run). */
    async function serve (tool: Tool, args: Args, { query, headers }: CallRequest, watch: WatchClient, held?: Ran): Promise<CallToolResult> {
      try {
        if (core.plan === 'free') {
          if (args.apiKey !== undefined) core.checkPlan(String(args.apiKey))
          await c.countQuota()
        }
        // On pro, the call is counted against its key's tenant (docs/api.md §16).
        const tenant = core.plan === 'pro' ? core.checkPlan(args.apiKey !== undefined ? String(args.apiKey) : presentedKey(c.headers)) : undefined
        return await core.run(query, headers, c.log, watch, async ({ served, options }) => await answerOf(tool, served, options), held, tenant)
      } catch (err) {
        return failed(c, tool, query, err)
      }
    }

    return {
      call: async ({ tool }, args, signal) => await serve(tool, args, callRequest(tool, args, c.headers), c.watch(signal)),
      quick: ({ tool }, args) => {
        // A screenshot's image may have to be read from storage: that call goes the full way.
        if (tool.name === 'microlink_screenshot') return undefined
        const mapped = callRequest(tool, args, c.headers)
        const held = core.held(mapped.query, mapped.headers)
        // An answer in hand waits on no client.
        return held === undefined ? undefined : serve(tool, args, mapped, () => () => {}, held)
      }
    }
  }

  async function answerOf (tool: Tool, served: Served, options: Readonly<ExtractOptions>): Promise<CallToolResult> {
    if (tool.name !== 'microlink_screenshot') return resultFrom(tool, served, options)
    const value = valueOf(tool, served, options)
    if (value === undefined || value === null) return toolResult(tool.empty ?? null)
    return toolResult(value, await inlineImage(served.fresh?.files.screenshot, served.entry.meta.files.screenshot))
  }

  /** Counts one call on free; a spent quota still tells the client its state in the headers, as GET / does. */
  async function countCall (request: FastifyRequest, reply: FastifyReply): Promise<Record<string, string>> {
    try {
      return await core.countQuota(request.ip, request.log)
    } catch (err) {
      if (err instanceof AppError && err.code === 'ERATE') {
        const { 'retry-after': _retry, ...quota } = err.headers
        reply.headers(quota)
      }
      throw err
    }
  }

  function rateHint (err: AppError): string {
    const reset = Number(err.headers['x-rate-limit-reset'])
    const when = Number.isFinite(reset) ? new Date(reset * 1000).toISOString() : 'in at most 24 hours'
    return `The free quota of ${ctx.config.freeDailyLimit} calls a day is spent; it resets at ${when}. The pro listener (port ${ctx.config.proPort}, with an API key) has no quota.`
  }

  async function inlineImage (inHand: { body: Buffer, contentType: string } | undefined, key: string | undefined): Promise<{ data: string, mimeType: string } | undefined> {
    const file = inHand ?? (key === undefined ? undefined : await ctx.storage.get(key))
    if (file === undefined || file.body.length >= INLINE_IMAGE_BYTES) return undefined
    return { data: file.body.toString('base64'), mimeType: file.contentType }
  }

  if (quick !== undefined && core.plan === 'pro') {
    quick({
      // The quick way's checks (server.check), then the query the call stands for; a screenshot (whose image may
      // have to be read from storage) and a query that cannot be made go to Fastify, as they leave the quick way.
      check: (body) => {
        const checked = server.check(body)
        if (checked === undefined || checked.prepared.tool.name === 'microlink_screenshot') return undefined
        let mapped: CallRequest
        try {
          mapped = callRequest(checked.prepared.tool, checked.args, {})
        } catch {
          return undefined
        }
        return { call: { prepared: checked.prepared, args: checked.args, mapped }, id: checked.id }
      },
      // What `serve` does on pro with the entry in hand (no quota step: the hit counted, then the result), at once.
      answer: ({ prepared, args, mapped }, id, headers, protocolVersion, errorUrl) => {
        if (!server.takesVersion(protocolVersion)) return undefined
        const { query, headers: callHeaders } = forwardsHeaders(headers) ? callRequest(prepared.tool, args, headers) : mapped
        const held = core.held(query, callHeaders)
        if (held === undefined) return undefined
        // The lane took the call for a known key; a plan that may refuse it sends it the full way.
        const key = presentedKey(headers)
        const tenant = key === undefined ? undefined : ctx.tenants.byKey(key)
        if (tenant === undefined || !core.admitsHeld(tenant, query, callHeaders, held.options)) return undefined
        let result: CallToolResult
        try {
          result = core.answerHeld(held, ({ served, options }) => resultFrom(prepared.tool, served, options), tenant)
        } catch (err) {
          result = failed({ log: ctx.log, errorUrl }, prepared.tool, query, err)
        }
        return resultAnswer(result, id)
      }
    })
  }

  app.post('/mcp', { bodyLimit: MCP_BODY_LIMIT }, async (request, reply) => {
    if (request.body === undefined) throw bodyError('A JSON-RPC message is required (content-type: application/json).')
    checkPlan(request, messagesOf(request.body))
    const answer = await server.handle({
      body: request.body,
      sse: wantsSse(request.headers.accept),
      protocolVersion: headerValue(request.headers['mcp-protocol-version']),
      ...callsFor(request, reply)
    })
    reply.code(answer.status)
    if (answer.contentType !== undefined) reply.type(answer.contentType)
    return await reply.send(answer.body === '' ? undefined : answer.body)
  })

  // CORS (docs/api.md §6): a browser's preflight of POST /mcp gets POST among the methods; the requested headers are
  // echoed as on every path (content-type, accept, authorization, x-api-key, mcp-protocol-version, …). Answered by
  // @fastify/cors's hook with this route's options; other paths keep GET, HEAD, OPTIONS.
  app.options('/mcp', { config: { cors: { methods: MCP_CORS_METHODS } } }, async (_request, reply) => await reply.code(204).send())

  // Stateless: there is no stream to open and no session to end (docs/api.md §15). HEAD follows GET.
  app.get('/mcp', async (_request, reply) => {
    return await reply.code(405).header('allow', 'POST').type(JSON_TYPE)
      .send({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: POST /mcp takes one JSON-RPC message per request; there is no stream to open.' }, id: null })
  })
}

