// Request bodies (docs/api.md §1.2): no route reads one yet, so none is parsed. Every method with every body gets
// its answer (a route's, or 404 ENOTFOUND) without waiting for the body, and no body is read beyond a small limit.
// A route that takes a body later (`POST /mcp`, §15) registers its own parser and bodyLimit in its own scope.
import type { FastifyInstance } from 'fastify'
import type { IncomingHttpHeaders } from 'node:http'

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

export function ignoreRequestBodies (app: FastifyInstance): void {
  // Without a parser Fastify hands a request for no route straight to the 404 handler, body unread; a route of
  // ours with a body it cannot take answers 415, mapped to EINVALQUERY. GET and HEAD bodies are never parsed, and
  // OPTIONS is answered by its route's onRequest hook before any body (http/cors.ts).
  app.removeAllContentTypeParsers()
  app.addHook('onSend', (request, reply, payload, done) => {
    if (!drainable(request.headers)) reply.header('connection', 'close')
    done(null, payload)
  })
}
