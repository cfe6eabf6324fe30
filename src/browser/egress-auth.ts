// The egress proxy's own credential (egress-proxy.ts): made up per proxy, asked of every client, so that no other
// local process can use a context's proxy. Compared in constant time; never logged. The browser learns it once per
// context (page-guards.ts authenticateEgress): a request to the proxy's own address, which the proxy answers itself
// (204) once the credential comes.
import { randomBytes, timingSafeEqual } from 'node:crypto'
import type http from 'node:http'
import type { Duplex } from 'node:stream'

export interface EgressGate {
  /** The credential the browser is to present; undefined when none is asked. */
  credentials: { username: string, password: string } | undefined
  /** Whether the request carries the credential (always, when none is asked). */
  authorized: (req: http.IncomingMessage) => boolean
}

const REALM = 'Basic realm="pagecast-egress"'
const CHALLENGE = `HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: ${REALM}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`

export function createEgressGate (authenticate: boolean): EgressGate {
  const credentials = authenticate
    ? { username: `pagecast-${randomBytes(6).toString('hex')}`, password: randomBytes(24).toString('base64url') }
    : undefined
  const expected = credentials === undefined ? undefined : Buffer.from(`Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`)
  return {
    credentials,
    authorized (req) {
      if (expected === undefined) return true
      const given = Buffer.from(String(req.headers['proxy-authorization'] ?? ''))
      return given.length === expected.length && timingSafeEqual(given, expected)
    }
  }
}

/** The 407 that asks for the credential: on a plain request's response, or written on a tunnel's socket. */
export function challenge (to: http.ServerResponse | Duplex): void {
  if ('writeHead' in to) to.writeHead(407, { 'proxy-authenticate': REALM, 'content-length': 0, connection: 'close' }).end()
  else to.end(CHALLENGE)
}
