// The MCP server (docs/api.md §15) on the official TypeScript SDK: its low-level `Server` answers `initialize`,
// `tools/list` and `tools/call`, behind its web-standard Streamable HTTP transport in stateless mode (no session
// id), one server and one transport per POST as the SDK requires for stateless use. The tool list and the input
// validators are built once; what a call does is passed in (`call`), so this module knows nothing of HTTP routes,
// plans or the pipeline.
//
// The low-level `Server` rather than `McpServer`: McpServer takes Zod schemas, while the input schemas here are JSON
// Schema generated from the parameter table. Unknown tools and invalid arguments get the same answers McpServer
// gives (an `isError` result with the SDK's McpError message).
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv'
import {
  CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult
} from '@modelcontextprotocol/sdk/types.js'
import { prepareTools, readArguments, type PreparedTool } from './calls.ts'
import type { Args, Tool } from './tools.ts'

/** What a validated call runs: the tool, its arguments, and a signal that fires when the client cancels. */
export type CallTool = (prepared: PreparedTool, args: Args, signal: AbortSignal) => Promise<CallToolResult>

/** One POST's answer, for the route to send. */
export interface McpAnswer {
  status: number
  contentType: string | undefined
  body: string
}

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
}

function toolError (message: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: message }] }
}

export function createMcpServer (options: { name: string, version: string, tools: readonly Tool[] }): McpServer {
  // One validator instance (an Ajv) for every server: the SDK would otherwise build one per POST.
  const validator = new AjvJsonSchemaValidator()
  const tools = prepareTools(options.tools, (schema) => validator.getValidator(schema))
  const listed = { tools: [...tools.values()].map((prepared) => prepared.definition) }
  const info = { name: options.name, version: options.version }
  const instructions = 'Web page extraction by pagecast: each tool fetches (or renders) the page at `url` and returns one part of it. Results are cached; repeat calls are cheap.'

  function serverFor (call: CallTool): Server {
    const server = new Server(info, { capabilities: { tools: { listChanged: false } }, instructions, jsonSchemaValidator: validator })
    server.setRequestHandler(ListToolsRequestSchema, () => listed)
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const prepared = tools.get(request.params.name)
      if (prepared === undefined) return toolError(new McpError(ErrorCode.InvalidParams, `Tool ${request.params.name} not found`).message)
      const read = readArguments(prepared, request.params.arguments)
      if ('error' in read) {
        return toolError(new McpError(ErrorCode.InvalidParams, `Input validation error: Invalid arguments for tool ${prepared.tool.name}: ${read.error}`).message)
      }
      return await call(prepared, read.args, extra.signal)
    })
    return server
  }

  return {
    tools,
    async handle ({ body, sse, protocolVersion, call }) {
      const server = serverFor(call)
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !sse })
      await server.connect(transport)
      // The transport insists on both types in `accept`; which one answers was decided above.
      const headers: Record<string, string> = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' }
      if (protocolVersion !== undefined) headers['mcp-protocol-version'] = protocolVersion
      const response = await transport.handleRequest(new Request('http://pagecast/mcp', { method: 'POST', headers }), { parsedBody: body })
      // Stateless: the stream ends once every request of the POST is answered, so it is read whole. Both objects
      // then hold nothing open (no timer, no stream) and go with this POST; close() is not called, as it only
      // builds a "connection closed" error (stack trace included) for requests that are all answered already.
      const text = await response.text()
      return { status: response.status, contentType: response.headers.get('content-type') ?? undefined, body: text }
    }
  }
}
