import { describe, expect, it } from 'vitest'
import { decideAddress, isBlockedHostname, isExempt, isExemptHost, parseAllowList } from '../../src/net/address-policy.ts'

function reasonOf (ip: string): string | null {
  const decision = decideAddress(ip)
  return decision.allowed ? null : decision.reason
}

describe('decideAddress: IPv4', () => {
  // [range, first, last, just below, just above] — the neighbours are public (or null when none exists).
  const ranges: Array<[string, string, string, string | null, string | null]> = [
    ['0.0.0.0/8', '0.0.0.0', '0.255.255.255', null, '1.0.0.0'],
    ['10.0.0.0/8', '10.0.0.0', '10.255.255.255', '9.255.255.255', '11.0.0.0'],
    ['100.64.0.0/10', '100.64.0.0', '100.127.255.255', '100.63.255.255', '100.128.0.0'],
    ['127.0.0.0/8', '127.0.0.0', '127.255.255.255', '126.255.255.255', '128.0.0.0'],
    ['169.254.0.0/16', '169.254.0.0', '169.254.255.255', '169.253.255.255', '169.255.0.0'],
    ['172.16.0.0/12', '172.16.0.0', '172.31.255.255', '172.15.255.255', '172.32.0.0'],
    ['192.0.0.0/24', '192.0.0.0', '192.0.0.255', '191.255.255.255', '192.0.1.0'],
    ['192.0.2.0/24', '192.0.2.0', '192.0.2.255', '192.0.1.255', '192.0.3.0'],
    ['192.88.99.0/24', '192.88.99.0', '192.88.99.255', '192.88.98.255', '192.88.100.0'],
    ['192.168.0.0/16', '192.168.0.0', '192.168.255.255', '192.167.255.255', '192.169.0.0'],
    ['198.18.0.0/15', '198.18.0.0', '198.19.255.255', '198.17.255.255', '198.20.0.0'],
    ['198.51.100.0/24', '198.51.100.0', '198.51.100.255', '198.51.99.255', '198.51.101.0'],
    ['203.0.113.0/24', '203.0.113.0', '203.0.113.255', '203.0.112.255', '203.0.114.0'],
    ['224.0.0.0/4', '224.0.0.0', '239.255.255.255', '223.255.255.255', null],
    ['240.0.0.0/4', '240.0.0.0', '255.255.255.255', null, null]
  ]

  it.each(ranges)('%s: both ends blocked, both neighbours allowed', (_range, first, last, below, above) => {
    expect(decideAddress(first).allowed).toBe(false)
    expect(decideAddress(last).allowed).toBe(false)
    if (below !== null) expect(decideAddress(below)).toEqual({ allowed: true })
    if (above !== null) expect(decideAddress(above)).toEqual({ allowed: true })
  })

  it('blocks the broadcast address and names each class in its reason', () => {
    expect(reasonOf('255.255.255.255')).toMatch(/broadcast/)
    expect(reasonOf('127.0.0.1')).toMatch(/loopback/)
    expect(reasonOf('169.254.169.254')).toMatch(/link-local/)
    expect(reasonOf('100.100.100.200')).toMatch(/CGNAT/)
    expect(reasonOf('224.0.0.251')).toMatch(/multicast/)
  })

  it.each(['8.8.8.8', '1.1.1.1', '93.184.215.14', '151.101.1.69', '223.255.255.254'])('allows public %s', (ip) => {
    expect(decideAddress(ip)).toEqual({ allowed: true })
  })

  it.each(['127.1', '0x7f000001', '2130706433', '0177.0.0.1', '0x0a.0.0.1', '10.1'])('decides legacy IPv4 form %s by its value', (ip) => {
    expect(decideAddress(ip).allowed).toBe(false)
  })

  it('reads legacy forms as the WHATWG parser does (134744072 is 8.8.8.8)', () => {
    expect(decideAddress('134744072')).toEqual({ allowed: true })
    expect(decideAddress('8.8.2056')).toEqual({ allowed: true })
  })
})

describe('decideAddress: IPv6', () => {
  it.each([
    ['::', /unspecified/],
    ['::1', /loopback/],
    ['[::1]', /loopback/],
    ['0:0:0:0:0:0:0:1', /loopback/],
    ['fc00::', /unique local/],
    ['fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', /unique local/],
    ['fe80::', /link-local/],
    ['febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff', /link-local/],
    ['fec0::', /site-local/],
    ['feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', /site-local/],
    ['ff00::', /multicast/],
    ['ff02::1', /multicast/],
    ['100::', /discard/],
    ['100::ffff:ffff:ffff:ffff', /discard/],
    ['2001:db8::', /documentation/],
    ['2001:db8:ffff:ffff:ffff:ffff:ffff:ffff', /documentation/],
    ['fe80::1%eth0', /zone/]
  ])('blocks %s', (ip, reason) => {
    expect(reasonOf(ip)).toMatch(reason)
  })

  it('draws each listed range exactly: the addresses just outside fall to the next rule', () => {
    // Outside the listed ranges but also outside 2000::/3, so still blocked, for that other reason.
    expect(reasonOf('fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff')).toMatch(/outside global unicast/)
    expect(reasonOf('fe00::')).toMatch(/outside global unicast/)
    expect(reasonOf('100:0:0:1::')).toMatch(/outside global unicast/)
    expect(reasonOf('feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff')).not.toMatch(/link-local/)
    // Inside 2000::/3, the documentation block's neighbours are public.
    expect(decideAddress('2001:db7:ffff:ffff:ffff:ffff:ffff:ffff')).toEqual({ allowed: true })
    expect(decideAddress('2001:db9::')).toEqual({ allowed: true })
  })

  it('allows global unicast 2000::/3 only', () => {
    expect(reasonOf('1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff')).toMatch(/outside global unicast/)
    expect(decideAddress('2000::')).toEqual({ allowed: true })
    expect(decideAddress('3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff')).toEqual({ allowed: true })
    expect(reasonOf('4000::')).toMatch(/outside global unicast/)
    expect(reasonOf('::2:0:0:0:1')).toMatch(/outside global unicast/)
    expect(decideAddress('2606:4700:4700::1111')).toEqual({ allowed: true })
    expect(decideAddress('[2001:4860:4860::8888]')).toEqual({ allowed: true })
  })

  it('IPv4-mapped ::ffff:0:0/96 is decided by the embedded IPv4', () => {
    expect(reasonOf('::ffff:127.0.0.1')).toMatch(/IPv4-mapped.*loopback/)
    expect(reasonOf('::ffff:7f00:1')).toMatch(/IPv4-mapped/)
    expect(reasonOf('::ffff:10.1.2.3')).toMatch(/IPv4-mapped.*private/)
    expect(reasonOf('::ffff:169.254.169.254')).toMatch(/IPv4-mapped/)
    expect(reasonOf('::ffff:0:0')).toMatch(/IPv4-mapped/)
    expect(decideAddress('::ffff:8.8.8.8')).toEqual({ allowed: true })
    expect(decideAddress('0:0:0:0:0:ffff:0808:0808')).toEqual({ allowed: true })
    // One bit off the mapped prefix is no longer a mapped address.
    expect(reasonOf('::fffe:808:808')).toMatch(/outside global unicast/)
  })

  it('IPv4-compatible ::a.b.c.d is decided by the embedded IPv4', () => {
    expect(reasonOf('::127.0.0.1')).toMatch(/IPv4-compatible.*loopback/)
    expect(reasonOf('::10.0.0.1')).toMatch(/IPv4-compatible.*private/)
    expect(reasonOf('::2')).toMatch(/IPv4-compatible/)
    expect(reasonOf('::7f00:1')).toMatch(/IPv4-compatible.*loopback/)
    expect(decideAddress('::8.8.8.8')).toEqual({ allowed: true })
    expect(reasonOf('::1:808:808')).toMatch(/outside global unicast/)
  })

  it('NAT64 64:ff9b::/96 is decided by the embedded IPv4', () => {
    expect(reasonOf('64:ff9b::127.0.0.1')).toMatch(/NAT64.*loopback/)
    expect(reasonOf('64:ff9b::a9fe:a9fe')).toMatch(/NAT64.*link-local/)
    expect(reasonOf('64:ff9b::192.168.0.1')).toMatch(/NAT64/)
    expect(decideAddress('64:ff9b::8.8.8.8')).toEqual({ allowed: true })
    expect(decideAddress('64:ff9b::808:808')).toEqual({ allowed: true })
    // Outside the /96 (bits 64-95 set) the address is just outside 2000::/3.
    expect(reasonOf('64:ff9b::1:0:808:808')).toMatch(/outside global unicast/)
  })

  it('local-use NAT64 64:ff9b:1::/48 needs a public IPv4 at every RFC 6052 placement', () => {
    // 8.8.8.8 at the /48, /56, /64 and /96 placements at once.
    expect(decideAddress('64:ff9b:1:808:808:808:808:808')).toEqual({ allowed: true })
    // 127.0.0.1 in the /48 placement (bytes 6, 7, 9, 10).
    expect(reasonOf('64:ff9b:1:7f00:0:100::')).toMatch(/local-use NAT64/)
    // 10.0.0.1 in the /96 placement while the others read public.
    expect(reasonOf('64:ff9b:1:808:808:808:a00:1')).toMatch(/local-use NAT64.*private/)
    // The common /96 form with zero middle bits reads 0.0.x.x at the /48 placement: blocked (fail closed).
    expect(reasonOf('64:ff9b:1::808:808')).toMatch(/local-use NAT64/)
    // The neighbouring /48 is not local-use NAT64, and lies outside 2000::/3.
    expect(reasonOf('64:ff9b:2:808:808:808:808:808')).toMatch(/outside global unicast/)
  })

  it('6to4 2002::/16 is decided by the IPv4 in bits 16-47', () => {
    expect(reasonOf('2002:7f00:1::')).toMatch(/6to4.*loopback/)
    expect(reasonOf('2002:c0a8:101::1')).toMatch(/6to4.*private/)
    expect(reasonOf('2002:a9fe:a9fe::')).toMatch(/6to4.*link-local/)
    expect(decideAddress('2002:808:808::1')).toEqual({ allowed: true })
    // 2003::/16 is not 6to4, so bits 16-47 mean nothing there.
    expect(decideAddress('2003:7f00:1::')).toEqual({ allowed: true })
  })

  it('Teredo 2001::/32 is blocked when its server (bits 32-63) or client (~last 32 bits) IPv4 is blocked', () => {
    // server 8.8.8.8, client 1.1.1.1 (stored inverted: fefe:fefe)
    expect(decideAddress('2001:0:808:808::fefe:fefe')).toEqual({ allowed: true })
    // client 127.0.0.1 stored inverted: 80ff:fffe
    expect(reasonOf('2001:0:808:808::80ff:fffe')).toMatch(/Teredo.*loopback/)
    // client 192.168.1.1 inverted: 3f57:fefe
    expect(reasonOf('2001:0:808:808:8000:ffff:3f57:fefe')).toMatch(/Teredo.*private/)
    // server 10.0.0.1, client public
    expect(reasonOf('2001:0:a00:1::fefe:fefe')).toMatch(/Teredo.*private/)
    // 7f00:0001 NOT inverted is client 128.255.255.254, which is public: the inversion is applied.
    expect(decideAddress('2001:0:808:808::7f00:1')).toEqual({ allowed: true })
    // 2001:1::/32 is not Teredo.
    expect(decideAddress('2001:1:a00:1::80ff:fffe')).toEqual({ allowed: true })
  })
})

describe('decideAddress: not an address', () => {
  it.each(['', 'example.com', 'localhost', '1.2.3.4.5', '256.0.0.1', '::g', '[::1', '1.2.3.4:80', '1.2.3.4/8',
    '127.0.0.1#x', '::1/128', '0x7g.0.0.1', ':::1'])('refuses %j', (value) => {
    expect(decideAddress(value)).toEqual({ allowed: false, reason: 'not an IP address' })
  })
})

describe('isBlockedHostname', () => {
  it.each(['localhost', 'LOCALHOST', 'localhost.', 'LocalHost.', 'a.localhost', 'a.b.LOCALHOST', 'x.localhost.'])('blocks %s', (name) => {
    expect(isBlockedHostname(name)).toBe(true)
  })

  it.each(['localhost.com', 'notlocalhost', 'localhostx', 'localhost.example', 'example.com', 'localhost..', 'local'])('does not block %s', (name) => {
    expect(isBlockedHostname(name)).toBe(false)
  })
})

describe('parseAllowList / isExempt', () => {
  const allow = parseAllowList([
    '127.0.0.1:8080', 'localhost:4000', '[::1]:9000', 'plain.test:80', 'secure.test:443', '  ', ''
  ])

  it('normalizes entries the way URL hosts are normalized', () => {
    expect([...allow].sort()).toEqual(['127.0.0.1:8080', '[::1]:9000', 'localhost:4000', 'plain.test:80', 'secure.test:443'])
    expect([...parseAllowList(['LOCALHOST:4000', '127.1:8080', '[0:0:0:0:0:0:0:1]:9000', '0x7f000001:81'])].sort())
      .toEqual(['127.0.0.1:8080', '127.0.0.1:81', '[::1]:9000', 'localhost:4000'])
  })

  it.each(['127.0.0.1', 'localhost:', ':8080', '127.0.0.1:0', '127.0.0.1:65536', 'http://127.0.0.1:8080', '::1:9000',
    'user@host:80', 'host:80/path', 'a b:80', '127.0.0.1:80x'])('rejects entry %j', (entry) => {
    expect(() => parseAllowList([entry])).toThrow(TypeError)
  })

  it.each([
    ['http://127.0.0.1:8080/', true],
    ['https://127.0.0.1:8080/x', true],
    ['http://2130706433:8080/', true],
    ['http://127.0.0.1:8081/', false],
    ['http://127.0.0.1/', false],
    ['http://127.0.0.2:8080/', false],
    ['http://localhost:4000/a?b', true],
    ['http://LOCALHOST:4000/', true],
    ['http://localhost:4001/', false],
    ['http://localhost./', false],
    ['http://a.localhost:4000/', false],
    ['http://[::1]:9000/', true],
    ['http://[0:0::1]:9000/', true],
    ['http://[::1]:9001/', false],
    ['http://[::ffff:127.0.0.1]:9000/', false],
    ['http://plain.test/', true],
    ['http://plain.test:80/', true],
    ['https://plain.test/', false],
    ['https://secure.test/', true],
    ['https://secure.test:443/', true],
    ['http://secure.test/', false]
  ])('%s exempt: %s', (url, expected) => {
    expect(isExempt(new URL(url), allow)).toBe(expected)
  })

  it('matches a bare or bracketed host with an explicit port', () => {
    expect(isExemptHost('::1', 9000, allow)).toBe(true)
    expect(isExemptHost('[::1]', 9000, allow)).toBe(true)
    expect(isExemptHost('127.0.0.1', 8080, allow)).toBe(true)
    expect(isExemptHost('LOCALHOST', 4000, allow)).toBe(true)
    expect(isExemptHost('127.0.0.1', 8081, allow)).toBe(false)
    expect(isExemptHost('localhost', 9000, allow)).toBe(false)
    expect(isExemptHost('', 80, allow)).toBe(false)
  })

  it('exempts nothing when the list is empty', () => {
    const none = parseAllowList([])
    expect(isExempt(new URL('http://127.0.0.1:8080/'), none)).toBe(false)
    expect(isExemptHost('127.0.0.1', 8080, none)).toBe(false)
  })
})
