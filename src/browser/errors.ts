// Playwright failures -> the public codes (docs/api.md §11). The one place that decides, for every browser step:
// a navigation that never committed is EBRWSRTIMEOUT, a target that cannot be reached (or whose navigation Chromium
// cancels: a redirect to `view-source:`) is EINVALURL, one that redirects past the limit EMAXREDIRECTS, a page whose
// renderer crashed EPAGECRASH. A crash, a closed target, a protocol error or a transient network failure is worth a
// retry (docs/api.md §3.6 `retry`), and an AppError is already decided. The target's HTTP status is never an error
// here, and validation errors are AppErrors: neither is retried.
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

/** The page's renderer died while the browser went on: the page's doing, as far as the service can tell. */
const PAGE_CRASHED = /Target crashed|Page crashed|page crashed/i
/** The page, its context or the browser is gone (closed or crashed): nothing more can be done with the page. */
const TARGET_GONE = /Target (page, context or browser )?(has been )?closed|Target crashed|Page crashed|Browser (has been )?closed/i
/** The rest of the browser machinery failing under a step: each is worth a retry, like a target that is gone. */
const BROWSER_BROKE = /browser has disconnected|Browser closed|Session closed|Protocol error|Connection closed|WebSocket (is not open|closed)|has been closed|frame was detached|Frame has been detached|Execution context was destroyed|Navigation failed because page crashed|crashed/i
/**
 * Transient network failures: the same request may well work the next time (docs/api.md §3.6 `retry`: "transient
 * network errors such as a reset connection"). An empty response is one of them: the connection closed before any
 * byte of an answer, as a reset one does.
 */
export const TRANSIENT_NET_ERRORS = [
  'CONNECTION_RESET', 'CONNECTION_CLOSED', 'CONNECTION_ABORTED', 'EMPTY_RESPONSE', 'NETWORK_CHANGED',
  'HTTP2_PROTOCOL_ERROR', 'HTTP2_PING_FAILED', 'SOCKET_NOT_CONNECTED', 'NETWORK_IO_SUSPENDED',
  'INCOMPLETE_CHUNKED_ENCODING', 'CONTENT_LENGTH_MISMATCH'
] as const
/** The target cannot be reached (or answered something no browser accepts): the URL's fault, not ours. */
export const UNREACHABLE_NET_ERRORS = [
  'NAME_NOT_RESOLVED', 'NAME_RESOLUTION_FAILED', 'CONNECTION_REFUSED', 'CONNECTION_FAILED', 'ADDRESS_UNREACHABLE',
  'ADDRESS_INVALID', 'INTERNET_DISCONNECTED', 'TUNNEL_CONNECTION_FAILED', 'PROXY_CONNECTION_FAILED', 'TIMED_OUT',
  'CONNECTION_TIMED_OUT', 'SSL_[A-Z_]+', 'CERT_[A-Z_]+', 'BAD_SSL_CLIENT_AUTH_CERT', 'INVALID_RESPONSE',
  'INVALID_HTTP_RESPONSE', 'RESPONSE_HEADERS_[A-Z_]+', 'UNSAFE_REDIRECT', 'UNSAFE_PORT', 'INVALID_URL',
  'INVALID_REDIRECT', 'DISALLOWED_URL_SCHEME', 'UNKNOWN_URL_SCHEME', 'HTTP_RESPONSE_CODE_FAILURE'
] as const
/** Refused by the browser itself (or a file the target does not have): not allowed. */
export const BLOCKED_NET_ERRORS = ['BLOCKED_BY_CLIENT', 'BLOCKED_BY_ADMINISTRATOR', 'ACCESS_DENIED', 'FILE_NOT_FOUND'] as const

function netErrors (names: readonly string[]): RegExp {
  return new RegExp(`net::ERR_(${names.join('|')})\\b`)
}

const TRANSIENT_NET = netErrors(TRANSIENT_NET_ERRORS)
const UNREACHABLE_NET = netErrors(UNREACHABLE_NET_ERRORS)
const BLOCKED_NET = netErrors(BLOCKED_NET_ERRORS)
const TOO_MANY_REDIRECTS = /net::ERR_TOO_MANY_REDIRECTS\b/

/** Redirects Chromium follows before it fails a navigation with net::ERR_TOO_MANY_REDIRECTS. */
export const CHROMIUM_MAX_REDIRECTS = 20

function messageOf (err: unknown): string {
  if (err instanceof Error) return err.message
  return typeof err === 'string' ? err : ''
}

/** A Playwright wait or action that ran out of its own `timeout`. */
export function isTimeoutError (err: unknown): boolean {
  return err instanceof Error && err.name === 'TimeoutError'
}

/**
 * Whether the page, its context or the browser went away under a step (closed or crashed). A step whose failure is
 * not an error (a wait that ran out, a selector that matched nothing) must still stop on this.
 */
export function isTargetClosed (err: unknown): boolean {
  return err instanceof Error && TARGET_GONE.test(err.message)
}

function urlOf (message: string): string | undefined {
  return / at (\S+)$/m.exec(message.split('\n')[0] ?? '')?.[1]
}

/** What a navigation was asked to do, for the public message of its failure. */
export interface NavigationTarget {
  /** The URL asked for. */
  url: string
  /** Redirects it may follow (MAX_REDIRECTS). */
  maxRedirects: number
}

/** 400 EMAXREDIRECTS for a navigation that went past `maxRedirects` (docs/api.md §3.1). */
export function tooManyRedirects (url: string | undefined, maxRedirects: number, cause?: unknown): AppError {
  const shown = url === undefined ? 'The URL' : `The URL \`${url}\``
  return new BrowserError('EMAXREDIRECTS', 'navigation', false, {
    data: { url: `${shown} redirected more than ${maxRedirects} times.` },
    ...(cause === undefined ? {} : { cause })
  })
}

/**
 * 400 EPAGECRASH: the page's renderer died (a page that exhausts its memory, or a renderer killed from outside: the
 * service cannot tell them apart) while the browser went on. Worth a retry, as any crash; once `retry` is spent, the
 * request's answer (a 4xx: a client retrying the same page gets the same).
 */
export function pageCrashed (phase: BrowserPhase, cause: unknown): BrowserError {
  return new BrowserError('EPAGECRASH', phase, true, { cause })
}

/**
 * Maps whatever a browser step threw to an AppError. `phase` says which step: only a navigation error can be the
 * target's fault (EINVALURL / EFORBIDDENURL / EMAXREDIRECTS); a timeout in any step is EBRWSRTIMEOUT. `target`, for a
 * navigation, names the URL asked for in the public message (else the URL in Playwright's message is shown).
 */
export function toBrowserError (err: unknown, phase: BrowserPhase, target?: NavigationTarget): AppError {
  if (isAppError(err)) return err
  const message = messageOf(err)
  const navigating = phase === 'navigation' || phase === 'job'
  const url = target?.url ?? (navigating ? urlOf(message) : undefined)
  const shown = url === undefined ? 'The URL' : `The URL \`${url}\``
  if (isTimeoutError(err)) {
    const data = target === undefined ? {} : { data: { url: `${shown} did not start loading in time.` } }
    return new BrowserError('EBRWSRTIMEOUT', phase, false, { ...data, cause: err })
  }
  if (navigating) {
    if (/Download is starting/i.test(message)) {
      return new BrowserError('EINVALURL', phase, false, { data: { url: `${shown} is a download, not a page.` }, cause: err })
    }
    if (/Cannot navigate to invalid URL|invalid URL/i.test(message)) {
      return new BrowserError('EINVALURL', phase, false, { data: { url: `${shown} is not valid.` }, cause: err })
    }
    if (BLOCKED_NET.test(message)) {
      return new BrowserError('EFORBIDDENURL', phase, false, { data: { url: `${shown} is not allowed.` }, cause: err })
    }
    if (TOO_MANY_REDIRECTS.test(message)) {
      // Chromium gives up past its own limit, whatever ours is.
      return tooManyRedirects(url, Math.min(target?.maxRedirects ?? CHROMIUM_MAX_REDIRECTS, CHROMIUM_MAX_REDIRECTS), err)
    }
    if (TRANSIENT_NET.test(message)) {
      return new BrowserError('EINVALURL', phase, true, { data: { url: `${shown} cannot be reached.` }, cause: err })
    }
    if (UNREACHABLE_NET.test(message)) {
      return new BrowserError('EINVALURL', phase, false, { data: { url: `${shown} cannot be reached.` }, cause: err })
    }
    if (/net::ERR_ABORTED/.test(message)) {
      // The navigation of the target itself, cancelled by Chromium: the target redirected to a scheme the browser
      // does not load from the web (`view-source:`), or answered with nothing to show (204). The target's doing.
      if (target !== undefined) {
        return new BrowserError('EINVALURL', phase, false, {
          data: { url: `${shown} did not load as a page: it redirected to a URL that is not http or https, or sent no content.` },
          cause: err
        })
      }
      return new BrowserError('EFATAL', phase, true, { cause: err })
    }
  }
  if (PAGE_CRASHED.test(message)) return pageCrashed(phase, err)
  if (TARGET_GONE.test(message) || BROWSER_BROKE.test(message)) return new BrowserError('EFATAL', phase, true, { cause: err })
  if (phase === 'launch' || phase === 'context') return new BrowserError('EFATAL', phase, true, { cause: err })
  return new BrowserError('EFATAL', phase, false, { cause: err })
}

/** What a job gets from a pool that is closing (the service shuts down): EBUSY, another instance may take it. */
export function browserShuttingDown (): AppError {
  return new AppError('EBUSY', { headers: { 'retry-after': '5' }, data: { browser: 'The browser is shutting down.' } })
}

/**
 * 503 EBROWSER: the browser is missing or would not start (docs/api.md §12.3). `retryAfterMs`: when the next launch
 * is due. The cause (the path tried, Playwright's message) goes to the log, never to the client.
 */
export function browserUnavailable (cause: unknown, retryAfterMs: number): AppError {
  return new AppError('EBROWSER', {
    headers: { 'retry-after': String(Math.max(1, Math.ceil(retryAfterMs / 1000))) },
    data: { browser: `Chromium is missing or does not start on this instance; the next launch is tried in about ${Math.max(1, Math.ceil(retryAfterMs / 1000))} s.` },
    cause
  })
}

/**
 * The error for a main navigation the egress layer refused: a blocked address or scheme is EFORBIDDENURL, an
 * address that could not be reached is EINVALURL. The detail (resolved address, policy reason) stays in the cause.
 */
export function refusalError (refusal: EgressRefusal): AppError {
  // The job's proxy failed (down, refused the credentials, or its host was blocked when dialled): its own error.
  if (refusal.proxyError !== undefined) {
    return new BrowserError(refusal.proxyError.code, 'navigation', false, {
      data: refusal.proxyError.data,
      cause: new Error(`browser navigation failed through the proxy: ${refusal.reason}`)
    })
  }
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
