// The MCP server (docs/api.md §15) on the official TypeScript SDK: its low-level `Server` answers `initialize`,
// `tools/list` and `tools/call` through the SDK's JSON-RPC layer (`Protocol`: request dispatch, the request schemas,
// errors, cancellation). One `Server` serves every POST of a listener, over a stateless transport of our own
// (mcp/transport.ts) that keeps the ids of concurrent POSTs apart; nothing is built per POST but the POST's own state.
// The tool list and the input validators are built once; what a call does comes with each POST (`call`), so this
// module knows nothing of HTTP routes, plans or the pipeline. A POST of one `tools/call` whose answer is in hand (its
// cache entry held in process, `quick`) is checked by the same SDK schemas and answered without the SDK's dispatch,
// with the same bytes (quickAnswer).
//
// The low-level `Server` rather than `McpServer`: McpServer takes Zod schemas, while the input schemas here are JSON
// Schema generated from the parameter table. Unknown tools and invalid arguments get the same answers McpServer
// gives (an `isError` result with the SDK's McpError message).
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { Protocol } from '@modelcontextprotocol/sdk/shared/protocol.js'
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv'
import {
  CallToolRequestSchema, ErrorCode, JSONRPCRequestSchema, ListToolsRequestSchema, McpError, SUPPORTED_PROTOCOL_VERSIONS,
  type CallToolResult, type RequestId
} from '@modelcontextprotocol/sdk/types.js'
import { PostTransport, resultResponse, withJson, type McpAnswer } from './transport.ts'
import { prepareTools, readArguments, type PreparedTool } from './calls.ts'
import type { Args, Tool } from './tools.ts'

/** What a validated call runs: the tool, its arguments, and a signal that fires when the client cancels. */
export type CallTool = (prepared: PreparedTool, args: Args, signal: AbortSignal) => Promise<CallToolResult>

/**
 * The same call answered at once when it waits on nothing (its cache entry is held in process), else undefined (or a
 * throw) before anything is done, and the call goes the full way (CallTool). Never rejects: API errors are results.
 */
export type QuickCall = (prepared: PreparedTool, args: Args) => Promise<CallToolResult> | undefined

export type { McpAnswer }

/** A `tools/call` that passed the quick way's checks (checkCall): its tool, its arguments as coerced, its id. */
export interface CheckedCall {
  readonly prepared: PreparedTool
  readonly args: Args
  readonly id: RequestId
}

export interface McpPost {
  /** The parsed JSON body: one JSON-RPC message or a batch. */
  body: unknown
  /** The client takes only an SSE stream (its `accept` names `text/event-stream` and not JSON). */
  sse: boolean
  /** The client's `mcp-protocol-version` header, which the transport checks. */
  protocolVersion: string | undefined
  call: CallTool
  /** Takes a POST of one `tools/call` that waits on nothing past the SDK's dispatch (see quickAnswer). */
  quick?: QuickCall
}

export interface McpServer {
  readonly tools: ReadonlyMap<string, PreparedTool>
  handle: (post: McpPost) => Promise<McpAnswer>
  /** The quick way's checks of a parsed message that depend on it alone (see quickAnswer): the call, or undefined. */
  check: (body: unknown) => CheckedCall | undefined
  /** Whether a POST's `mcp-protocol-version` header is one the transport takes (quickAnswer's other check). */
  takesVersion: (protocolVersion: string | undefined) => boolean
  /** Requests of all POSTs still waiting for their response (a quick answer is not dispatched, so never counted). */
  readonly pending: number
}

function toolError (message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }] }
}

type CallHandler = (request: { params: { name: string, arguments?: Record<string, unknown> } }, extra: { requestId: string | number, signal: AbortSignal }) => Promise<CallToolResult>

/**
 * `tools/call` registered as `Protocol` registers any request: the request parsed by its schema, nothing more.
 * `Server`'s own registration parses the request a second time and then the result, and hands on Zod's copy of it;
 * the result here is ours (typed, and its JSON text already made), and task-augmented calls are refused before any
 * handler runs, as this server declares no task capability.
 */
function setCallHandler (server: Server, handler: CallHandler): void {
  const register = Protocol.prototype.setRequestHandler as (this: Server, schema: typeof CallToolRequestSchema, handler: CallHandler) => void
  register.call(server, CallToolRequestSchema, handler)
}

export function createMcpServer (options: { name: string, version: string, tools: readonly Tool[] }): McpServer {
  const validator = new AjvJsonSchemaValidator()
  const tools = prepareTools(options.tools, (schema) => validator.getValidator(schema))
  const list = { tools: [...tools.values()].map((prepared) => prepared.definition) }
  const listed = withJson(list, JSON.stringify(list))
  const info = { name: options.name, version: options.version }
  const instructions = 'Web page extraction by pagecast: each tool fetches (or renders) the page at `url` and returns one part of it. Results are cached; repeat calls are cheap.'

  // The two checks of a `tools/call` on the full way in one pass: the transport's (a JSON-RPC request: the message
  // schema takes nothing else with a method and an id) and the handler's (`tools/call` and its params), both the SDK's.
  const CallToolMessageSchema = JSONRPCRequestSchema.extend({ method: CallToolRequestSchema.shape.method, params: CallToolRequestSchema.shape.params })
  const transport = new PostTransport<CallTool>()
  const server = new Server(info, { capabilities: { tools: { listChanged: false } }, instructions, jsonSchemaValidator: validator })
  server.setRequestHandler(ListToolsRequestSchema, () => listed)
  setCallHandler(server, async (request, extra) => {
    const call = transport.contextOf(extra.requestId)
    if (call === undefined) throw new McpError(ErrorCode.InternalError, 'The request has no POST waiting for it.')
    const prepared = tools.get(request.params.name)
    if (prepared === undefined) return toolError(new McpError(ErrorCode.InvalidParams, `Tool ${request.params.name} not found`).message)
    const read = readArguments(prepared, request.params.arguments)
    if ('error' in read) {
      return toolError(new McpError(ErrorCode.InvalidParams, `Input validation error: Invalid arguments for tool ${prepared.tool.name}: ${read.error}`).message)
    }
    return await call(prepared, read.args, extra.signal)
  })
  // connect() binds the transport at once; its start() does nothing.
  void server.connect(transport)

  /** Whether the transport takes a POST with this `mcp-protocol-version` header (none: the default version). */
  function takesVersion (protocolVersion: string | undefined): boolean {
    return protocolVersion === undefined || SUPPORTED_PROTOCOL_VERSIONS.includes(protocolVersion)
  }

  /**
   * The quick way's checks of a message, which depend on it alone: a `tools/call` by the SDK's schemas
   * (CallToolMessageSchema), not a task, a known tool, its arguments coerced and valid. Undefined: the full way.
   */
  function checkCall (body: unknown): CheckedCall | undefined {
    if (body === null || typeof body !== 'object' || (body as { method?: unknown }).method !== 'tools/call') return undefined
    const message = CallToolMessageSchema.safeParse(body)
    if (!message.success || message.data.params.task !== undefined) return undefined
    const prepared = tools.get(message.data.params.name)
    if (prepared === undefined) return undefined
    const read = readArguments(prepared, message.data.params.arguments)
    return 'error' in read ? undefined : { prepared, args: read.args, id: message.data.id }
  }

  /**
   * A POST of one `tools/call` (no batch, no SSE) whose answer waits on nothing: checked as the full way checks it,
   * by the SDK's schemas, the protocol version, the tool and its arguments (checkCall). Then the call's result is
   * written as the full way writes it (resultResponse). What this skips is
   * dispatch that changes nothing for an answer in hand: `Protocol` testing the message against the response schemas
   * first, the cancellation and task bookkeeping of a request that can be neither cancelled (a cancellation reaches
   * only a request of its own POST) nor a task (refused here as there), the transport's ids and slots. Anything
   * else (another method, an unknown tool, arguments refused, a task, a call that would wait) goes the full way.
   */
  function quickAnswer ({ body, sse, protocolVersion, quick }: McpPost): Promise<McpAnswer> | undefined {
    if (quick === undefined || sse || !takesVersion(protocolVersion)) return undefined
    const checked = checkCall(body)
    if (checked === undefined) return undefined
    let answer: Promise<CallToolResult> | undefined
    try {
      answer = quick(checked.prepared, checked.args)
    } catch {
      // Thrown before anything was done (a query that cannot be made): the full way answers it as Protocol does.
      return undefined
    }
    return answer?.then((result) => ({ status: 200, contentType: 'application/json', body: resultResponse(result, checked.id) }))
  }

  return {
    tools,
    handle: async (post) => await (quickAnswer(post) ?? transport.handle(post.body, { sse: post.sse, protocolVersion: post.protocolVersion, context: post.call })),
    check: checkCall,
    takesVersion,
    get pending () { return transport.pending }
  }
}
