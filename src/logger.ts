// pino options: level, and redaction of everything a user sent that is a secret — API keys, cookies,
// authorization, forwarded header values (x-api-header-*, headers.* in the query) and proxy credentials.
import pino, { type Logger } from 'pino'

const SECRET_HEADERS = /^(x-api-key|authorization|proxy-authorization|cookie|set-cookie|x-api-header-.*)$/i
// Query keys whose values are secrets: headers.* (any spelling), proxy (it may carry credentials) and a signed link's
// signature (a working credential for its query until it expires: docs/tenants.md#signed-links).
const SECRET_QUERY_KEY = /^(headers([._].*)?|proxy([._].*)?|signature)$/i

export const REDACTED = '[redacted]'

export function redactHeaders (headers: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(headers)) out[name] = SECRET_HEADERS.test(name) ? REDACTED : value
  return out
}

// A pair whose key could be a secret one: a key with a percent escape anywhere (it may decode to anything), one that
// starts with a space (`+`, trimmed away), or one that starts with `headers`, `proxy` or `signature` in any case.
// Others (`url`, `prerender`, `palette`, ...) never are, so most queries are not split.
const MAYBE_SECRET_PAIR = /[?&](?:[^&=]*%|[\s+]|headers|proxy|signature)/i

/** The characters that end a URL's authority as the URL parser reads it (special schemes). */
const AUTHORITY_END = new Set(['/', '\\', '?', '#'])
/**
 * In running text (an error's message), also what the URL parser percent-encodes in userinfo, so never appears in a
 * URL it wrote (`URL.href`, which is what the service's own errors quote): whitespace, quotes, brackets.
 */
const TEXT_END = new Set([...AUTHORITY_END, ' ', '\t', '\n', '\r', '"', '`', '<', '>', '{', '}', '[', ']', '^', '|'])
const SCHEME_RE = /^[a-z][a-z0-9+.-]*:/i

/**
 * The text with the userinfo of every URL in it (`http://user:pass@host`, `http:user:pass@host`) replaced by the
 * marker. One pass, linear in the text: each run between two authority-ending characters is looked at once, and its
 * last `@` ends the userinfo (as the URL parser reads it). A run counts as an authority when two slashes (or a
 * scheme's colon and a slash) come before it, or when it starts with a scheme itself. `oneUrl`: the text is one URL
 * (a query value), so only the URL parser's own delimiters end a run; otherwise it is running text.
 */
export function redactCredentials (text: string, oneUrl = false): string {
  if (!text.includes('@')) return text
  const ends = oneUrl ? AUTHORITY_END : TEXT_END
  let out = ''
  let copied = 0
  let start = 0
  let lastAt = -1
  const close = (end: number): void => {
    if (lastAt >= start) {
      const before = text[start - 1]
      const beforeThat = text[start - 2]
      let from = -1
      if ((before === '/' || before === '\\') && (beforeThat === '/' || beforeThat === '\\' || beforeThat === ':')) from = start
      else {
        const scheme = SCHEME_RE.exec(text.slice(start, lastAt))
        if (scheme !== null) from = start + scheme[0].length
      }
      if (from !== -1 && from < lastAt) {
        out += text.slice(copied, from) + REDACTED
        copied = lastAt
      }
    }
    start = end + 1
    lastAt = -1
  }
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (c === '@') lastAt = i
    else if (ends.has(c)) close(i)
  }
  close(text.length)
  return copied === 0 ? text : out + text.slice(copied)
}

/** A value logged as it is (an error's `data`, an error's serialized form) with every URL's userinfo redacted. */
export function redactValue<T> (value: T): T {
  let json: string | undefined
  try {
    json = JSON.stringify(value)
  } catch {
    return value
  }
  if (json === undefined || !json.includes('@')) return value
  const redacted = redactCredentials(json)
  return redacted === json ? value : JSON.parse(redacted) as T
}

/** A request path's or query value's text with URL userinfo redacted, percent-encoded or not; `text` when it has none. */
function withoutCredentials (text: string, encode: (plain: string) => string): string {
  const raw = redactCredentials(text, true)
  if (raw !== text || !text.includes('%')) return raw
  let plain: string
  try {
    plain = decodeURIComponent(text)
  } catch {
    return text
  }
  const redacted = redactCredentials(plain, true)
  return redacted === plain ? text : encode(redacted)
}

/**
 * Replaces the values of secret query parameters in a request path with a marker, and the userinfo of any URL in
 * the path or a query value (`url=http://user:pass@host/`, `/markdown/http://user:pass@host/`), encoded or not.
 */
export function redactUrl (url: string): string {
  const q = url.indexOf('?')
  const mayHoldUserinfo = url.includes('@') || url.includes('%40')
  // Most queries have no such pair (`url=...&screenshot=...`) and no `@`: nothing to split.
  if (!mayHoldUserinfo && (q === -1 || !MAYBE_SECRET_PAIR.test(url.slice(q)))) return url
  const rawPath = q === -1 ? url : url.slice(0, q)
  const path = mayHoldUserinfo ? withoutCredentials(rawPath, plain => plain) : rawPath
  if (q === -1) return path
  const parts = url.slice(q + 1).split('&').map(pair => {
    const eq = pair.indexOf('=')
    const rawKey = eq === -1 ? pair : pair.slice(0, eq)
    let key = rawKey
    try { key = decodeURIComponent(rawKey.replace(/\+/g, ' ')) } catch {}
    if (SECRET_QUERY_KEY.test(key.trim()) && eq !== -1) return `${rawKey}=${REDACTED}`
    if (!mayHoldUserinfo || eq === -1) return pair
    const value = pair.slice(eq + 1)
    const safe = withoutCredentials(value, encodeURIComponent)
    return safe === value ? pair : `${rawKey}=${safe}`
  })
  return `${path}?${parts.join('&')}`
}

function redactLoggedUrl (value: unknown): unknown {
  return typeof value === 'string' ? redactCredentials(value, true) : value
}

export interface LoggerOptions {
  level: string
  /** Where lines go; defaults to stdout (logDestination). Tests pass a stream to read what was logged. */
  destination?: pino.DestinationStream
}

/** Lines are written when this many bytes are waiting (a few lines), */
const BATCH_BYTES = 1024
/** or every this many ms, whichever comes first. */
const BATCH_MS = 100

/**
 * The service's log destination: a file descriptor or path written asynchronously in batches (docs/operations.md#logging).
 * An asynchronous write costs 20-40 µs of CPU on its own (the hand-over to libuv's thread pool), more than an access
 * line; under load lines wait while a write is in flight, and without load they wait for a few more. The chunks stay
 * small (2 KiB) because sonic-boom measures the last one again on every line: with 16 KiB chunks a line cost 2.5 µs,
 * with 2 KiB about 1 µs (bench/hit-profile.ts's neighbourhood, measured apart). Whatever is waiting is written at exit
 * (pino flushes its destinations on `exit`) and on shutdown; a process killed with SIGKILL loses at most its last
 * 100 ms of lines.
 */
export function logDestination (dest: number | string = 1): pino.DestinationStream {
  return pino.destination({ dest, sync: false, minLength: BATCH_BYTES, maxWrite: 2 * BATCH_BYTES, periodicFlush: BATCH_MS })
}

export function createLogger (options: LoggerOptions): Logger {
  return pino({
    level: options.level,
    base: undefined,
    serializers: {
      req: (req: { method?: string, url?: string, headers?: Record<string, unknown>, ip?: string }) => ({
        method: req.method,
        url: req.url === undefined ? undefined : redactUrl(req.url),
        ip: req.ip,
        headers: req.headers === undefined ? undefined : redactHeaders(req.headers)
      }),
      // An error's message and stack may quote the target's URL (a navigation error does), and a URL logged under
      // `url` or `endpoint` may be the target's or one its page named: their userinfo is redacted.
      err: (err: Error) => redactValue(pino.stdSerializers.err(err)),
      url: redactLoggedUrl,
      endpoint: redactLoggedUrl
    },
    // Belt and braces for objects logged by hand.
    redact: {
      paths: ['headers["x-api-key"]', 'headers.authorization', 'headers.cookie', 'apiKey', 'proxy', '*.proxy'],
      censor: REDACTED
    }
  }, options.destination ?? logDestination())
}
