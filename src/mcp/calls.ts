// From a tool call to the `GET /` request it stands for, and from the served answer to the tool's result
// (docs/api.md §15): arguments coerced and validated against the tool's input schema, flattened into a query the
// way mql encodes options, `headers` turned into the call's own request headers; then V, the tool's value, as
// structured content and as JSON text, or the API error as an `isError` result.
import type { IncomingHttpHeaders } from 'node:http'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { JsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js'
import type { AppError } from '../errors.ts'
import { coerceObject, portableSchema, type Schema } from './schema.ts'
import { withJson } from './transport.ts'
import { commonProperties, type Args, type Tool } from './tools.ts'
import { API_HEADER_PREFIX } from '../schemas/read-emulation.ts'

/** A tool ready to be listed and called: its MCP definition and its compiled validator. */
export interface PreparedTool {
  readonly tool: Tool
  readonly definition: { name: string, description: string, inputSchema: Schema & { type: 'object' } }
  readonly validate: JsonSchemaValidator<Record<string, unknown>>
}

export function prepareTools (tools: readonly Tool[], compile: (schema: Schema) => JsonSchemaValidator<Record<string, unknown>>): ReadonlyMap<string, PreparedTool> {
  const common = commonProperties()
  const out = new Map<string, PreparedTool>()
  for (const tool of tools) {
    const { url, apiKey, ...shared } = common
    // Spelled for every client (portableSchema): the inspector's --strict mode found 301 type arrays before.
    const inputSchema = portableSchema({
      type: 'object',
      properties: { url, ...tool.properties, apiKey, ...shared },
      required: ['url', ...(tool.required ?? [])],
      additionalProperties: false
    }) as Schema & { type: 'object' }
    out.set(tool.name, { tool, definition: { name: tool.name, description: tool.description, inputSchema }, validate: compile(inputSchema) })
  }
  return out
}

/** Arguments coerced (docs/api.md §15, lenient inputs) and validated; the validator's message when they fail. */
export function readArguments (prepared: PreparedTool, raw: Record<string, unknown> | undefined): { args: Args } | { error: string } {
  const coerced = coerceObject(raw ?? {}, prepared.definition.inputSchema)
  const result = prepared.validate(coerced)
  return result.valid ? { args: coerced } : { error: result.errorMessage ?? 'invalid arguments' }
}

/** mql's encoding: objects flattened with dots, arrays with numeric segments; an empty object adds nothing. */
function flatten (value: unknown, key: string, out: string[]): void {
  if (value === undefined || value === null) return
  if (Array.isArray(value)) {
    value.forEach((item, i) => { flatten(item, `${key}.${i}`, out) })
    return
  }
  if (typeof value === 'object') {
    for (const [name, member] of Object.entries(value)) flatten(member, `${key}.${name}`, out)
    return
  }
  out.push(`${encodeURIComponent(key)}=${encodeURIComponent(String(value))}`)
}

/** The `GET /` a call stands for: its raw query (no key ever), and the request headers it carries. */
export interface CallRequest {
  query: string
  headers: IncomingHttpHeaders
}

/**
 * `url` first, then the tool's parameters; `apiKey` goes nowhere, and only the `x-api-header-*` entries of `headers`
 * (with those of the POST itself, which they override) reach the parser, as request headers.
 */
export function callRequest (tool: Tool, args: Args, postHeaders: IncomingHttpHeaders): CallRequest {
  // The arguments but `apiKey` and `headers`, copied in a loop: rest syntax that leaves names out copies through the
  // engine's slow path, and took most of this function's time. (`__proto__` is no name a tool's schema admits.)
  const rest: Record<string, unknown> = {}
  for (const name in args) if (name !== 'apiKey' && name !== 'headers') rest[name] = args[name]
  const headers = args.headers
  const parts: string[] = []
  const params = tool.params(rest)
  flatten(params.url, 'url', parts)
  for (const name in params) if (name !== 'url') flatten(params[name], name, parts)
  const forwarded: IncomingHttpHeaders = {}
  for (const name in postHeaders) {
    if (name.startsWith(API_HEADER_PREFIX)) forwarded[name] = postHeaders[name]
  }
  if (headers !== null && typeof headers === 'object') {
    for (const [name, value] of Object.entries(headers)) {
      const lower = name.toLowerCase()
      if (lower.startsWith(API_HEADER_PREFIX) && lower.length > API_HEADER_PREFIX.length) forwarded[lower] = String(value)
    }
  }
  return { query: parts.join('&'), headers: forwarded }
}

/**
 * A result with V (or P) as structured content and as JSON text: V is serialized once, and the result's JSON text is
 * made from it (the transport writes it as it is) rather than V being serialized again inside the whole.
 */
function resultOf (key: 'data' | 'error', value: unknown, extra?: CallToolResult['content'][number], isError?: true): CallToolResult {
  const json = JSON.stringify(value) as string | undefined
  const content: CallToolResult['content'] = [{ type: 'text', text: json ?? 'null' }]
  if (extra !== undefined) content.push(extra)
  const result: CallToolResult = isError === true ? { isError, structuredContent: { [key]: value }, content } : { structuredContent: { [key]: value }, content }
  if (json === undefined) return result
  return withJson(result, `{${isError === true ? '"isError":true,' : ''}"structuredContent":{"${key}":${json}},"content":${JSON.stringify(content)}}`)
}

/** A success: `{data: V}` as structured content and V as JSON text (docs/api.md §15). */
export function toolResult (value: unknown, image?: { data: string, mimeType: string }): CallToolResult {
  return resultOf('data', value, image === undefined ? undefined : { type: 'image', data: image.data, mimeType: image.mimeType })
}

/** The fields of the error envelope an agent gets (docs/api.md §11, §15); ERATE adds a hint. */
export interface ToolErrorFields {
  message: string
  code: string
  status: 'fail' | 'error'
  statusCode: number
  url: string
  more: string
  hint?: string
}

export function toolError (err: AppError, url: string, docsUrl: string, hint?: string): CallToolResult {
  const fields: ToolErrorFields = {
    message: err.message,
    code: err.code,
    status: err.status >= 500 ? 'error' : 'fail',
    statusCode: err.status,
    url,
    more: `${docsUrl}#${err.code.toLowerCase()}`,
    ...(hint === undefined ? {} : { hint })
  }
  return resultOf('error', fields, undefined, true)
}
