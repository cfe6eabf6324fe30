// The quota's subject: the client IP (already resolved through TRUST_PROXY by Fastify), with
// IPv4-mapped IPv6 folded to IPv4 and IPv6 clients counted per /64 (docs/api.md §1.3).
import ipaddr from 'ipaddr.js'

export function quotaSubject (ip: string): string {
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
