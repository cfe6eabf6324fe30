// pino options: level, and redaction of everything a user sent that is a secret — API keys, cookies,
// authorization, forwarded header values (x-api-header-*, headers.* in the query) and proxy credentials.
import pino, { type Logger } from 'pino'

const SECRET_HEADERS = /^(x-api-key|authorization|proxy-authorization|cookie|set-cookie|x-api-header-.*)$/i
// Query keys whose values are secrets: headers.* (any spelling) and proxy (it may carry credentials).
const SECRET_QUERY_KEY = /^(headers([._].*)?|proxy([._].*)?)$/i

export const REDACTED = '[redacted]'

export function redactHeaders (headers: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(headers)) out[name] = SECRET_HEADERS.test(name) ? REDACTED : value
  return out
}

// A pair whose key could be a secret one: a key with a percent escape anywhere (it may decode to anything), one that
// starts with a space (`+`, trimmed away), or one that starts with `headers` or `proxy` in any case. Others (`url`,
// `prerender`, `palette`, ...) never are, so most queries are not split.
const MAYBE_SECRET_PAIR = /[?&](?:[^&=]*%|[\s+]|headers|proxy)/i

/** Replaces the values of secret query parameters in a request path with a marker. */
export function redactUrl (url: string): string {
  const q = url.indexOf('?')
  // Most queries have no such pair (`url=...&screenshot=...`): nothing to split.
  if (q === -1 || !MAYBE_SECRET_PAIR.test(url.slice(q))) return url
  const parts = url.slice(q + 1).split('&').map(pair => {
    const eq = pair.indexOf('=')
    const rawKey = eq === -1 ? pair : pair.slice(0, eq)
    let key = rawKey
    try { key = decodeURIComponent(rawKey.replace(/\+/g, ' ')) } catch {}
    return SECRET_QUERY_KEY.test(key.trim()) && eq !== -1 ? `${rawKey}=${REDACTED}` : pair
  })
  return `${url.slice(0, q)}?${parts.join('&')}`
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
      err: pino.stdSerializers.err
    },
    // Belt and braces for objects logged by hand.
    redact: {
      paths: ['headers["x-api-key"]', 'headers.authorization', 'headers.cookie', 'apiKey', 'proxy', '*.proxy'],
      censor: REDACTED
    }
  }, options.destination ?? logDestination())
}
