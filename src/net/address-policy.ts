// The address policy of docs/api.md §10 as pure decisions: which IP literals are public unicast, which names are
// always local, and which host:port pairs ALLOW_PRIVATE_HOSTS exempts. No I/O: guard.ts does the resolving.

import ipaddr from 'ipaddr.js'
import { effectivePort } from '../util/url.ts'

export type AddressDecision = { allowed: true } | { allowed: false, reason: string }

/** Canonical `host:port` keys (WHATWG hostname, `[v6]` bracketed, explicit port) of ALLOW_PRIVATE_HOSTS. */
export type AllowList = ReadonlySet<string>

type IPv4 = ipaddr.IPv4
type IPv6 = ipaddr.IPv6
type Cidr<T> = [T, number]

const ALLOWED: AddressDecision = { allowed: true }

function blocked (reason: string): AddressDecision {
  return { allowed: false, reason }
}

const IPV4_BLOCKED: ReadonlyArray<readonly [Cidr<IPv4>, string]> = ([
  ['0.0.0.0/8', '"this network"'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'shared address space (CGNAT)'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'IETF protocol assignments'],
  ['192.0.2.0/24', 'documentation (TEST-NET-1)'],
  ['192.88.99.0/24', '6to4 relay anycast'],
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation (TEST-NET-2)'],
  ['203.0.113.0/24', 'documentation (TEST-NET-3)'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved (broadcast included)']
] as const).map(([cidr, reason]) => [ipaddr.IPv4.parseCIDR(cidr), reason] as const)

const IPV6_BLOCKED: ReadonlyArray<readonly [Cidr<IPv6>, string]> = ([
  ['fc00::/7', 'unique local'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'site-local'],
  ['ff00::/8', 'multicast'],
  ['100::/64', 'discard-only'],
  ['2001:db8::/32', 'documentation']
] as const).map(([cidr, reason]) => [ipaddr.IPv6.parseCIDR(cidr), reason] as const)

function v6 (cidr: string): Cidr<IPv6> {
  return ipaddr.IPv6.parseCIDR(cidr)
}

const GLOBAL_UNICAST = v6('2000::/3')
const IPV4_MAPPED = v6('::ffff:0:0/96')
const IPV4_COMPATIBLE = v6('::/96')
const NAT64_WELL_KNOWN = v6('64:ff9b::/96')
const NAT64_LOCAL_USE = v6('64:ff9b:1::/48')
const SIX_TO_FOUR = v6('2002::/16')
const TEREDO = v6('2001::/32')

/**
 * Where RFC 6052 puts the IPv4 address for each prefix length that fits inside 64:ff9b:1::/48 (the byte indexes of
 * its four octets; byte 8, the "u" octet, is always skipped).
 */
const RFC6052_PLACEMENTS: ReadonlyArray<readonly number[]> = [
  [6, 7, 9, 10], // /48
  [7, 9, 10, 11], // /56
  [9, 10, 11, 12], // /64
  [12, 13, 14, 15] // /96
]

function decideIPv4 (address: IPv4): AddressDecision {
  for (const [range, reason] of IPV4_BLOCKED) {
    if (address.match(range)) return blocked(`IPv4 ${reason}`)
  }
  return ALLOWED
}

function ipv4FromBytes (bytes: readonly number[], indexes: readonly number[], xor = 0): IPv4 {
  return new ipaddr.IPv4(indexes.map((i) => (bytes[i] ?? 0) ^ xor))
}

/** Decides an IPv6 address from the IPv4 address(es) it embeds: blocked when any of them is blocked. */
function decideEmbedded (form: string, embedded: readonly IPv4[]): AddressDecision {
  for (const ipv4 of embedded) {
    const decision = decideIPv4(ipv4)
    if (!decision.allowed) return blocked(`${form} address embedding a blocked IPv4 (${decision.reason})`)
  }
  return ALLOWED
}

function decideIPv6 (address: IPv6): AddressDecision {
  const bytes = address.toByteArray()
  const last32 = [12, 13, 14, 15]

  if (bytes.every((b) => b === 0)) return blocked('IPv6 unspecified')
  if (bytes.slice(0, 15).every((b) => b === 0) && bytes[15] === 1) return blocked('IPv6 loopback')

  // Forms that carry an IPv4 address: the embedded IPv4 decides.
  if (address.match(IPV4_MAPPED)) return decideEmbedded('IPv4-mapped', [ipv4FromBytes(bytes, last32)])
  if (address.match(IPV4_COMPATIBLE)) return decideEmbedded('IPv4-compatible', [ipv4FromBytes(bytes, last32)])
  if (address.match(NAT64_WELL_KNOWN)) return decideEmbedded('NAT64', [ipv4FromBytes(bytes, last32)])
  if (address.match(NAT64_LOCAL_USE)) {
    // The operator picks the prefix length inside the local-use /48, so the IPv4 position is not knowable from the
    // address alone: every RFC 6052 placement must hold a public IPv4 (fail closed).
    return decideEmbedded('local-use NAT64', RFC6052_PLACEMENTS.map((placement) => ipv4FromBytes(bytes, placement)))
  }
  if (address.match(SIX_TO_FOUR)) return decideEmbedded('6to4', [ipv4FromBytes(bytes, [2, 3, 4, 5])])
  if (address.match(TEREDO)) {
    // Teredo: the server IPv4 sits in bits 32-63, the client IPv4 in the last 32 bits, inverted.
    return decideEmbedded('Teredo', [ipv4FromBytes(bytes, [4, 5, 6, 7]), ipv4FromBytes(bytes, last32, 0xff)])
  }

  for (const [range, reason] of IPV6_BLOCKED) {
    if (address.match(range)) return blocked(`IPv6 ${reason}`)
  }
  if (!address.match(GLOBAL_UNICAST)) return blocked('IPv6 outside global unicast (2000::/3)')
  return ALLOWED
}

/**
 * Parses an IP literal the way the WHATWG URL parser reads hosts (so `127.1`, `0x7f000001` and `2130706433` are
 * 127.0.0.1, and `::127.0.0.1` is the IPv4-compatible ::7f00:1). ipaddr.js alone is more lenient (it reads
 * `::a.b.c.d` as IPv4-mapped), so it only ever sees the parser's canonical output. null when not an IP.
 */
function parseLiteral (literal: string): IPv4 | IPv6 | null {
  try {
    if (literal.includes(':')) {
      if (!/^[0-9a-f:.]+$/i.test(literal)) return null
      const host = new URL(`http://[${literal}]/`).hostname
      return ipaddr.IPv6.parse(host.slice(1, -1))
    }
    if (!/^[0-9a-fx.]+$/i.test(literal)) return null
    const host = new URL(`http://${literal}/`).hostname
    return ipaddr.IPv4.isValidFourPartDecimal(host) ? ipaddr.IPv4.parse(host) : null
  } catch {
    return null
  }
}

/**
 * Classifies an IP literal (IPv4 in any form the WHATWG parser accepts, IPv6 with or without brackets) as public
 * unicast (allowed) or not. Anything that is not an IP address is refused.
 */
export function decideAddress (ip: string): AddressDecision {
  const literal = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip
  // A zone index only makes sense on link-local and multicast addresses, both blocked; never guess with one.
  if (literal.includes(':') && literal.includes('%')) return blocked('IPv6 scoped (zone) address')
  const address = parseLiteral(literal)
  if (address === null) return blocked('not an IP address')
  return address.kind() === 'ipv4' ? decideIPv4(address as IPv4) : decideIPv6(address as IPv6)
}

/** `localhost` and `*.localhost`, in any letter case, with or without the trailing root dot. */
export function isBlockedHostname (name: string): boolean {
  const lower = name.toLowerCase()
  const host = lower.endsWith('.') ? lower.slice(0, -1) : lower
  return host === 'localhost' || host.endsWith('.localhost')
}

/** The WHATWG form of a host (`[::1]` for IPv6, dotted quad for IPv4, punycode, lower case), or null. */
function canonicalHost (host: string): string | null {
  if (host === '' || /[/\\?#@\s]/.test(host)) return null
  const bracketed = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host
  try {
    const url = new URL(`http://${bracketed}/`)
    return url.port === '' && url.username === '' && url.password === '' ? url.hostname : null
  } catch {
    return null
  }
}

/**
 * Parses ALLOW_PRIVATE_HOSTS entries: exact `host:port` pairs such as `127.0.0.1:8080`, `localhost:4000` or
 * `[::1]:9000`. Hosts are normalized the way the WHATWG parser normalizes URL hosts. Blank entries are skipped;
 * anything else that is not `host:port` throws a TypeError naming the entry.
 */
export function parseAllowList (entries: readonly string[]): AllowList {
  const allow = new Set<string>()
  for (const raw of entries) {
    const entry = raw.trim()
    if (entry === '') continue
    const colon = entry.lastIndexOf(':')
    const portText = colon === -1 ? '' : entry.slice(colon + 1)
    const hostText = colon === -1 ? '' : entry.slice(0, colon)
    // An IPv6 host must be bracketed, or `::1:9000` would be ambiguous.
    const host = hostText.includes(':') && !hostText.startsWith('[') ? null : canonicalHost(hostText)
    const port = /^\d{1,5}$/.test(portText) ? Number(portText) : NaN
    if (host === null || !(port >= 1 && port <= 65535)) {
      throw new TypeError(`Invalid ALLOW_PRIVATE_HOSTS entry "${entry}": expected host:port, e.g. 127.0.0.1:8080 or [::1]:9000`)
    }
    allow.add(`${host}:${port}`)
  }
  return allow
}

/** Whether a host (bracketed or bare IPv6 accepted) and an explicit port form an exempt pair. */
export function isExemptHost (host: string, port: number, allow: AllowList): boolean {
  if (allow.size === 0) return false
  const canonical = canonicalHost(host)
  return canonical !== null && allow.has(`${canonical}:${port}`)
}

/** Whether a URL's WHATWG hostname and effective port (80/443 when none is given) match an exempt entry. */
export function isExempt (url: URL, allow: AllowList): boolean {
  const port = effectivePort(url)
  if (port === undefined) return false
  return allow.has(`${url.hostname}:${port}`)
}
