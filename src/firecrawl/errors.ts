// The Firecrawl error envelope (docs/firecrawl.md#errors): `{success: false, error, code?, details?}` with the
// statuses Firecrawl's clients know (400, 401, 402, 404, 408, 429, 500). Every error is first one of our catalog
// (src/errors.ts, through the app's normalizeError); its code travels as `code`, its data as `details`, its message as
// `error`. Never a stack: 5xx answers say only the catalog's message.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { AppError, type ErrorCode } from '../errors.ts'
import { normalizeError } from '../http/error-handler.ts'
import { JSON_TYPE } from '../http/reply.ts'
import { redactValue } from '../logger.ts'

export interface FirecrawlErrorBody {
  success: false
  error: string
  code?: string
  details?: unknown
}

/** Codes of a refused key: 401 Unauthorized, the body Firecrawl's clients expect. */
const UNAUTHORIZED: ReadonlySet<ErrorCode> = new Set(['EAUTH'])

/** Codes of a deadline: 408. */
const TIMEOUTS: ReadonlySet<ErrorCode> = new Set(['ETIMEOUT', 'EBRWSRTIMEOUT'])

/** The status a catalog error takes in the Firecrawl envelope. */
export function firecrawlStatus (err: AppError): number {
  if (UNAUTHORIZED.has(err.code)) return 401
  if (TIMEOUTS.has(err.code)) return 408
  if (err.status === 429 || err.status === 404) return err.status
  // What the plan does not allow (a pro-only parameter on the free listener, a tenant's denied parameter).
  if (err.status === 403) return 402
  if (err.status >= 500) return 500
  return 400
}

export function firecrawlBody (err: AppError): FirecrawlErrorBody {
  if (UNAUTHORIZED.has(err.code)) return { success: false, error: 'Unauthorized' }
  const details = Object.keys(err.data).length === 0 ? undefined : err.data
  return { success: false, error: err.message, code: err.code, ...(details === undefined ? {} : { details }) }
}

/** Fastify's body checks said plainly (the schema's message names the field). */
function fromFastify (err: FastifyError): AppError | undefined {
  if (err.validation !== undefined) {
    const message = `Bad request: ${err.message}`
    return new AppError('EINVALQUERY', { message, data: { body: err.message }, cause: err })
  }
  if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new AppError('EINVALQUERY', { message: 'The body is too large.', data: { body: 'too large' }, cause: err })
  if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || err.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || err.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
    return new AppError('EINVALQUERY', { message: 'The body must be a JSON object (content-type: application/json).', data: { body: err.message }, cause: err })
  }
  return undefined
}

/** The error handler of the Firecrawl routes' scope. */
export function firecrawlErrorHandler (err: unknown, request: FastifyRequest, reply: FastifyReply): void {
  const appError = (err instanceof Error && 'code' in err && typeof err.code === 'string' && err.code.startsWith('FST_') ? fromFastify(err as FastifyError) : undefined) ?? normalizeError(err)
  request.errorCode = appError.code
  if (appError.status >= 500) request.log.error({ err: appError.cause ?? appError, code: appError.code }, 'request failed')
  else request.log.info({ code: appError.code, detail: redactValue(appError.data) }, 'request refused')
  if (reply.raw.destroyed || request.raw.socket?.destroyed === true) return
  for (const [name, value] of Object.entries(appError.headers)) reply.header(name, value)
  void reply.code(firecrawlStatus(appError)).header('cache-control', 'no-store').type(JSON_TYPE).send(firecrawlBody(appError))
}
