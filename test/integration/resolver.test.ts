// The guard's resolver (src/net/resolver.ts) against a real DNS server on loopback UDP: answers cached for their TTL,
// absent names and stalled servers remembered, concurrent lookups of one name sharing one query, the hosts file
// first, and lookups that never wait for libuv's thread pool.
import { pbkdf2 } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createCachingResolver, parseHosts } from '../../src/net/resolver.ts'
import { systemResolver, type ResolvedAddress } from '../../src/net/guard.ts'
import { startDnsServer, type DnsServer, type ZoneAnswer } from '../helpers/dns-server.ts'
import type { FixtureServer } from '../helpers/fixture-server.ts'
import type { build as Build } from '../helpers/build.ts'

const ZONE: Record<string, ZoneAnswer> = {
  'fast.test': { addresses: ['127.0.0.1', '::1'], ttl: 60 },
  'short.test': { addresses: ['127.0.0.1'], ttl: 1 },
  'slow.test': { addresses: ['127.0.0.1'], ttl: 60, delayMs: 400 },
  'stalled.test': { stall: true },
  'broken.test': { rcode: 'SERVFAIL' }
}

let dns: DnsServer
beforeAll(async () => {
  dns = await startDnsServer((name) => ZONE[name] ?? { rcode: 'NXDOMAIN' })
})
afterAll(async () => { await dns.close() })

/** Long enough for a loopback answer on a loaded machine (load 20 made 300 ms miss answers); a stall costs it once. */
const TIMEOUT_MS = 2000

function resolverAt (clock: { now: number }, system: (name: string) => Promise<ResolvedAddress[]> = async () => []): ReturnType<typeof createCachingResolver> {
  return createCachingResolver({ servers: [dns.server], timeoutMs: TIMEOUT_MS, tries: 1, hostsFile: '/nonexistent', now: () => clock.now, system })
}

describe('the caching resolver', () => {
  it('answers A and AAAA records, and holds them for their TTL (at least its lower bound)', async () => {
    const clock = { now: 1_000_000 }
    const resolver = resolverAt(clock)
    expect(await resolver.resolve('fast.test')).toEqual([{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }])
    expect(await resolver.resolve('FAST.test.')).toHaveLength(2)
    expect(dns.count('fast.test')).toBe(2) // one A, one AAAA query: the second lookup came from the cache
    clock.now += 59_000
    await resolver.resolve('fast.test')
    expect(dns.count('fast.test')).toBe(2)
    clock.now += 2_000
    await resolver.resolve('fast.test')
    expect(dns.count('fast.test')).toBe(4)
    // A TTL of 1 s is held for the 5 s lower bound.
    await resolver.resolve('short.test')
    clock.now += 4_000
    await resolver.resolve('short.test')
    expect(dns.count('short.test', 'A')).toBe(1)
    clock.now += 2_000
    await resolver.resolve('short.test')
    expect(dns.count('short.test', 'A')).toBe(2)
  })

  it('sends one query for concurrent lookups of one name', async () => {
    const resolver = resolverAt({ now: 2_000_000 })
    const answers = await Promise.all(Array.from({ length: 25 }, async () => await resolver.resolve('slow.test')))
    expect(answers.every(answer => answer[0]?.address === '127.0.0.1')).toBe(true)
    expect(dns.count('slow.test', 'A')).toBe(1)
    expect(resolver.stats().coalesced).toBe(24)
  })

  it('lets a stalled server cost one timeout: the next lookups fail at once, until the failure expires', async () => {
    const clock = { now: 3_000_000 }
    const resolver = resolverAt(clock)
    const first = await Promise.allSettled(Array.from({ length: 10 }, async () => await resolver.resolve('stalled.test')))
    expect(first.every(outcome => outcome.status === 'rejected')).toBe(true)
    const asked = dns.count('stalled.test')
    expect(asked).toBe(2) // one try of A and one of AAAA for ten lookups
    await expect(resolver.resolve('stalled.test')).rejects.toThrow()
    expect(dns.count('stalled.test')).toBe(asked)
    clock.now += 31_000
    await expect(resolver.resolve('stalled.test')).rejects.toThrow()
    expect(dns.count('stalled.test')).toBe(asked + 2)
    // A server failure is remembered the same way.
    await expect(resolver.resolve('broken.test')).rejects.toThrow()
    await expect(resolver.resolve('broken.test')).rejects.toThrow()
    expect(dns.count('broken.test', 'A')).toBe(1)
  })

  it('asks the system once for a name DNS does not have, and remembers the answer or its absence', async () => {
    const asked: string[] = []
    const resolver = resolverAt({ now: 4_000_000 }, async (name) => {
      asked.push(name)
      if (name === 'intranet') return [{ address: '127.0.0.9', family: 4 }]
      throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' })
    })
    expect(await resolver.resolve('intranet')).toEqual([{ address: '127.0.0.9', family: 4 }])
    expect(await resolver.resolve('intranet')).toEqual([{ address: '127.0.0.9', family: 4 }])
    await expect(resolver.resolve('nowhere.test')).rejects.toThrow()
    await expect(resolver.resolve('nowhere.test')).rejects.toThrow()
    expect(asked).toEqual(['intranet', 'nowhere.test'])
    expect(dns.count('nowhere.test', 'A')).toBe(1)
  })

  it('reads the hosts file first: its names never reach the DNS server', async () => {
    const hosts = parseHosts('127.0.0.1 localhost\n::1 localhost ip6-localhost # comment\n# 10.0.0.1 hidden.test\n127.0.0.3 fast.test\n')
    expect(hosts.get('localhost')).toEqual([{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }])
    expect(hosts.has('hidden.test')).toBe(false)
    const { writeFileSync, mkdtempSync } = await import('node:fs')
    const dir = mkdtempSync('/tmp/pagecast-hosts-')
    writeFileSync(`${dir}/hosts`, '127.0.0.3 listed.test\n')
    const resolver = createCachingResolver({ servers: [dns.server], timeoutMs: TIMEOUT_MS, tries: 1, hostsFile: `${dir}/hosts` })
    expect(await resolver.resolve('listed.test')).toEqual([{ address: '127.0.0.3', family: 4 }])
    expect(dns.count('listed.test')).toBe(0)
  })

  it('answers while every thread of libuv\'s pool is busy (the system lookup waits for one)', async () => {
    const resolver = resolverAt({ now: 5_000_000 })
    const order: string[] = []
    // Four long key derivations hold the pool's four threads.
    const busy = Array.from({ length: 4 }, async () => await new Promise<void>((resolve, reject) => {
      pbkdf2('secret', 'salt', 500_000, 64, 'sha512', (err) => { order.push('pool'); if (err === null) resolve(); else reject(err) })
    }))
    await new Promise(resolve => setTimeout(resolve, 20))
    const viaDns = resolver.resolve('fast.test').then(() => order.push('resolver'))
    const viaPool = systemResolver('localhost').then(() => order.push('getaddrinfo'))
    await Promise.all([...busy, viaDns, viaPool])
    expect(order[0]).toBe('resolver')
    // The control: the system lookup had to wait for a thread of the pool.
    expect(order.indexOf('getaddrinfo')).toBeGreaterThan(order.indexOf('pool'))
  }, 120_000)
})

/** A fixture server with an 8×8 PNG at /image.png (the pages a test adds point their og:image at it), and build. */
async function imagePages (): Promise<{ fx: FixtureServer, build: typeof Build }> {
  const { startFixtureServer } = await import('../helpers/fixture-server.ts')
  const { build } = await import('../helpers/build.ts')
  const { PNG } = await import('pngjs')
  const fx = await startFixtureServer()
  const png = PNG.sync.write(new PNG({ width: 8, height: 8 }))
  fx.route('/image.png', (_req, res) => { res.writeHead(200, { 'content-type': 'image/png' }).end(png) })
  return { fx, build }
}

describe('the service on the caching resolver (DNS_SERVERS)', () => {
  it('reads pages whose image hosts resolve slowly side by side: eight hosts cost one stall, not one per two pages', async () => {
    const { fx, build } = await imagePages()
    const HOSTS = 8
    const STALL_MS = 3000
    const hostOf = (n: number): string => `img-${n}.slow-hosts.test:${fx.port}`
    for (let n = 0; n < HOSTS; n++) {
      fx.route(`/host-page-${n}`, (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' })
        res.end(`<html><head><title>Page ${n}</title><meta property="og:image" content="http://${hostOf(n)}/image.png"></head><body>Page ${n}</body></html>`)
      })
    }
    for (const n of [0, 1]) {
      fx.route(`/warm-page-${n}`, (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' })
        res.end(`<html><head><title>Warm ${n}</title><meta property="og:image" content="http://${hostOf(HOSTS + n)}/image.png"></head></html>`)
      })
    }
    const zone = await startDnsServer((name) => name.endsWith('.slow-hosts.test') ? { addresses: ['127.0.0.1'], ttl: 60, delayMs: STALL_MS } : { rcode: 'NXDOMAIN' })
    // Two reader threads: before a worker read several pages at once, each page waiting for its image's host held
    // one, and the eight pages took four stalls.
    const allowed = [fx.host, ...Array.from({ length: HOSTS + 2 }, (_, n) => hostOf(n))].join(',')
    const app = await build({ ALLOW_PRIVATE_HOSTS: allowed, DNS_SERVERS: zone.server, FREE_DAILY_LIMIT: '0', READER_THREADS: '2' })
    try {
      // Both reader threads are up before anything is timed, as under traffic: two pages at once, each waiting for
      // its image's host, make the pool start its second (a thread starts in seconds on a loaded machine).
      const warm = await Promise.all([0, 1].map(async (n) =>
        await app.free.inject({ method: 'GET', url: `/?url=${encodeURIComponent(`${fx.origin}/warm-page-${n}`)}` })))
      expect(warm.map(answer => answer.statusCode)).toEqual([200, 200])
      const started = performance.now()
      const answers = await Promise.all(Array.from({ length: HOSTS }, async (_, n) =>
        await app.free.inject({ method: 'GET', url: `/?url=${encodeURIComponent(`${fx.origin}/host-page-${n}`)}` })))
      const elapsed = performance.now() - started
      for (const [n, answer] of answers.entries()) {
        expect(answer.statusCode).toBe(200)
        expect(answer.json()).toMatchObject({ data: { image: { url: `http://${hostOf(n)}/image.png`, width: 8, height: 8 } } })
      }
      // One stall and the reads (a second reader thread starting among them), with room for a machine at a load of
      // 10; two at a time, the eight pages took four stalls at the least.
      expect(elapsed).toBeLessThan(3 * STALL_MS)
    } finally {
      await app.close()
      await zone.close()
      await fx.close()
    }
  }, 120_000)

  it('probes the images of ten pages on one slowly resolving host with one query per record type', async () => {
    const { fx, build } = await imagePages()
    const imageHost = `images.slow-page.test:${fx.port}`
    for (let n = 0; n < 10; n++) {
      fx.route(`/page-${n}`, (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' })
        res.end(`<html><head><title>Page ${n}</title><meta property="og:image" content="http://${imageHost}/image.png"></head><body>Page ${n}</body></html>`)
      })
    }
    const zone = await startDnsServer((name) => name === 'images.slow-page.test' ? { addresses: ['127.0.0.1'], ttl: 60, delayMs: 300 } : { rcode: 'NXDOMAIN' })
    const app = await build({ ALLOW_PRIVATE_HOSTS: `${fx.host},${imageHost}`, DNS_SERVERS: zone.server, FREE_DAILY_LIMIT: '0' })
    try {
      const answers = await Promise.all(Array.from({ length: 10 }, async (_, n) =>
        await app.free.inject({ method: 'GET', url: `/?url=${encodeURIComponent(`${fx.origin}/page-${n}`)}` })))
      for (const answer of answers) {
        expect(answer.statusCode).toBe(200)
        expect(answer.json()).toMatchObject({ data: { image: { url: `http://${imageHost}/image.png`, width: 8, height: 8 } } })
      }
      expect(zone.count('images.slow-page.test', 'A')).toBe(1)
    } finally {
      await app.close()
      await zone.close()
      await fx.close()
    }
  }, 120_000)
})
