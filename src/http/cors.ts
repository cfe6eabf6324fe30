// CORS (docs/api.md §1.2, §6): any origin may read every answer and the headers below. With the origin `*` nothing
// of it depends on the request but a preflight's echo of the headers it asks for, so the answer headers are
// constants, sent among the listener's leading headers (app.ts), and a preflight is an OPTIONS route (preflight):
// what @fastify/cors sent, byte for byte (test/integration/answers.test.ts), without its hook on every request.
import type { RouteOptions } from 'fastify'

/** Every x-* header a client may read (x-markdown-tokens: docs/api.md §14), plus server-timing and retry-after (§6). */
export const EXPOSED_HEADERS = [
  'x-request-id', 'x-pricing-plan', 'x-response-time', 'x-rate-limit-limit', 'x-rate-limit-remaining',
  'x-rate-limit-reset', 'x-cache-status', 'x-cache-ttl', 'x-timestamp', 'x-fetch-mode', 'x-fetch-time',
  'x-markdown-tokens', 'server-timing', 'retry-after'
]

/** On every answer, a preflight's included. */
export const CORS_HEADERS = { 'access-control-allow-origin': '*', 'access-control-expose-headers': EXPOSED_HEADERS.join(', ') } as const

/** The methods a preflight allows, on every path but /mcp (routes/mcp.ts) and the Firecrawl routes' (firecrawl/index.ts). */
export const CORS_METHODS = ['GET', 'HEAD', 'OPTIONS']

/** A browser may keep a preflight's answer a day. */
const MAX_AGE = '86400'

/**
 * The route answering a preflight (any OPTIONS request to `url`): 204 with the methods, the asked headers echoed, no
 * body. Answered from the route's onRequest hook, before any body is parsed (http/request-body.ts), as @fastify/cors
 * answered it; the handler is never reached.
 */
export function preflightRoute (url: string, methods: readonly string[]): RouteOptions {
  const allowed = methods.join(', ')
  return {
    method: 'OPTIONS',
    url,
    onRequest: (request, reply) => {
      reply.header('access-control-allow-methods', allowed)
      reply.header('vary', 'Access-Control-Request-Headers')
      const asked = request.headers['access-control-request-headers']
      if (asked !== undefined) reply.header('access-control-allow-headers', asked)
      reply.header('access-control-max-age', MAX_AGE)
      reply.header('content-length', '0')
      void reply.code(204).send()
    },
    handler: async () => { throw new Error('a preflight is answered by its onRequest hook') }
  }
}
