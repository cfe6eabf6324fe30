// Request bodies (docs/api.md §1.2): none is parsed here. Every method with every body gets its answer (a route's, or
// 404 ENOTFOUND) without waiting for the body, and no body is read beyond a small limit. A route that takes a body
// (`POST /mcp`, §15; the Firecrawl routes) registers its own parser and bodyLimit in its own scope. An answer that
// closes the connection lingers (lingerOnClose).
import type { FastifyInstance } from 'fastify'
import type { IncomingHttpHeaders } from 'node:http'
import type { Socket } from 'node:net'

/**
 * The largest unread body Node may discard after the answer so the connection can be kept alive. A larger body,
 * or one of unknown length (chunked), is not read: its answer closes the connection.
 */
export const MAX_UNREAD_BODY_BYTES = 64 * 1024

/** The body length the headers declare: 0 with neither header, undefined when unknown (chunked) or malformed. */
export function declaredLength (headers: IncomingHttpHeaders): number | undefined {
  if (headers['transfer-encoding'] !== undefined) return undefined
  const length = headers['content-length']
  if (length === undefined) return 0
  return /^\d+$/.test(length) ? Number(length) : undefined
}

/** Whether a body this request did not read is small enough to be discarded on a kept-alive connection. */
export function drainable (headers: IncomingHttpHeaders): boolean {
  const length = declaredLength(headers)
  return length !== undefined && length <= MAX_UNREAD_BODY_BYTES
}

/** How long a connection closed after its answer goes on taking what the client still sends (lingerOnClose). */
export const LINGER_MS = 2_000
/** The most it takes meanwhile before it is dropped. */
export const LINGER_BYTES = 16 * 1024 * 1024
const LINGER_CHECK_MS = 100

/**
 * Closes `socket` the way a careful server closes a connection whose request body it did not read (RFC 7230 §6.6's
 * staged close, nginx's lingering close): once the answer is written the socket's write side is shut, then what the
 * client still sends is taken (Node's parser discards it) until the client closes too, for at most LINGER_MS and
 * LINGER_BYTES. Node would close at once instead, and data arriving at a closed socket makes the kernel reset the
 * connection: a client still sending a large body then gets ECONNRESET, often before it has read the answer.
 */
export function lingerOnClose (socket: Socket): void {
  socket.destroySoon = function lingeringClose (this: Socket): void {
    if (this.writable) this.end()
    const from = this.bytesRead
    const drop = (): void => { this.destroy() }
    const timer = setTimeout(drop, LINGER_MS)
    const check = setInterval(() => { if (this.bytesRead - from > LINGER_BYTES) drop() }, LINGER_CHECK_MS)
    timer.unref()
    check.unref()
    this.once('close', () => { clearTimeout(timer); clearInterval(check) })
  }
}

export function ignoreRequestBodies (app: FastifyInstance): void {
  // Without a parser Fastify hands a request for no route straight to the 404 handler, body unread; a route of
  // ours with a body it cannot take answers 415, mapped to EINVALQUERY. GET and HEAD bodies are never parsed, and
  // OPTIONS is answered by its route's onRequest hook before any body (http/cors.ts).
  app.removeAllContentTypeParsers()
  app.addHook('onSend', (request, reply, payload, done) => {
    if (!drainable(request.headers)) reply.header('connection', 'close')
    // Ours, or Fastify's for a body over a route's bodyLimit: either way the body may still be on its way.
    if (String(reply.getHeader('connection')).toLowerCase() === 'close') lingerOnClose(request.raw.socket)
    done(null, payload)
  })
}
