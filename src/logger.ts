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

/** Replaces the values of secret query parameters in a request path with a marker. */
export function redactUrl (url: string): string {
  const q = url.indexOf('?')
  if (q === -1) return url
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
  /** Where lines go; defaults to stdout. Tests pass a stream to read what was logged. */
  destination?: pino.DestinationStream
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
  }, options.destination ?? pino.destination({ sync: false }))
}
