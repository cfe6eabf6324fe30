// The Streamable HTTP transport of POST /mcp (docs/api.md §15), stateless, for one SDK `Server` that serves every
// POST of a listener: the SDK's own transports bind one connection, so a stateless server would otherwise need a new
// `Server` and a new transport (and a WHATWG Request and Response) for each POST. This one takes a POST's parsed
// body, checks it as the SDK's `WebStandardStreamableHTTPServerTransport` does (JSON-RPC messages by the SDK's schema,
// batch size, one `initialize` alone, the `mcp-protocol-version` header), hands each message to the server, and
// answers once every request of the POST has its response: JSON (one object, or an array for several requests), or
// an SSE stream for a client that takes only that, or 202 when the POST holds no request.
//
// Ids are kept apart: concurrent POSTs all use small ids (1, 2, …), so each request reaches the server under an id
// of this transport's own (a counter) and its response leaves under the client's id again. A cancellation reaches the
// server only for a request of the same POST; any other (it cannot name a request of this stateless server) is dropped.
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js'
import { MAX_BATCH_SIZE } from '@modelcontextprotocol/sdk/server/requestBody.js'
import {
  isInitializeRequest, JSONRPCMessageSchema, SUPPORTED_PROTOCOL_VERSIONS, type JSONRPCMessage, type MessageExtraInfo, type RequestId
} from '@modelcontextprotocol/sdk/types.js'

/** One POST's answer, for the route to send. */
export interface McpAnswer {
  status: number
  contentType: string | undefined
  body: string
}

export interface PostOptions<C> {
  /** The client takes only an SSE stream. */
  sse: boolean
  /** The client's `mcp-protocol-version` header. */
  protocolVersion: string | undefined
  /** What the server's handlers get for this POST's requests (contextOf). */
  context: C
}

interface Post<C> {
  readonly sse: boolean
  readonly context: C
  /** Requests of this POST still without a response. */
  open: number
  /** JSON: each response at its request's place in the POST. */
  readonly answers: Array<string | undefined>
  /** SSE: each message as it was sent. */
  readonly events: string[]
  readonly resolve: (answer: McpAnswer) => void
}

interface Slot<C> {
  readonly post: Post<C>
  /** The client's id. */
  readonly id: RequestId
  readonly index: number
  /** Answered, or cancelled by the client. */
  done: boolean
}

/** JSON text already made for an object (a tool result, the tool list), used instead of serializing it again. */
const serialized = new WeakMap<object, string>()

/** Records `json` as the JSON text of `value`: the transport writes it as it is. `json` must be JSON.stringify(value). */
export function withJson<T extends object> (value: T, json: string): T {
  serialized.set(value, json)
  return value
}

/**
 * A result's response under the client's id, as the SDK's `Protocol` builds it (`{result, jsonrpc, id}`) and
 * JSON.stringify writes it; a result whose JSON text is known (withJson) is not serialized again.
 */
export function resultResponse (result: object, id: RequestId): string {
  const json = serialized.get(result)
  return json === undefined ? JSON.stringify({ result, jsonrpc: '2.0', id }) : `{"result":${json},"jsonrpc":"2.0","id":${JSON.stringify(id)}}`
}

function rpcError (status: number, code: number, message: string): McpAnswer {
  return { status, contentType: 'application/json', body: JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }) }
}

/** After the schema: a message with both `method` and `id` is a request (responses have no method, notifications no id). */
function isRequest (message: JSONRPCMessage): message is JSONRPCMessage & { id: RequestId, method: string } {
  return 'method' in message && 'id' in message
}

function isCancellation (message: JSONRPCMessage): message is JSONRPCMessage & { method: string, params: { requestId?: RequestId } } {
  return 'method' in message && message.method === 'notifications/cancelled' && !('id' in message)
}

export class PostTransport<C> implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void

  private next = 0
  private readonly slots = new Map<number, Slot<C>>()

  async start (): Promise<void> {}

  async close (): Promise<void> {
    this.onclose?.()
  }

  /** The context of the POST a request (by the id the server saw) came in. */
  contextOf (id: RequestId): C | undefined {
    return typeof id === 'number' ? this.slots.get(id)?.post.context : undefined
  }

  /** Requests waiting for their response, across POSTs (for tests and metrics). */
  get pending (): number {
    return this.slots.size
  }

  async handle (body: unknown, options: PostOptions<C>): Promise<McpAnswer> {
    if (Array.isArray(body) && body.length > MAX_BATCH_SIZE) {
      return rpcError(400, -32600, `Invalid Request: Batch must not exceed ${MAX_BATCH_SIZE} messages`)
    }
    const messages: JSONRPCMessage[] = []
    for (const item of Array.isArray(body) ? body as unknown[] : [body]) {
      const parsed = JSONRPCMessageSchema.safeParse(item)
      if (!parsed.success) return rpcError(400, -32700, 'Parse error: Invalid JSON-RPC message')
      messages.push(parsed.data)
    }
    const initializing = messages.some((message) => 'method' in message && message.method === 'initialize' && isInitializeRequest(message))
    if (initializing && messages.length > 1) return rpcError(400, -32600, 'Invalid Request: Only one initialization request is allowed')
    const version = options.protocolVersion
    if (!initializing && version !== undefined && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
      return rpcError(400, -32000, `Bad Request: Unsupported protocol version: ${version} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`)
    }
    if (!messages.some(isRequest)) {
      // Notifications (and responses) only: no request of this POST can be cancelled.
      for (const message of messages) if (!isCancellation(message)) this.onmessage?.(message)
      return { status: 202, contentType: undefined, body: '' }
    }
    return await new Promise<McpAnswer>((resolve) => {
      const post: Post<C> = { sse: options.sse, context: options.context, open: 0, answers: [], events: [], resolve }
      const ours = new Map<RequestId, number>()
      // Every request is registered before any reaches the server.
      const delivered = messages.map((message) => {
        if (!isRequest(message)) return message
        const id = ++this.next
        this.slots.set(id, { post, id: message.id, index: post.open++, done: false })
        ours.set(message.id, id)
        return { ...message, id }
      })
      for (const message of delivered) {
        if (!isCancellation(message)) {
          this.onmessage?.(message)
          continue
        }
        const target = message.params.requestId === undefined ? undefined : ours.get(message.params.requestId)
        if (target === undefined) continue
        this.onmessage?.({ ...message, params: { ...message.params, requestId: target } })
        this.cancelled(target)
      }
    })
  }

  /** A cancelled request gets no response (the server stops its handler); the POST stops waiting for it. */
  private cancelled (id: number): void {
    const slot = this.slots.get(id)
    if (slot === undefined || slot.done) return
    slot.done = true
    // Its handler starts on a later microtask and may still ask for its context; then the slot goes.
    setImmediate(() => { if (this.slots.get(id) === slot) this.slots.delete(id) })
    if (--slot.post.open === 0) this.finish(slot.post)
  }

  async send (message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if ('result' in message || 'error' in message) {
      const id = message.id
      const slot = typeof id === 'number' ? this.slots.get(id) : undefined
      if (slot === undefined) throw new Error(`No POST waits for request ID ${String(id)}`)
      this.slots.delete(id as number)
      if (slot.done) return
      slot.done = true
      const text = this.serialize(message, slot.id)
      if (slot.post.sse) slot.post.events.push(text)
      else slot.post.answers[slot.index] = text
      if (--slot.post.open === 0) this.finish(slot.post)
      return
    }
    // A notification or request of the server about one of the POST's requests goes on that POST's SSE stream; a
    // JSON answer carries responses only, and a stateless server has no stream of its own for anything else.
    const related = options?.relatedRequestId
    const slot = typeof related === 'number' ? this.slots.get(related) : undefined
    if (slot !== undefined && slot.post.sse && !slot.done) slot.post.events.push(JSON.stringify(message))
  }

  /** The response under the client's id. */
  private serialize (message: JSONRPCMessage, id: RequestId): string {
    return 'result' in message ? resultResponse(message.result, id) : JSON.stringify({ ...message, id })
  }

  private finish (post: Post<C>): void {
    if (post.sse) {
      post.resolve({ status: 200, contentType: 'text/event-stream', body: post.events.map((event) => `event: message\ndata: ${event}\n\n`).join('') })
      return
    }
    const answers = post.answers.filter((answer) => answer !== undefined)
    if (answers.length === 0) post.resolve({ status: 202, contentType: undefined, body: '' })
    else post.resolve({ status: 200, contentType: 'application/json', body: answers.length === 1 ? answers[0]! : `[${answers.join(',')}]` })
  }
}
