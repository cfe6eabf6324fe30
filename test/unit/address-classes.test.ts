// The address classes that no test may connect to (private, link-local, cloud metadata, CGNAT, ULA, multicast,
// reserved), as pure decisions: every class in every embedding (IPv4-mapped, IPv4-compatible, NAT64, 6to4, Teredo)
// and every literal spelling, through decideAddress and through the guard with an injected resolver (no DNS, no
// socket). Range edges and the reason texts are in test/unit/address-policy.test.ts; this file fills the matrix.
import { describe, expect, it } from 'vitest'
import { decideAddress } from '../../src/net/address-policy.ts'
import { createAddressGuard } from '../../src/net/guard.ts'
import type { ResolvedAddress } from '../../src/net/guard.ts'
import { isAppError } from '../../src/errors.ts'

/** One address inside each blocked IPv4 class (docs/api.md §10), not at a range edge. */
const BLOCKED_V4: Array<[string, string]> = [
  ['this network 0/8', '0.1.2.3'],
  ['private 10/8', '10.20.30.40'],
  ['CGNAT 100.64/10', '100.100.100.200'],
  ['loopback 127/8', '127.10.20.30'],
  ['link-local 169.254/16', '169.254.1.1'],
  ['cloud metadata 169.254.169.254', '169.254.169.254'],
  ['private 172.16/12', '172.20.10.1'],
  ['IETF 192.0.0/24', '192.0.0.170'],
  ['TEST-NET-1 192.0.2/24', '192.0.2.1'],
  ['6to4 relay 192.88.99/24', '192.88.99.1'],
  ['private 192.168/16', '192.168.1.1'],
  ['benchmarking 198.18/15', '198.19.0.1'],
  ['TEST-NET-2 198.51.100/24', '198.51.100.7'],
  ['TEST-NET-3 203.0.113/24', '203.0.113.9'],
  ['multicast 224/4', '239.255.255.250'],
  ['reserved 240/4', '250.1.2.3'],
  ['broadcast', '255.255.255.255']
]

const PUBLIC_V4 = ['8.8.8.8', '1.1.1.1', '9.9.9.9']

function octets (ip: string): number[] {
  return ip.split('.').map(Number)
}

function hex16 (a: number, b: number): string {
  return ((a << 8) | b).toString(16)
}

/** The IPv6 embeddings of an IPv4 address the policy must see through. */
function embeddings (ip: string): Array<[string, string]> {
  const [a = 0, b = 0, c = 0, d = 0] = octets(ip)
  const high = hex16(a, b)
  const low = hex16(c, d)
  const inv = (x: number): number => x ^ 0xff
  return [
    ['IPv4-mapped dotted', `::ffff:${ip}`],
    ['IPv4-mapped hex', `::ffff:${high}:${low}`],
    ['IPv4-mapped long form', `0:0:0:0:0:ffff:${high}:${low}`],
    ['IPv4-compatible', `::${ip}`],
    ['NAT64 64:ff9b::/96', `64:ff9b::${high}:${low}`],
    ['NAT64 dotted', `64:ff9b::${ip}`],
    ['6to4 2002::/16', `2002:${high}:${low}::1`],
    ['Teredo client (inverted)', `2001:0:808:808:0:0:${hex16(inv(a), inv(b))}:${hex16(inv(c), inv(d))}`],
    ['Teredo server', `2001:0:${high}:${low}::fefe:fefe`]
  ]
}

/** Other spellings of an IPv4 literal that the WHATWG parser accepts. */
function spellings (ip: string): string[] {
  const [a = 0, b = 0, c = 0, d = 0] = octets(ip)
  const value = ((a << 24) >>> 0) + (b << 16) + (c << 8) + d
  return [
    String(value),
    `0x${value.toString(16)}`,
    `0${value.toString(8)}`,
    [a, b, c, d].map((o) => `0${o.toString(8)}`).join('.'),
    [a, b, c, d].map((o) => `0x${o.toString(16)}`).join('.'),
    `${a}.${(b << 16) + (c << 8) + d}`,
    `${a}.${b}.${(c << 8) + d}`
  ]
}

describe('every blocked IPv4 class, in every IPv6 embedding and every spelling', () => {
  it.each(BLOCKED_V4)('%s (%s)', (_label, ip) => {
    expect(decideAddress(ip).allowed, ip).toBe(false)
    for (const [form, v6] of embeddings(ip)) expect(decideAddress(v6).allowed, `${form} ${v6}`).toBe(false)
    for (const spelled of spellings(ip)) expect(decideAddress(spelled).allowed, spelled).toBe(false)
  })

  it.each(PUBLIC_V4)('the same embeddings and spellings of public %s are allowed (the matrix can tell)', (ip) => {
    expect(decideAddress(ip)).toEqual({ allowed: true })
    for (const [form, v6] of embeddings(ip)) {
      // IPv4-compatible ::a.b.c.d is deprecated but decided by its IPv4 like the others.
      expect(decideAddress(v6), `${form} ${v6}`).toEqual({ allowed: true })
    }
    for (const spelled of spellings(ip)) expect(decideAddress(spelled), spelled).toEqual({ allowed: true })
  })
})

describe('IPv6 classes beyond the range edges', () => {
  it.each([
    ['ULA fc00::/7 (inside, fc half)', 'fc12:3456::1'],
    ['ULA fd00::/8', 'fd12:3456:789a::1'],
    ['AWS IPv6 metadata (ULA)', 'fd00:ec2::254'],
    ['link-local fe80::/10', 'fe80::1ff:fe23:4567:890a'],
    ['link-local upper part', 'fe9a::1'],
    ['site-local fec0::/10', 'fed0::1'],
    ['multicast, all nodes', 'ff02::1'],
    ['multicast, global scope', 'ff0e::1'],
    ['multicast, solicited node', 'ff02::1:ff00:1'],
    ['documentation', '2001:db8:85a3::8a2e:370:7334'],
    ['discard 100::/64', '100::1'],
    ['unspecified, long form', '0:0:0:0:0:0:0:0'],
    ['loopback, padded', '0000:0000:0000:0000:0000:0000:0000:0001'],
    ['unallocated outside 2000::/3', '4000::1'],
    ['unallocated below 2000::/3', '1000::1'],
    ['Teredo with a private server', '2001:0:c0a8:101::fefe:fefe'],
    ['6to4 of the cloud metadata address', '2002:a9fe:a9fe::1'],
    ['NAT64 of the cloud metadata address', '64:ff9b::169.254.169.254'],
    ['local-use NAT64 of 10/8 at /96', '64:ff9b:1:808:808:808:a14:1e28'],
    ['scoped link-local', 'fe80::1%25eth0']
  ])('%s: %s is blocked', (_label, ip) => {
    expect(decideAddress(ip).allowed).toBe(false)
  })
})

describe('the guard refuses a name that resolves into any blocked class (injected resolver, no socket)', () => {
  const answers: Record<string, ResolvedAddress[]> = {}
  for (const [label, ip] of BLOCKED_V4) answers[`v4-${label.replace(/[^a-z0-9]+/gi, '-').toLowerCase()}.test`] = [{ address: ip, family: 4 }]
  for (const ip of ['::1', 'fd00:ec2::254', 'fe80::1', 'ff02::1', '::ffff:169.254.169.254', '64:ff9b::a00:1', '2002:ac10:1::1']) {
    answers[`v6-${ip.replace(/[^0-9a-f]+/g, '-')}.test`] = [{ address: ip, family: 6 }]
  }
  // One public answer does not launder a blocked one.
  answers['mixed.test'] = [{ address: '8.8.8.8', family: 4 }, { address: '10.0.0.1', family: 4 }]
  answers['mixed-v6.test'] = [{ address: '2606:4700:4700::1111', family: 6 }, { address: 'fc00::1', family: 6 }]
  answers['public.test'] = [{ address: '8.8.8.8', family: 4 }, { address: '2606:4700:4700::1111', family: 6 }]

  const guard = createAddressGuard({
    allowPrivateHosts: [],
    resolve: async (hostname) => {
      const found = answers[hostname]
      if (found === undefined) throw Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })
      return found
    }
  })

  async function codeOf (promise: Promise<unknown>): Promise<string> {
    const error = await promise.then(() => undefined, (err: unknown) => err)
    return isAppError(error) ? error.code : `no AppError (${String(error)})`
  }

  it.each(Object.keys(answers).filter((name) => name !== 'public.test'))('%s', async (name) => {
    expect(await codeOf(guard.resolveChecked(name, 80))).toBe('EFORBIDDENURL')
    expect(await codeOf(guard.assertUrlResolvesAllowed(new URL(`http://${name}/`)))).toBe('EFORBIDDENURL')
  })

  it('allows a name whose answers are all public, and picks IPv4 first', async () => {
    expect(await guard.resolveChecked('public.test', 443)).toEqual({ address: '8.8.8.8', family: 4 })
  })

  it.each([
    'http://169.254.169.254/latest/meta-data/',
    'http://2852039166/',
    'http://0xa9fea9fe/',
    'http://0251.0376.0251.0376/',
    'http://169.254.43518/',
    'http://[::ffff:a9fe:a9fe]/',
    'http://[fd00:ec2::254]/',
    'http://167772161/',
    'http://192.168.1/',
    'http://metadata.localhost/',
    'http://100.64.0.1/',
    'http://[ff02::1]/'
  ])('the literal %s is refused without DNS', (url) => {
    let thrown: unknown
    try { guard.assertUrlAllowed(new URL(url)) } catch (err) { thrown = err }
    expect(isAppError(thrown) ? thrown.code : String(thrown)).toBe('EFORBIDDENURL')
  })
})
