// The guarded outbound HTTP client (docs/api.md §10): every hop is checked, redirects are followed by hand, bodies are
// read within a byte bound (decoded bytes included), and the caller's signal is the deadline.
//
// The connections themselves (pinned to the checked address, directly or through the request's `proxy`) are
// connectors.ts's; the proxy comes from the options or else from the request's egress scope (egress-scope.ts).

import type { Dispatcher } from 'undici'
import { pipeline } from 'node:stream'
import type { Readable, Transform } from 'node:stream'
import zlib from 'node:zlib'
import { AppError, isAppError } from '../errors.ts'
import { DEFAULT_MAX_REDIRECTS, DEFAULT_PROBE_BYTES } from '../config.ts'
import type { AddressGuard } from './guard.ts'
import { createDispatchers } from './connectors.ts'
import { currentEgress } from './egress-scope.ts'
import type { FetchPageOptions, FetchPageResult, HttpClient, ProbeOptions, ProbeResult, Redirect } from './types.ts'
import { readBounded, type BoundedBody } from '../util/bounded-read.ts'

export interface HttpClientLog {
  debug (obj: object, msg: string): void
}

export interface HttpClientOptions {
  guard: AddressGuard
  /** Sent when the caller's headers carry no user-agent. */
  userAgent: string
  /** Redirects followed before EMAXREDIRECTS (MAX_REDIRECTS); DEFAULT_MAX_REDIRECTS when absent. */
  maxRedirects?: number
  log?: HttpClientLog
  /** Extra CA trusted for https proxies (tests with a self-signed proxy). */
  proxyCa?: string | Buffer
}

const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308])
const DEFAULT_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'
/** Content codings fetchPage asks for and decodes; more than this many layers is not decoded. */
const ACCEPT_ENCODING = 'gzip, deflate, br'
const MAX_CODING_LAYERS = 3

/** Request headers a caller never sets: framing, connection management and what this client owns. */
const CALLER_HEADERS_DROPPED: ReadonlySet<string> = new Set([
  'host', 'connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'transfer-encoding', 'te',
  'trailer', 'upgrade', 'expect', 'content-length', 'accept-encoding', 'range'
])
/** The only caller headers that follow a redirect to another origin (docs/api.md §13, decision 13). */
const CROSS_ORIGIN_HEADERS: ReadonlySet<string> = new Set(['user-agent', 'accept-language'])

const NETWORK_ERROR_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EHOSTUNREACH', 'EHOSTDOWN', 'ENETUNREACH', 'ENETDOWN',
  'ETIMEDOUT', 'EPIPE', 'EPROTO', 'EADDRNOTAVAIL', 'ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NODATA',
  'EAI_NONAME', 'ERR_STREAM_PREMATURE_CLOSE', 'ERR_SOCKET_CLOSED'
])

function noop (): void {}

function errorCode (err: unknown): string {
  if (typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string') return err.code
  return ''
}

/** Connection, protocol and TLS failures: the target "cannot be reached" (EINVALURL). */
function isUnreachable (err: unknown): boolean {
  if (err instanceof AggregateError) return err.errors.some(isUnreachable)
  const code = errorCode(err)
  if (code === '') return false
  if (NETWORK_ERROR_CODES.has(code)) return true
  // undici socket/connect/parser errors (its own argument and lifecycle errors are our bugs, not the target's).
  if (code.startsWith('UND_ERR_')) {
    return !['UND_ERR_INVALID_ARG', 'UND_ERR_DESTROYED', 'UND_ERR_CLOSED', 'UND_ERR_ABORTED', 'UND_ERR_ABORT'].includes(code)
  }
  if (code.startsWith('HPE_')) return true
  // TLS: Node's ERR_TLS_*/ERR_SSL_*/ERR_OSSL_* and OpenSSL's verification codes (CERT_HAS_EXPIRED, ...).
  return /^ERR_(TLS|SSL|OSSL)_/.test(code) || /CERT|SSL|TLS|SIGNATURE|ISSUER/.test(code)
}

/** zlib and brotli decoding failures (Z_DATA_ERROR, ERR__ERROR_FORMAT_PADDING_2, ...). */
function isZlibError (err: unknown): boolean {
  return /^(Z_|ERR__|ERR_BROTLI|ERR_ZLIB)/.test(errorCode(err))
}

function abortError (signal: AbortSignal): AppError {
  const reason: unknown = signal.reason
  return isAppError(reason) ? reason : new AppError('ETIMEOUT', { cause: reason })
}

/** Rejects as soon as the signal aborts, whatever the wrapped promise is waiting on. */
function raceSignal<T> (promise: Promise<T>, signal: AbortSignal, onLateValue: (value: T) => void): Promise<T> {
  if (signal.aborted) {
    promise.then(onLateValue, noop)
    return Promise.reject(abortError(signal))
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => {
      promise.then(onLateValue, noop)
      reject(abortError(signal))
    }
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(
      (value) => { signal.removeEventListener('abort', onAbort); resolve(value) },
      (err: unknown) => { signal.removeEventListener('abort', onAbort); reject(err) }
    )
  })
}

function normalizeHeaders (headers: Dispatcher.ResponseData['headers']): Record<string, string> {
  const entries: Array<[string, string]> = []
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue
    entries.push([name.toLowerCase(), Array.isArray(value) ? value.join(', ') : String(value)])
  }
  // fromEntries defines own properties, so a `__proto__` header stays a plain key.
  return Object.fromEntries(entries)
}

function firstHeader (value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value
}

/** Parses `content-encoding` into decoders to apply, outermost first; null when any coding is unknown. */
function decodersFor (contentEncoding: string | undefined): Array<() => Transform> | null {
  if (contentEncoding === undefined) return []
  const codings = contentEncoding.split(',').map((c) => c.trim().toLowerCase()).filter((c) => c !== '' && c !== 'identity')
  if (codings.length > MAX_CODING_LAYERS) return null
  const decoders: Array<() => Transform> = []
  // Codings are listed in the order they were applied, so they are undone from the last one.
  for (const coding of codings.reverse()) {
    // Z_SYNC_FLUSH / BROTLI_OPERATION_FLUSH: a body cut short still yields what was decoded.
    if (coding === 'gzip' || coding === 'x-gzip') {
      decoders.push(() => zlib.createGunzip({ finishFlush: zlib.constants.Z_SYNC_FLUSH }))
    } else if (coding === 'deflate') {
      decoders.push(() => zlib.createInflate({ finishFlush: zlib.constants.Z_SYNC_FLUSH }))
    } else if (coding === 'br') {
      decoders.push(() => zlib.createBrotliDecompress({ finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH }))
    } else {
      return null
    }
  }
  return decoders
}

// The total size from `bytes 0-99/1234` (or `bytes */1234`), else from content-length on a 200, else null.
function totalSizeOf (statusCode: number, headers: Record<string, string>): number | null {
  const range = headers['content-range']
  if (range !== undefined) {
    const match = /^\s*bytes\s+(?:\d+\s*-\s*\d+|\*)\s*\/\s*(\d+)\s*$/i.exec(range)
    if (match?.[1] !== undefined) return Number(match[1])
  }
  if (statusCode === 200) {
    const length = headers['content-length']
    if (length !== undefined && /^\s*\d+\s*$/.test(length)) return Number(length)
  }
  return null
}

interface Hop {
  url: URL
  response: Dispatcher.ResponseData
  redirects: Redirect[]
}

export function createHttpClient (options: HttpClientOptions): HttpClient {
  const { guard, userAgent, log } = options
  const maxRedirects = Math.max(0, Math.floor(options.maxRedirects ?? DEFAULT_MAX_REDIRECTS))
  const dispatchers = createDispatchers({ guard, proxyCa: options.proxyCa })

  function parseTarget (url: string): URL {
    try {
      return new URL(url)
    } catch (err) {
      throw new AppError('EINVALURL', {
        data: { url: `The URL \`${url}\` is not valid. It needs a protocol (http or https) and a hostname.` },
        cause: err
      })
    }
  }

  function toFetchError (err: unknown, url: URL | undefined, signal: AbortSignal): AppError {
    if (signal.aborted) return abortError(signal)
    if (isAppError(err)) return err
    const code = errorCode(err)
    if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
      return new AppError('ETIMEOUT', { cause: err })
    }
    if (isUnreachable(err)) {
      const shown = url === undefined ? 'The URL' : `The URL \`${url.href}\``
      return new AppError('EINVALURL', { data: { url: `${shown} cannot be reached.` }, cause: err })
    }
    return new AppError('EFATAL', { cause: err })
  }

  /** Sends GETs, following redirects by hand; each hop passes the literal checks here and the DNS check in the connector. */
  async function follow (
    start: URL,
    signal: AbortSignal,
    headersFor: (hop: URL) => Record<string, string>,
    onHop: (url: URL) => void,
    proxy: string | undefined
  ): Promise<Hop> {
    // An explicit proxy, else the request's (egress-scope.ts); every hop goes the same way.
    const scope = currentEgress()
    const via = proxy ?? scope?.proxy
    const dispatcher = dispatchers.for(via)
    const redirects: Redirect[] = []
    let current = start
    for (;;) {
      onHop(current)
      if (signal.aborted) throw abortError(signal)
      guard.assertUrlAllowed(current)
      const request = dispatcher.request({
        origin: current.origin,
        path: `${current.pathname}${current.search}`,
        method: 'GET',
        headers: headersFor(current),
        signal
      })
      const response = await raceSignal(request, signal, (late) => { late.body.on('error', noop).destroy() })
      // undici reports a body destroyed before its end as an 'error' event; the readers below see failures through
      // their own iteration, so this listener only keeps an early destroy from becoming an uncaught exception.
      response.body.on('error', noop)
      if (via !== undefined && scope !== undefined) scope.carried = true
      const location = firstHeader(response.headers.location)
      log?.debug({ url: current.href, statusCode: response.statusCode }, 'outbound response')
      if (!REDIRECT_STATUSES.has(response.statusCode) || location === undefined || location === '') {
        return { url: current, response, redirects }
      }
      // Redirect bodies are not wanted; the next hop may need a fresh, re-checked connection anyway.
      response.body.destroy()
      if (redirects.length >= maxRedirects) {
        throw new AppError('EMAXREDIRECTS', {
          data: { url: `The URL \`${start.href}\` redirected more than ${maxRedirects} times.` },
          cause: new Error(`redirect number ${redirects.length + 1} from ${current.href}`)
        })
      }
      redirects.push({ statusCode: response.statusCode, url: current.href })
      let next: URL
      try {
        next = new URL(location, current)
      } catch (err) {
        throw new AppError('EINVALURL', {
          data: { url: `The URL \`${current.href}\` redirected to an invalid location.` },
          cause: err
        })
      }
      // As in the fetch standard, a location without a fragment keeps the current one.
      if (next.hash === '' && current.hash !== '') next.hash = current.hash
      current = next
    }
  }

  async function fetchPage (url: string, fetchOptions: FetchPageOptions): Promise<FetchPageResult> {
    const { signal, maxBytes } = fetchOptions
    let current: URL | undefined
    try {
      const start = parseTarget(url)
      const callerHeaders = Object.entries(fetchOptions.headers ?? {})
        .map(([name, value]): [string, string] => [name.toLowerCase(), value])
        .filter(([name]) => !CALLER_HEADERS_DROPPED.has(name))
      const headersFor = (hop: URL): Record<string, string> => {
        const headers: Record<string, string> = { 'user-agent': userAgent, accept: DEFAULT_ACCEPT }
        const sameOrigin = hop.origin === start.origin
        for (const [name, value] of callerHeaders) {
          if (sameOrigin || CROSS_ORIGIN_HEADERS.has(name)) headers[name] = value
        }
        headers['accept-encoding'] = ACCEPT_ENCODING
        return headers
      }
      const hop = await follow(start, signal, headersFor, (u) => { current = u }, fetchOptions.proxy)
      const headers = normalizeHeaders(hop.response.headers)
      const decoders = decodersFor(headers['content-encoding'])
      let stream: Readable = hop.response.body
      let decodeError: unknown
      for (const createDecoder of decoders ?? []) {
        const decoder = createDecoder()
        decoder.on('error', (err) => { decodeError ??= err })
        stream = pipeline(stream, decoder, noop)
      }
      let read: BoundedBody
      try {
        read = await readBounded(stream, Math.max(0, maxBytes), { signal })
      } catch (err) {
        if (!signal.aborted && err === decodeError && isZlibError(err)) {
          throw new AppError('EINVALURL', {
            data: { url: `The URL \`${hop.url.href}\` sent a body that could not be decoded.` },
            cause: err
          })
        }
        throw err
      }
      return {
        url: hop.url.href,
        statusCode: hop.response.statusCode,
        headers,
        redirects: hop.redirects,
        body: read.body,
        truncated: read.truncated
      }
    } catch (err) {
      const error = toFetchError(err, current, signal)
      log?.debug({ url: current?.href, code: error.code, err }, 'outbound fetch failed')
      throw error
    }
  }

  async function probe (url: string, probeOptions: ProbeOptions): Promise<ProbeResult> {
    const { signal } = probeOptions
    const [maxBytes, offset] = [Math.max(1, Math.floor(probeOptions.maxBytes ?? DEFAULT_PROBE_BYTES)), Math.max(0, Math.floor(probeOptions.offset ?? 0))]
    let current: URL | undefined
    try {
      const start = parseTarget(url)
      const headersFor = (): Record<string, string> => ({
        'user-agent': userAgent,
        accept: '*/*',
        // Sizes and file headers are read from the bytes as stored.
        'accept-encoding': 'identity',
        range: `bytes=${offset}-${offset + maxBytes - 1}`
      })
      const hop = await follow(start, signal, headersFor, (u) => { current = u }, probeOptions.proxy)
      const headers = normalizeHeaders(hop.response.headers)
      const read = await readBounded(hop.response.body, maxBytes, { signal })
      return {
        url: hop.url.href,
        statusCode: hop.response.statusCode,
        headers,
        body: read.body,
        totalSize: totalSizeOf(hop.response.statusCode, headers)
      }
    } catch (err) {
      const error = toFetchError(err, current, signal)
      log?.debug({ url: current?.href, code: error.code, err }, 'outbound probe failed')
      throw error
    }
  }

  async function close (): Promise<void> {
    await dispatchers.close()
  }

  return { fetchPage, probe, close }
}
