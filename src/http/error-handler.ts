// The one place that turns anything thrown into the API's error envelope (docs/api.md §11).
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { AppError, toAppError } from '../errors.ts'
import { JSON_TYPE } from './reply.ts'
import { redactCredentials, redactValue } from '../logger.ts'

export interface ErrorBody {
  status: 'fail' | 'error'
  code: string
  message: string
  more: string
  data: Record<string, unknown>
  id: string
}

export function errorBody (err: AppError, requestId: string, docsUrl: string): ErrorBody {
  return {
    status: err.status >= 500 ? 'error' : 'fail',
    code: err.code,
    message: err.message,
    more: `${docsUrl}#${err.code.toLowerCase()}`,
    data: err.data,
    id: requestId
  }
}

/** Fastify's own errors (bad URL, body parsing, …) mapped to public codes. */
function fromFastify (err: FastifyError): AppError {
  const status = err.statusCode ?? 500
  if (status === 404) return new AppError('ENOTFOUND', { cause: err })
  if (status >= 400 && status < 500) {
    return new AppError('EINVALQUERY', { data: { request: 'The request could not be read.' }, cause: err })
  }
  return new AppError('EFATAL', { cause: err })
}

export function normalizeError (err: unknown): AppError {
  if (err instanceof AppError) return err
  if (err instanceof Error && typeof (err as FastifyError).code === 'string' && (err as FastifyError).code.startsWith('FST_')) {
    return fromFastify(err as FastifyError)
  }
  return toAppError(err)
}

export function createErrorHandler (docsUrl: string) {
  return function errorHandler (err: unknown, request: FastifyRequest, reply: FastifyReply): void {
    const appError = normalizeError(err)
    if (appError.status >= 500) {
      request.log.error({ err: appError.cause ?? appError, code: appError.code }, 'request failed')
    } else {
      // The detail may quote what the request gave (a URL with its userinfo): redacted as the err serializer does.
      request.log.info({ code: appError.code, detail: redactValue(appError.data), cause: describeCause(appError.cause) }, 'request refused')
    }
    // The client is gone: nothing to answer. Not `request.raw.destroyed`: Node destroys the request stream as soon
    // as its body has been read, with the client still waiting (a parsed body would never be answered).
    if (reply.raw.destroyed || request.raw.socket?.destroyed === true) return
    for (const [name, value] of Object.entries(appError.headers)) reply.header(name, value)
    reply
      .code(appError.status)
      .header('cache-control', 'no-store')
      .type(JSON_TYPE)
      .send(errorBody(appError, String(request.id), docsUrl))
  }
}

function describeCause (cause: unknown): string | undefined {
  if (cause === undefined) return undefined
  return redactCredentials(cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause))
}
