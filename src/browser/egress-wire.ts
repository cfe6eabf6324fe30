// The egress proxy's pure pieces (egress-proxy.ts): the key refusals are matched by, CONNECT authorities, the
// headers a forwarded request keeps, which requests may be sent twice, how a failure is described in a refusal, and
// the answer that carries it.
import type http from 'node:http'
import { isAppError } from '../errors.ts'
import { HOP_BY_HOP, connectionOptions } from '../net/headers.ts'
import { effectivePort } from '../util/url.ts'
import type { EgressRefusalKind } from './egress-types.ts'

/** Response header on every answer the proxy makes up itself (never on a target's response). */
export const EGRESS_MARKER_HEADER = 'x-pagecast-egress'

/** Safe methods (RFC 9110 §9.2.1) whose request carries no body. */
const RESENDABLE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS'])

/**
 * Whether a request may be sent once more on a new connection when the kept-alive one it went out on fails before
 * any answer: the target's idle timeout racing the proxy's reuse. Browsers do the same for their own connections.
 */
export function resendable (req: http.IncomingMessage): boolean {
  return RESENDABLE_METHODS.has(req.method ?? '') && req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined
}

/** `host:port` of a URL with the effective port, the key refusals are matched by. */
export function egressKey (url: string): string | undefined {
  let parsed: URL
  try { parsed = new URL(url) } catch { return undefined }
  const port = effectivePort(parsed)
  if (port === undefined || parsed.hostname === '') return undefined
  return `${parsed.hostname}:${port}`
}

/** Parses a CONNECT authority (`host:port`, `[v6]:port`) into the WHATWG host form and a port. */
export function parseAuthority (authority: string): { host: string, port: number } | undefined {
  const colon = authority.lastIndexOf(':')
  if (colon <= 0) return undefined
  const portText = authority.slice(colon + 1)
  if (!/^\d{1,5}$/.test(portText)) return undefined
  const port = Number(portText)
  if (port < 1 || port > 65535) return undefined
  const hostText = authority.slice(0, colon)
  if (hostText.includes(':') && !hostText.startsWith('[')) return undefined
  try {
    const url = new URL(`http://${hostText}/`)
    if (url.username !== '' || url.password !== '' || url.port !== '' || url.hostname === '') return undefined
    return { host: url.hostname, port }
  } catch {
    return undefined
  }
}

/** Raw headers (name, value, ...) without the hop-by-hop ones (net/headers.ts), never forwarded in either direction. */
export function filteredHeaders (raw: readonly string[]): string[] {
  // The Connection header may name further hop-by-hop headers.
  const named = new Set<string>()
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if ((raw[i] ?? '').toLowerCase() === 'connection') for (const name of connectionOptions(raw[i + 1])) named.add(name)
  }
  const out: string[] = []
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] ?? ''
    const lower = name.toLowerCase()
    // A target may not pose as the proxy: the marker only ever comes from here.
    if (HOP_BY_HOP.has(lower) || named.has(lower) || lower === EGRESS_MARKER_HEADER) continue
    out.push(name, raw[i + 1] ?? '')
  }
  return out
}

export function describe (err: unknown): string {
  if (isAppError(err)) {
    const cause = err.cause instanceof Error ? err.cause.message : ''
    return cause === '' ? err.code : `${err.code}: ${cause}`
  }
  return err instanceof Error ? err.message : String(err)
}

/** A refusal of a plain-http request, marked so that Chromium's page and the pool cannot take it for the target's. */
export function answer (res: http.ServerResponse, status: number, kind: EgressRefusalKind): void {
  if (res.headersSent) { res.destroy(); return }
  const body = kind === 'blocked' ? 'Blocked by pagecast: the address is not allowed.\n' : 'pagecast could not reach the address.\n'
  res.writeHead(status, {
    [EGRESS_MARKER_HEADER]: kind,
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    connection: 'close'
  })
  res.end(body)
}
