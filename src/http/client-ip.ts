// The client's address: the socket's peer, or the nearest untrusted address of x-forwarded-for as TRUST_PROXY
// allows (docs/operations.md); and the quota's subject made from it, with IPv4-mapped IPv6 folded to IPv4 and IPv6
// clients counted per /64 (docs/api.md §1.3).
import type { IncomingMessage } from 'node:http'
import proxyAddr from '@fastify/proxy-addr'
import ipaddr from 'ipaddr.js'
import { LRUCache } from 'lru-cache'
import type { Config } from '../config.ts'

/** Whether the address at hop `i` (0: the socket's peer) may forward for someone else. */
export type TrustProxy = (address: string, hop: number) => boolean

export interface ClientAddress {
  /** TRUST_PROXY as Fastify's `trustProxy` option takes it: false, or the trust function. */
  trust: TrustProxy | false
  /** The client's address as Fastify's `request.ip` gives it with that option. */
  of: (req: IncomingMessage) => string
}

/**
 * TRUST_PROXY read once, for Fastify (request.ip) and anything else that needs the client address. A hop count
 * trusts that many nearest hops whatever they are (Fastify reads a bare number as trusting none, which would count
 * every client behind one proxy as that proxy); a list trusts those addresses and ranges only.
 */
export function clientAddressOf (setting: Config['trustProxy']): ClientAddress {
  if (setting === false) return { trust: false, of: req => req.socket.remoteAddress ?? '' }
  const trust: TrustProxy = setting === true
    ? () => true
    : typeof setting === 'number' ? (_address, hop) => hop < setting : proxyAddr.compile(setting)
  return {
    trust,
    of: req => {
      const chain = proxyAddr.all(req, trust)
      return chain[chain.length - 1] ?? ''
    }
  }
}

// Subjects of recent addresses: a client's requests come from the same address, and parsing it is a tenth of a
// free cache hit's own work.
const subjects = new LRUCache<string, string>({ max: 10_000 })

export function quotaSubject (ip: string): string {
  let subject = subjects.get(ip)
  if (subject === undefined) {
    subject = subjectOf(ip)
    subjects.set(ip, subject)
  }
  return subject
}

function subjectOf (ip: string): string {
  let addr: ipaddr.IPv4 | ipaddr.IPv6
  try {
    addr = ipaddr.parse(ip.replace(/^\[|\]$/g, '').replace(/%.*$/, ''))
  } catch {
    return `raw:${ip}`
  }
  if (addr.kind() === 'ipv6') {
    const v6 = addr as ipaddr.IPv6
    if (v6.isIPv4MappedAddress()) return `v4:${v6.toIPv4Address().toString()}`
    const parts = v6.parts.slice(0, 4).map(p => p.toString(16))
    return `v6:${parts.join(':')}::/64`
  }
  return `v4:${addr.toString()}`
}
