// Playwright failures -> the public codes (API.md §11). One place decides: a navigation that never committed is
// EBRWSRTIMEOUT, a target that cannot be reached is EINVALURL, a closed target, a crash or a protocol error is
// EFATAL and worth a retry (API.md §3.6 `retry`), and an AppError is already decided.
import { AppError, isAppError } from '../errors.ts'
import type { AppErrorOptions, ErrorCode } from '../errors.ts'
import type { EgressRefusal } from './egress-proxy.ts'

export type BrowserPhase = 'launch' | 'context' | 'navigation' | 'interaction' | 'evaluate' | 'capture' | 'job'

/** An AppError from the browser, saying whether running the job again may succeed. */
export class BrowserError extends AppError {
  readonly retryable: boolean
  readonly phase: BrowserPhase

  constructor (code: ErrorCode, phase: BrowserPhase, retryable: boolean, options: AppErrorOptions = {}) {
    super(code, options)
    this.name = 'BrowserError'
    this.phase = phase
    this.retryable = retryable
  }
}

/** Whether a failure is a browser failure that a retry may cure (crash, closed target, protocol error, reset). */
export function isRetryable (err: unknown): boolean {
  return err instanceof BrowserError && err.retryable
}

const CLOSED = /Target (page, context or browser )?(has been )?closed|Target crashed|Page crashed|Browser (has been )?closed|browser has disconnected|Browser closed|Session closed|Protocol error|Connection closed|WebSocket (is not open|closed)|has been closed|frame was detached|Frame has been detached|Execution context was destroyed|Navigation failed because page crashed|crashed/i
/** Transient network failures: the same request may well work the next time. */
const TRANSIENT_NET = /net::ERR_(CONNECTION_RESET|CONNECTION_CLOSED|CONNECTION_ABORTED|EMPTY_RESPONSE|NETWORK_CHANGED|HTTP2_PROTOCOL_ERROR|HTTP2_PING_FAILED|SOCKET_NOT_CONNECTED|NETWORK_IO_SUSPENDED|INCOMPLETE_CHUNKED_ENCODING|CONTENT_LENGTH_MISMATCH)\b/
/** The target cannot be reached (or answered something no browser accepts): the URL's fault, not ours. */
const UNREACHABLE_NET = /net::ERR_(NAME_NOT_RESOLVED|NAME_RESOLUTION_FAILED|CONNECTION_REFUSED|CONNECTION_FAILED|ADDRESS_UNREACHABLE|ADDRESS_INVALID|INTERNET_DISCONNECTED|TUNNEL_CONNECTION_FAILED|PROXY_CONNECTION_FAILED|TIMED_OUT|CONNECTION_TIMED_OUT|SSL_[A-Z_]+|CERT_[A-Z_]+|BAD_SSL_CLIENT_AUTH_CERT|INVALID_RESPONSE|INVALID_HTTP_RESPONSE|RESPONSE_HEADERS_[A-Z_]+|TOO_MANY_REDIRECTS|UNSAFE_REDIRECT|UNSAFE_PORT|INVALID_URL|INVALID_REDIRECT|DISALLOWED_URL_SCHEME|UNKNOWN_URL_SCHEME|HTTP_RESPONSE_CODE_FAILURE)\b/
const BLOCKED_NET = /net::ERR_(BLOCKED_BY_CLIENT|BLOCKED_BY_ADMINISTRATOR|ACCESS_DENIED|FILE_NOT_FOUND)\b/

function messageOf (err: unknown): string {
  if (err instanceof Error) return err.message
  return typeof err === 'string' ? err : ''
}

function isTimeout (err: unknown): boolean {
  return err instanceof Error && err.name === 'TimeoutError'
}

function urlOf (message: string): string | undefined {
  return / at (\S+)$/m.exec(message.split('\n')[0] ?? '')?.[1]
}

/**
 * Maps whatever a browser step threw to an AppError. `phase` says which step: only a navigation error can be the
 * target's fault (EINVALURL / EFORBIDDENURL); a timeout in any step is EBRWSRTIMEOUT.
 */
export function toBrowserError (err: unknown, phase: BrowserPhase): AppError {
  if (isAppError(err)) return err
  const message = messageOf(err)
  if (isTimeout(err)) return new BrowserError('EBRWSRTIMEOUT', phase, false, { cause: err })
  if (phase === 'navigation' || phase === 'job') {
    const url = urlOf(message)
    const shown = url === undefined ? 'The URL' : `The URL \`${url}\``
    if (/Download is starting/i.test(message)) {
      return new BrowserError('EINVALURL', phase, false, { data: { url: `${shown} is a download, not a page.` }, cause: err })
    }
    if (/Cannot navigate to invalid URL|invalid URL/i.test(message)) {
      return new BrowserError('EINVALURL', phase, false, { data: { url: `${shown} is not valid.` }, cause: err })
    }
    if (BLOCKED_NET.test(message)) {
      return new BrowserError('EFORBIDDENURL', phase, false, { data: { url: `${shown} is not allowed.` }, cause: err })
    }
    if (TRANSIENT_NET.test(message)) {
      return new BrowserError('EINVALURL', phase, true, { data: { url: `${shown} cannot be reached.` }, cause: err })
    }
    if (UNREACHABLE_NET.test(message)) {
      return new BrowserError('EINVALURL', phase, false, { data: { url: `${shown} cannot be reached.` }, cause: err })
    }
    if (/net::ERR_ABORTED/.test(message)) return new BrowserError('EFATAL', phase, true, { cause: err })
  }
  if (CLOSED.test(message)) return new BrowserError('EFATAL', phase, true, { cause: err })
  if (phase === 'launch' || phase === 'context') return new BrowserError('EFATAL', phase, true, { cause: err })
  return new BrowserError('EFATAL', phase, false, { cause: err })
}

/**
 * The error for a main navigation the egress layer refused: a blocked address or scheme is EFORBIDDENURL, an
 * address that could not be reached is EINVALURL. The detail (resolved address, policy reason) stays in the cause.
 */
export function refusalError (refusal: EgressRefusal): AppError {
  if (refusal.channel === 'scheme') {
    return new BrowserError('EFORBIDDENURL', 'navigation', false, {
      data: { url: `The URL \`${refusal.url}\` is not allowed: only http and https URLs can be loaded.` },
      cause: new Error(`browser navigation refused: ${refusal.reason}`)
    })
  }
  if (refusal.kind === 'blocked') {
    return new BrowserError('EFORBIDDENURL', 'navigation', false, {
      data: { url: `The URL \`${refusal.url}\` points to an address that is not allowed.` },
      cause: new Error(`browser navigation refused: ${refusal.reason}`)
    })
  }
  return new BrowserError('EINVALURL', 'navigation', false, {
    data: { url: `The URL \`${refusal.url}\` cannot be reached.` },
    cause: new Error(`browser navigation failed: ${refusal.reason}`)
  })
}
