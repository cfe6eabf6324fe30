// The MCP server (docs/api.md §15) on the official TypeScript SDK: its low-level `Server` answers `initialize`,
// `tools/list` and `tools/call` through the SDK's JSON-RPC layer (`Protocol`: request dispatch, the request schemas,
// errors, cancellation). One `Server` serves every POST of a listener, over a stateless transport of our own
// (mcp/transport.ts) that keeps the ids of concurrent POSTs apart; nothing is built per POST but the POST's own state.
// The tool list and the input validators are built once; what a call does comes with each POST (`call`), so this
// module knows nothing of HTTP routes, plans or the pipeline.
//
// The low-level `Server` rather than `McpServer`: McpServer takes Zod schemas, while the input schemas here are JSON
// Schema generated from the parameter table. Unknown tools and invalid arguments get the same answers McpServer
// gives (an `isError` result with the SDK's McpError message).
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { Protocol } from '@modelcontextprotocol/sdk/shared/protocol.js'
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv'
import {
  CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult
} from '@modelcontextprotocol/sdk/types.js'
import { PostTransport, withJson, type McpAnswer } from './transport.ts'
import { prepareTools, readArguments, type PreparedTool } from './calls.ts'
import type { Args, Tool } from './tools.ts'

/** What a validated call runs: the tool, its arguments, and a signal that fires when the client cancels. */
export type CallTool = (prepared: PreparedTool, args: Args, signal: AbortSignal) => Promise<CallToolResult>

export type { McpAnswer }

export interface McpPost {
  /** The parsed JSON body: one JSON-RPC message or a batch. */
  body: unknown
  /** The client takes only an SSE stream (its `accept` names `text/event-stream` and not JSON). */
  sse: boolean
  /** The client's `mcp-protocol-version` header, which the transport checks. */
  protocolVersion: string | undefined
  call: CallTool
}

export interface McpServer {
  readonly tools: ReadonlyMap<string, PreparedTool>
  handle: (post: McpPost) => Promise<McpAnswer>
  /** Requests of all POSTs still waiting for their response. */
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

  return {
    tools,
    handle: async ({ body, sse, protocolVersion, call }) => await transport.handle(body, { sse, protocolVersion, context: call }),
    get pending () { return transport.pending }
  }
}
