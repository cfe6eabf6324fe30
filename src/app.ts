// buildApp(ctx, {plan}): one Fastify instance per public listener, both over the same context; buildMetricsApp(ctx):
// the METRICS_PORT listener. Never listens.
import { randomUUID } from 'node:crypto'
import http from 'node:http'
import type { Duplex } from 'node:stream'
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from 'fastify'
import cors from '@fastify/cors'
import compress from '@fastify/compress'
import type { AppContext } from './context.ts'
import type { Plan } from './config.ts'
import { AppError } from './errors.ts'
import { createErrorHandler, errorBody, normalizeError } from './http/error-handler.ts'
import { JSON_TYPE, pretty } from './http/reply.ts'
import { ignoreRequestBodies } from './http/request-body.ts'
import { NOSNIFF_HEADERS } from './http/security-headers.ts'
import { createAccessLog } from './http/access-log.ts'
import { COMPRESSION } from './http/compression.ts'
import { clientAddressOf } from './http/client-ip.ts'
import { redactCredentials } from './logger.ts'
import { createHitLane, type HitLane } from './routes/hit-lane.ts'
import { extractRoutes } from './routes/extract.ts'
import { contentRoutes } from './routes/content.ts'
import { createServe, createServeCore } from './routes/serve.ts'
import { mcpRoutes, type McpQuick } from './routes/mcp.ts'
import { healthRoutes } from './routes/health.ts'
import { docsRoutes } from './routes/docs.ts'
import { filesRoutes } from './routes/files.ts'
import { metricsRoutes } from './routes/metrics.ts'
import { firecrawlRoutes } from './firecrawl/index.ts'

declare module 'fastify' {
  interface FastifyRequest {
    /** performance.now() when the request arrived. */
    startedAt: number
    /** The error code the answer carries ('' while none), for the request metrics. */
    errorCode: string
  }
}

/** Every x-* header a client may read (x-markdown-tokens: docs/api.md §14), plus server-timing and retry-after (§6). */
export const EXPOSED_HEADERS = [
  'x-request-id', 'x-pricing-plan', 'x-response-time', 'x-rate-limit-limit', 'x-rate-limit-remaining',
  'x-rate-limit-reset', 'x-cache-status', 'x-cache-ttl', 'x-timestamp', 'x-fetch-mode', 'x-fetch-time',
  'x-markdown-tokens', 'server-timing', 'retry-after'
]

const MAX_HEADER_BYTES = 64 * 1024

/** CORS (docs/api.md §1.2): any origin may read every answer and the headers above. */
const CORS_ORIGIN = '*'

/** What `request.query` is on every request (see buildApp's routerOptions). */
function noQuery (): Record<string, string> {
  return {}
}

/** The exposed headers as @fastify/cors writes them, joined once rather than on every answer. */
const EXPOSED_HEADERS_VALUE = EXPOSED_HEADERS.join(', ')

/** The CORS headers @fastify/cors puts on every answer that is not a preflight, for the hit lane's prepared answers. */
const CORS_HEADERS = { 'access-control-allow-origin': CORS_ORIGIN, 'access-control-expose-headers': EXPOSED_HEADERS_VALUE }

/** Requests Node's HTTP parser refuses (too large, malformed) still get a JSON error with a code. */
function answerClientError (err: NodeJS.ErrnoException, socket: Duplex, region: string, docsUrl: string, plan: Plan): void {
  if (!socket.writable) { socket.destroy(); return }
  const id = `${region}:${randomUUID()}`
  const tooLarge = err.code === 'HPE_HEADER_OVERFLOW'
  const body = JSON.stringify(errorBody(new AppError('EINVALQUERY', {
    data: { request: tooLarge ? 'The request line and headers exceed 64 KiB; queries are limited to 32 KiB.' : 'The request could not be parsed.' }
  }), id, docsUrl))
  socket.end([
    'HTTP/1.1 400 Bad Request',
    `content-type: ${JSON_TYPE}`,
    `content-length: ${Buffer.byteLength(body)}`,
    'cache-control: no-store',
    `x-request-id: ${id}`,
    `x-pricing-plan: ${plan}`,
    ...Object.entries(NOSNIFF_HEADERS).map(([name, value]) => `${name}: ${value}`),
    'access-control-allow-origin: *',
    'connection: close',
    '',
    body
  ].join('\r\n'))
}

export async function buildApp (ctx: AppContext, { plan, hitLane = true }: { plan: Plan, hitLane?: boolean }): Promise<FastifyInstance> {
  const newRequestId = (): string => `${ctx.config.region}:${randomUUID()}`
  const clientAddress = clientAddressOf(ctx.config.trustProxy)
  // Made once the routes exist (below); until then, and when it is off, every request goes to Fastify.
  let lane: HitLane | undefined
  const app = Fastify({
    loggerInstance: ctx.log.child({ listener: plan }) as FastifyBaseLogger,
    // One summary line per request (onResponse below) instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'reqId' }),
    genReqId: newRequestId,
    requestIdHeader: false,
    trustProxy: clientAddress.trust,
    return503OnClosing: true,
    // No route reads `request.query`: the extraction routes parse the raw query themselves (schemas/query.ts), so
    // the router's own parse of every query string would be thrown away. A route that needs it must parse `url`.
    routerOptions: { maxParamLength: 500, querystringParser: noQuery },
    // Queries up to 32 KiB are the API's limit (docs/api.md §2); Node's default header limit is 16 KiB, so
    // allow 64 KiB of headers and let the parser answer EINVALQUERY for anything between.
    // A cache hit held in process is answered by the hit lane before Fastify sees it (http/hit-lane.ts).
    serverFactory: handler => http.createServer({ maxHeaderSize: MAX_HEADER_BYTES }, (req, res) => {
      if (lane === undefined) handler(req, res)
      else lane.handle(req, res, () => { handler(req, res) })
    }),
    clientErrorHandler: (err, socket) => { answerClientError(err, socket, ctx.config.region, ctx.config.docsUrl, plan) },
    // A path Fastify cannot decode (an invalid percent escape) is no route of ours: a catalog 404, not
    // Fastify's own body. Hooks have not run for it, so the common headers are set here.
    frameworkErrors: (error, request, reply) => {
      const notFound = new AppError('ENOTFOUND', { data: { path: 'The path is not a valid URL path. The API answers GET / and the content endpoints (docs/api.md §1.2).' }, cause: error })
      request.log.info({ code: notFound.code, cause: redactCredentials(error.message) }, 'request refused')
      // The generic reply type of this hook is unresolved; it is an ordinary reply.
      void (reply as unknown as FastifyReply)
        .code(notFound.status)
        .headers({ 'x-request-id': String(request.id), 'x-pricing-plan': plan, ...NOSNIFF_HEADERS, 'cache-control': 'no-store' })
        .type(JSON_TYPE)
        .send(errorBody(notFound, String(request.id), ctx.config.docsUrl))
    }
  })

  ignoreRequestBodies(app)
  const debugRequests = ctx.log.isLevelEnabled('debug')
  const accessLog = createAccessLog(ctx.log, ctx.metrics, plan)
  app.decorateRequest('startedAt', 0)
  app.decorateRequest('errorCode', '')
  // Callback hooks, not async ones: no promise per hook and request.
  app.addHook('onRequest', (request, reply, done) => {
    request.startedAt = performance.now()
    reply.header('x-request-id', request.id)
    reply.header('x-pricing-plan', plan)
    reply.header('x-content-type-options', NOSNIFF_HEADERS['x-content-type-options'])
    done()
  })
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header('x-response-time', pretty(performance.now() - request.startedAt))
    if (reply.getHeader('cache-control') === undefined) reply.header('cache-control', 'no-store')
    // While draining, close each connection after its answer: a keep-alive socket that was busy when
    // close() began would otherwise hold the process open until its idle timeout.
    if (ctx.closing) reply.header('connection', 'close')
    done(null, payload)
  })
  // Runs before the error handler: remember the public code the answer will carry.
  app.addHook('onError', (request, _reply, err, done) => {
    request.errorCode = normalizeError(err).code
    done()
  })
  app.addHook('onResponse', (request, reply, done) => {
    accessLog({
      reqId: request.id,
      method: request.method,
      url: request.url,
      status: reply.statusCode,
      ms: performance.now() - request.startedAt,
      code: request.errorCode,
      cache: reply.getHeader('x-cache-status'),
      // /metrics is never counted (docs/api.md §12.2); the route pattern, not the raw URL, decides.
      counted: request.routeOptions.url !== '/metrics',
      ...(debugRequests ? { req: request } : {})
    })
    done()
  })

  await app.register(cors, {
    origin: CORS_ORIGIN,
    methods: ['GET', 'HEAD', 'OPTIONS'],
    exposedHeaders: EXPOSED_HEADERS_VALUE,
    maxAge: 86400,
    optionsSuccessStatus: 204,
    strictPreflight: false
  })
  // The same settings the hit lane compresses with (http/compression.ts).
  await app.register(compress, COMPRESSION)

  app.setErrorHandler(createErrorHandler(ctx.config.docsUrl))
  app.setNotFoundHandler(async () => {
    throw new AppError('ENOTFOUND', { data: { path: 'No such route. The API answers GET / and HEAD /, and /markdown, /text and /html.' } })
  })

  // GET /, the content endpoints and the MCP tools share one serve: plan, quota, parsed-query memo, pipeline (docs/api.md §14).
  const core = createServeCore(ctx, plan)
  const serve = createServe(core)
  await app.register(extractRoutes, { ctx, plan, serve })
  await app.register(contentRoutes, { ctx, plan, serve })
  // POST /mcp: the same steps, one tools/call at a time, in its own scope with its own body parser (docs/api.md §15).
  let mcpQuick: McpQuick | undefined
  await app.register(mcpRoutes, { ctx, core, quick: (q) => { mcpQuick = q } })
  // The Firecrawl-compatible API (docs/firecrawl.md): its own scope, body parser and error envelope.
  await app.register(firecrawlRoutes, { ctx, plan })
  await app.register(healthRoutes, { ctx, plan })
  // /metrics is here unless it has its own listener (METRICS_PORT) or is off (METRICS=false): docs/api.md §12.2.
  if (ctx.config.metrics && ctx.config.metricsPort === undefined) await app.register(metricsRoutes, { ctx })
  await app.register(docsRoutes, { plan })
  await app.register(filesRoutes, { ctx })
  if (hitLane) {
    const made = createHitLane({ ctx, core, plan, clientAddress, accessLog, newRequestId, commonHeaders: CORS_HEADERS, ...(mcpQuick === undefined ? {} : { mcp: mcpQuick }) })
    app.addHook('preClose', (done) => { made.close(); done() })
    lane = made
  }
  return app
}

/**
 * The listener of /metrics alone (METRICS_PORT, docs/api.md §12.2), or undefined when /metrics stays on the public
 * listeners or is off. Anything else there is 404 ENOTFOUND.
 */
export async function buildMetricsApp (ctx: AppContext): Promise<FastifyInstance | undefined> {
  if (!ctx.config.metrics || ctx.config.metricsPort === undefined) return undefined
  const app = Fastify({
    loggerInstance: ctx.log.child({ listener: 'metrics' }) as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'reqId' }),
    genReqId: () => `${ctx.config.region}:${randomUUID()}`,
    requestIdHeader: false,
    return503OnClosing: true
  })
  ignoreRequestBodies(app)
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id)
    reply.headers(NOSNIFF_HEADERS)
    reply.header('cache-control', 'no-store')
  })
  app.setErrorHandler(createErrorHandler(ctx.config.docsUrl))
  app.setNotFoundHandler(async () => {
    throw new AppError('ENOTFOUND', { data: { path: 'This listener answers GET /metrics only.' } })
  })
  await app.register(metricsRoutes, { ctx })
  return app
}
