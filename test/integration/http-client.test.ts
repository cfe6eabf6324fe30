// The guarded HTTP client against real loopback servers started here. Network rule: the code under test may only
// ever connect to loopback. A safety net on net.Socket.prototype.connect (through which net.connect and tls.connect
// both go) refuses and records any other target, so even a broken guard cannot reach another host; every test
// then asserts that the net recorded nothing.
import http from 'node:http'
import { installLoopbackNet, type ConnectAttempt } from '../helpers/loopback-net.ts'
import type { AddressInfo } from 'node:net'
import zlib from 'node:zlib'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { AppError } from '../../src/errors.ts'
import { createAddressGuard } from '../../src/net/guard.ts'
import type { ResolvedAddress, Resolver } from '../../src/net/guard.ts'
import { createHttpClient } from '../../src/net/http-client.ts'
import type { HttpClient } from '../../src/net/types.ts'

// ---------------------------------------------------------------- safety net


const attempts: ConnectAttempt[] = []
const violations: ConnectAttempt[] = []
let uninstallSafetyNet = (): void => {}

function installSafetyNet (): void {
  uninstallSafetyNet = installLoopbackNet({ attempts, violations })
}

function attemptsTo (port: number): ConnectAttempt[] {
  return attempts.filter((attempt) => attempt.port === port)
}

// ---------------------------------------------------------------- test servers

interface TestServer {
  port: number
  origin: string
  connections: () => number
  requests: http.IncomingMessage[]
  close: () => Promise<void>
}

async function startServer (handler: http.RequestListener): Promise<TestServer> {
  const server = http.createServer(handler)
  let connections = 0
  const requests: http.IncomingMessage[] = []
  server.on('connection', () => { connections += 1 })
  server.on('request', (req: http.IncomingMessage) => { requests.push(req) })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    connections: () => connections,
    requests,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

const PAGE = '<!doctype html><title>hello</title><p>pagecast</p>'
const MEDIA = Buffer.alloc(200_000, 7)

function bombBody (): Buffer {
  // Concatenated gzip members are one valid gzip stream: 64 × 16 MiB of zeros = 1 GiB decoded from ~1 MiB.
  const member = zlib.gzipSync(Buffer.alloc(16 * 1024 * 1024), { level: 9 })
  return Buffer.concat(Array.from({ length: 64 }, () => member))
}

function mainHandler (origin: () => string, bomb: Buffer): http.RequestListener {
  return (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x')
    const path = url.pathname
    const redirect = (status: number, location: string, extra: Record<string, string | string[]> = {}): void => {
      res.writeHead(status, { location, ...extra })
      res.end('moved')
    }
    if (path === '/page') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'x-multi': ['a', 'b'], 'set-cookie': ['a=1', 'b=2'] })
      res.end(PAGE)
    } else if (path === '/headers') {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify(req.headers))
    } else if (path === '/big') {
      res.writeHead(200, { 'content-type': 'text/plain' })
      res.end('a'.repeat(100_000))
    } else if (path === '/ten') {
      res.writeHead(200, { 'content-type': 'text/plain' })
      res.end('0123456789')
    } else if (path.startsWith('/r/')) {
      const n = Number(path.slice(3))
      if (n > 0) redirect(302, `/r/${n - 1}`)
      else { res.writeHead(200); res.end('done') }
    } else if (path === '/chain') {
      redirect(301, '/chain/a', { 'set-cookie': 'sid=1; Path=/' })
    } else if (path === '/chain/a') {
      redirect(302, 'b', { 'set-cookie': 'sid=2; Path=/' })
    } else if (path === '/chain/b') {
      redirect(307, `${origin()}/headers`)
    } else if (path === '/to') {
      redirect(302, url.searchParams.get('target') ?? '/')
    } else if (path === '/gzip' || path === '/br' || path === '/deflate') {
      const encoded = path === '/gzip'
        ? zlib.gzipSync(PAGE)
        : path === '/br' ? zlib.brotliCompressSync(PAGE) : zlib.deflateSync(PAGE)
      res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': path.slice(1) })
      res.end(encoded)
    } else if (path === '/bomb') {
      res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' })
      res.end(bomb)
    } else if (path === '/corrupt') {
      res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' })
      res.end('this is not gzip at all')
    } else if (path === '/media' || path === '/media-no-range') {
      const range = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '')
      if (path === '/media' && range !== null) {
        const start = Number(range[1])
        const end = Math.min(Number(range[2]), MEDIA.length - 1)
        res.writeHead(206, { 'content-type': 'image/png', 'content-range': `bytes ${start}-${end}/${MEDIA.length}` })
        res.end(MEDIA.subarray(start, end + 1))
      } else {
        res.writeHead(200, { 'content-type': 'image/png', 'content-length': MEDIA.length })
        res.end(MEDIA)
      }
    } else if (path === '/hang') {
      // Accepts the request and never answers.
    } else if (path === '/stall-body') {
      res.writeHead(200, { 'content-type': 'text/html' })
      res.write('<!doctype html><title>slow')
    } else {
      res.writeHead(404)
      res.end('not found')
    }
  }
}

// ---------------------------------------------------------------- fixtures

let main: TestServer
let other: TestServer
let otherExempt: TestServer
const clients: HttpClient[] = []

beforeAll(async () => {
  installSafetyNet()
  const bomb = bombBody()
  main = await startServer(mainHandler(() => main.origin, bomb))
  other = await startServer((_req, res) => { res.end('other') })
  otherExempt = await startServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify(req.headers))
  })
})

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()))
  // Cleared on read, so one failure does not cascade into every later test.
  expect(violations.splice(0)).toEqual([])
})

afterAll(async () => {
  uninstallSafetyNet()
  await Promise.all([main?.close(), other?.close(), otherExempt?.close()])
})

function client (allowPrivateHosts: string[], resolve?: Resolver): HttpClient {
  const guard = createAddressGuard(resolve === undefined ? { allowPrivateHosts } : { allowPrivateHosts, resolve })
  const created = createHttpClient({ guard, userAgent: 'pagecast-test/1.0' })
  clients.push(created)
  return created
}

function exemptMain (extra: string[] = []): HttpClient {
  return client([`127.0.0.1:${main.port}`, ...extra])
}

function signal (ms = 5000): AbortSignal {
  return AbortSignal.timeout(ms)
}

async function failure (promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise
  } catch (err) {
    if (err instanceof AppError) return err
    throw err
  }
  throw new Error('expected the call to fail')
}

function fixed (answers: ResolvedAddress[]): Resolver & { calls: string[] } {
  const calls: string[] = []
  const resolve = async (hostname: string): Promise<ResolvedAddress[]> => {
    calls.push(hostname)
    return answers
  }
  return Object.assign(resolve, { calls })
}

// ---------------------------------------------------------------- tests

describe('fetchPage through an exempt host:port', () => {
  it('gets a 200 page with lower-case, joined headers', async () => {
    const before = main.connections()
    const attemptsBefore = attemptsTo(main.port).length
    const result = await exemptMain().fetchPage(`${main.origin}/page`, { signal: signal(), maxBytes: 1024 * 1024 })
    expect(result.statusCode).toBe(200)
    expect(result.url).toBe(`${main.origin}/page`)
    expect(result.redirects).toEqual([])
    expect(result.truncated).toBe(false)
    expect(result.body.toString()).toBe(PAGE)
    expect(result.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(result.headers['x-multi']).toBe('a, b')
    expect(result.headers['set-cookie']).toBe('a=1, b=2')
    expect(Object.keys(result.headers).every((name) => name === name.toLowerCase())).toBe(true)
    expect(main.connections()).toBe(before + 1)
    // The safety net sees real connections (so its "nothing attempted" checks elsewhere mean something).
    expect(attemptsTo(main.port)).toHaveLength(attemptsBefore + 1)
    expect(attemptsTo(main.port).at(-1)).toEqual({ host: '127.0.0.1', port: main.port })
    const request = main.requests.at(-1)
    expect(request?.headers['user-agent']).toBe('pagecast-test/1.0')
    expect(request?.headers.host).toBe(`127.0.0.1:${main.port}`)
  })

  it('refuses the same server when it is not in the allow list, before any connection', async () => {
    const before = main.connections()
    const attemptsBefore = attemptsTo(main.port).length
    const err = await failure(client([]).fetchPage(`${main.origin}/page`, { signal: signal(), maxBytes: 1024 }))
    expect(err.code).toBe('EFORBIDDENURL')
    expect(main.connections()).toBe(before)
    expect(attemptsTo(main.port).length).toBe(attemptsBefore)
  })

  it('exempts only the exact host:port pair', async () => {
    const err = await failure(client([`127.0.0.1:${main.port + 1}`, `localhost:${main.port}`])
      .fetchPage(`${main.origin}/page`, { signal: signal(), maxBytes: 1024 }))
    expect(err.code).toBe('EFORBIDDENURL')
  })
})

describe('blocked literals never reach the network', () => {
  // Exempting 127.0.0.1:<port> must not exempt other spellings of other hosts on the same port.
  const viaExemptGuard = ['http://localhost:PORT/page', 'http://LOCALHOST.:PORT/page', 'http://a.localhost:PORT/page',
    'http://127.0.0.2:PORT/page', 'http://[::1]:PORT/page', 'http://[::ffff:127.0.0.2]:PORT/page']
  // Without exemptions, every spelling of 127.0.0.1 is refused.
  const viaStrictGuard = ['http://2130706433:PORT/page', 'http://0x7f000001:PORT/page', 'http://0177.0.0.1:PORT/page',
    'http://127.1:PORT/page', 'http://[::ffff:127.0.0.1]:PORT/page', 'http://[::127.0.0.1]:PORT/page']

  it.each(viaExemptGuard)('%s', async (template) => {
    const before = main.connections()
    const err = await failure(exemptMain().fetchPage(template.replace('PORT', String(main.port)), { signal: signal(), maxBytes: 1024 }))
    expect(err.code).toBe('EFORBIDDENURL')
    expect(main.connections()).toBe(before)
    expect(attemptsTo(main.port).filter((a) => a.host !== '127.0.0.1')).toEqual([])
  })

  it.each(viaStrictGuard)('%s', async (template) => {
    const before = main.connections()
    const attemptsBefore = attemptsTo(main.port).length
    const err = await failure(client([]).fetchPage(template.replace('PORT', String(main.port)), { signal: signal(), maxBytes: 1024 }))
    expect(err.code).toBe('EFORBIDDENURL')
    expect(main.connections()).toBe(before)
    expect(attemptsTo(main.port).length).toBe(attemptsBefore)
  })

  it.each(['ftp://127.0.0.1/file', 'file:///etc/passwd', 'javascript:alert(1)', 'not a url', 'http://', 'ws://example.com/'])(
    'gives EINVALURL for %j', async (url) => {
      const attemptsBefore = attempts.length
      const err = await failure(exemptMain().fetchPage(url, { signal: signal(), maxBytes: 1024 }))
      expect(err.code).toBe('EINVALURL')
      expect(attempts.length).toBe(attemptsBefore)
    })

  it('gives EINVALURL to probe for an unsupported scheme too', async () => {
    const err = await failure(exemptMain().probe('ftp://127.0.0.1/a.png', { signal: signal() }))
    expect(err.code).toBe('EINVALURL')
  })
})

describe('redirects', () => {
  it('records each hop and its status, resolves relative locations and sends no cookies between hops', async () => {
    const result = await exemptMain().fetchPage(`${main.origin}/chain`, { signal: signal(), maxBytes: 64 * 1024 })
    expect(result.redirects).toEqual([
      { statusCode: 301, url: `${main.origin}/chain` },
      { statusCode: 302, url: `${main.origin}/chain/a` },
      { statusCode: 307, url: `${main.origin}/chain/b` }
    ])
    expect(result.url).toBe(`${main.origin}/headers`)
    expect(result.statusCode).toBe(200)
    const received = JSON.parse(result.body.toString()) as Record<string, string>
    expect(received.cookie).toBeUndefined()
  })

  it('refuses a redirect from the exempt server to a non-exempt loopback port, with no connection to it', async () => {
    const target = encodeURIComponent(`${other.origin}/`)
    const err = await failure(exemptMain().fetchPage(`${main.origin}/to?target=${target}`, { signal: signal(), maxBytes: 1024 }))
    expect(err.code).toBe('EFORBIDDENURL')
    expect(other.connections()).toBe(0)
    expect(attemptsTo(other.port)).toEqual([])
  })

  it('refuses a redirect to localhost on the exempt port, and to a non-http scheme', async () => {
    const toLocalhost = encodeURIComponent(`http://localhost:${main.port}/page`)
    expect((await failure(exemptMain().fetchPage(`${main.origin}/to?target=${toLocalhost}`, { signal: signal(), maxBytes: 1024 }))).code)
      .toBe('EFORBIDDENURL')
    const toFile = encodeURIComponent('file:///etc/passwd')
    expect((await failure(exemptMain().fetchPage(`${main.origin}/to?target=${toFile}`, { signal: signal(), maxBytes: 1024 }))).code)
      .toBe('EINVALURL')
  })

  it('follows 10 redirects and refuses the 11th with EMAXREDIRECTS', async () => {
    const ten = await exemptMain().fetchPage(`${main.origin}/r/10`, { signal: signal(), maxBytes: 1024 })
    expect(ten.statusCode).toBe(200)
    expect(ten.redirects).toHaveLength(10)
    expect(ten.redirects[0]).toEqual({ statusCode: 302, url: `${main.origin}/r/10` })
    expect(ten.url).toBe(`${main.origin}/r/0`)

    const eleven = await failure(exemptMain().fetchPage(`${main.origin}/r/11`, { signal: signal(), maxBytes: 1024 }))
    expect(eleven.code).toBe('EMAXREDIRECTS')
    const probed = await failure(exemptMain().probe(`${main.origin}/r/11`, { signal: signal() }))
    expect(probed.code).toBe('EMAXREDIRECTS')
  })

  it('forwards caller headers to the first origin only, except user-agent and accept-language', async () => {
    const http2 = client([`127.0.0.1:${main.port}`, `127.0.0.1:${otherExempt.port}`])
    const headers = { 'x-custom': 'secret', 'accept-language': 'fr', 'user-agent': 'custom-agent', cookie: 'k=v', host: 'evil.test' }
    const same = await http2.fetchPage(`${main.origin}/headers`, { signal: signal(), maxBytes: 64 * 1024, headers })
    const sameHeaders = JSON.parse(same.body.toString()) as Record<string, string>
    expect(sameHeaders['x-custom']).toBe('secret')
    expect(sameHeaders.cookie).toBe('k=v')
    expect(sameHeaders.host).toBe(`127.0.0.1:${main.port}`)

    const target = encodeURIComponent(`${otherExempt.origin}/`)
    const cross = await http2.fetchPage(`${main.origin}/to?target=${target}`, { signal: signal(), maxBytes: 64 * 1024, headers })
    const crossHeaders = JSON.parse(cross.body.toString()) as Record<string, string>
    expect(cross.redirects).toEqual([{ statusCode: 302, url: `${main.origin}/to?target=${target}` }])
    expect(crossHeaders['x-custom']).toBeUndefined()
    expect(crossHeaders.cookie).toBeUndefined()
    expect(crossHeaders['accept-language']).toBe('fr')
    expect(crossHeaders['user-agent']).toBe('custom-agent')
  })
})

describe('resolution', () => {
  it('refuses a name that resolves to 127.0.0.1, without echoing the address', async () => {
    const resolve = fixed([{ address: '127.0.0.1', family: 4 }])
    const before = main.connections()
    const attemptsBefore = attempts.length
    const err = await failure(client([], resolve).fetchPage(`http://loopback.test:${main.port}/page`, { signal: signal(), maxBytes: 1024 }))
    expect(err.code).toBe('EFORBIDDENURL')
    expect(resolve.calls).toEqual(['loopback.test'])
    expect(JSON.stringify(err.data)).not.toContain('127.0.0.1')
    expect(err.message).not.toContain('127.0.0.1')
    expect(main.connections()).toBe(before)
    expect(attempts.length).toBe(attemptsBefore)
  })

  it('refuses a name when any one of its addresses is blocked, whatever the order', async () => {
    const before = main.connections()
    const attemptsBefore = attempts.length
    // The public-looking answer is only evaluated: the name is refused before any connection.
    for (const answers of [
      [{ address: '93.184.215.14', family: 4 as const }, { address: '127.0.0.1', family: 4 as const }],
      [{ address: '2606:4700::6810:84e5', family: 6 as const }, { address: '::1', family: 6 as const }],
      [{ address: '93.184.215.14', family: 4 as const }, { address: '::ffff:127.0.0.1', family: 6 as const }]
    ]) {
      const err = await failure(client([], fixed(answers)).fetchPage(`http://mixed.test:${main.port}/page`, { signal: signal(), maxBytes: 1024 }))
      expect(err.code).toBe('EFORBIDDENURL')
    }
    expect(main.connections()).toBe(before)
    expect(attempts.length).toBe(attemptsBefore)
  })

  it('gives EINVALURL when the name does not resolve', async () => {
    const resolve: Resolver = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.test'), { code: 'ENOTFOUND' })
    }
    const err = await failure(client([], resolve).fetchPage('http://nowhere.test/', { signal: signal(), maxBytes: 1024 }))
    expect(err.code).toBe('EINVALURL')
    const empty = await failure(client([], fixed([])).fetchPage('http://empty.test/', { signal: signal(), maxBytes: 1024 }))
    expect(empty.code).toBe('EINVALURL')
  })

  it('connects an exempt name to the address it resolved, resolving exactly once per connection', async () => {
    const resolve = fixed([{ address: '127.0.0.1', family: 4 }])
    const before = main.connections()
    const pinned = client([`pinned.test:${main.port}`], resolve)
    // Three sequential fetches; each redirect body is dropped, so /r/2 opens a new connection per hop.
    await pinned.fetchPage(`http://pinned.test:${main.port}/page`, { signal: signal(), maxBytes: 1024 })
    const result = await pinned.fetchPage(`http://pinned.test:${main.port}/r/2`, { signal: signal(), maxBytes: 1024 })
    expect(result.statusCode).toBe(200)
    const opened = main.connections() - before
    expect(opened).toBeGreaterThan(0)
    expect(resolve.calls.length).toBe(opened)
    expect(main.requests.at(-1)?.headers.host).toBe(`pinned.test:${main.port}`)
  })

  it('a rebinding name cannot reach loopback: the connection goes to the address its own check approved', async () => {
    let calls = 0
    const rebinding: Resolver = async () => {
      calls += 1
      // First answer public-looking, every later one loopback.
      return calls === 1 ? [{ address: '93.184.215.14', family: 4 }] : [{ address: '127.0.0.1', family: 4 }]
    }
    const guard = createAddressGuard({ allowPrivateHosts: [], resolve: rebinding })
    const rebound = createHttpClient({ guard, userAgent: 'pagecast-test/1.0' })
    clients.push(rebound)
    const url = `http://rebind.test:${main.port}/page`
    // The pipeline's pre-flight check sees (and approves) the public-looking answer; nothing connects to it.
    await guard.assertUrlResolvesAllowed(new URL(url))
    expect(calls).toBe(1)
    const before = main.connections()
    const attemptsBefore = attempts.length
    // The fetch must check the answer it connects with, which is now loopback: refused, nothing connected.
    const err = await failure(rebound.fetchPage(url, { signal: signal(), maxBytes: 1024 }))
    expect(err.code).toBe('EFORBIDDENURL')
    expect(calls).toBe(2)
    expect(main.connections()).toBe(before)
    expect(attempts.length).toBe(attemptsBefore)
  })
})

describe('failures while connecting', () => {
  it('gives EINVALURL when the connection is refused', async () => {
    const closed = await startServer((_req, res) => { res.end() })
    const port = closed.port
    await closed.close()
    const err = await failure(client([`127.0.0.1:${port}`]).fetchPage(`http://127.0.0.1:${port}/`, { signal: signal(), maxBytes: 1024 }))
    expect(err.code).toBe('EINVALURL')
    expect(err.cause).toBeDefined()
  })

  it('gives EINVALURL when TLS fails', async () => {
    const err = await failure(exemptMain().fetchPage(`https://127.0.0.1:${main.port}/page`, { signal: signal(), maxBytes: 1024 }))
    expect(err.code).toBe('EINVALURL')
  })
})

describe('body bounds and decoding', () => {
  it('stops reading at maxBytes', async () => {
    const http1 = exemptMain()
    const big = await http1.fetchPage(`${main.origin}/big`, { signal: signal(), maxBytes: 1000 })
    expect(big.body.length).toBe(1000)
    expect(big.truncated).toBe(true)
    const exact = await http1.fetchPage(`${main.origin}/ten`, { signal: signal(), maxBytes: 10 })
    expect(exact.body.toString()).toBe('0123456789')
    expect(exact.truncated).toBe(false)
    const short = await http1.fetchPage(`${main.origin}/ten`, { signal: signal(), maxBytes: 9 })
    expect(short.body.toString()).toBe('012345678')
    expect(short.truncated).toBe(true)
  })

  it.each(['gzip', 'br', 'deflate'])('decodes %s bodies', async (coding) => {
    const result = await exemptMain().fetchPage(`${main.origin}/${coding}`, { signal: signal(), maxBytes: 1024 * 1024 })
    expect(result.body.toString()).toBe(PAGE)
    expect(result.headers['content-encoding']).toBe(coding)
    expect(result.truncated).toBe(false)
  })

  it('applies maxBytes to decoded bytes: a gzip bomb stays bounded in memory', async () => {
    const maxBytes = 1024 * 1024
    let peak = process.memoryUsage().rss
    const baseline = peak
    const sampler = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss) }, 1)
    try {
      const result = await exemptMain().fetchPage(`${main.origin}/bomb`, { signal: signal(10_000), maxBytes })
      peak = Math.max(peak, process.memoryUsage().rss)
      expect(result.body.length).toBe(maxBytes)
      expect(result.truncated).toBe(true)
      expect(result.body.every((byte) => byte === 0)).toBe(true)
    } finally {
      clearInterval(sampler)
    }
    // Decoding the whole bomb would take 1 GiB.
    expect(peak - baseline).toBeLessThan(256 * 1024 * 1024)
  })

  it('gives EINVALURL for a body that does not decode', async () => {
    const err = await failure(exemptMain().fetchPage(`${main.origin}/corrupt`, { signal: signal(), maxBytes: 1024 }))
    expect(err.code).toBe('EINVALURL')
  })
})

describe('probe', () => {
  it('asks for a byte range and reads the total size from content-range', async () => {
    const result = await exemptMain().probe(`${main.origin}/media`, { signal: signal() })
    expect(main.requests.at(-1)?.headers.range).toBe('bytes=0-65535')
    expect(result.statusCode).toBe(206)
    expect(result.body.length).toBe(65536)
    expect(result.totalSize).toBe(MEDIA.length)
    expect(result.headers['content-range']).toBe(`bytes 0-65535/${MEDIA.length}`)
    expect(result.url).toBe(`${main.origin}/media`)

    const small = await exemptMain().probe(`${main.origin}/media`, { signal: signal(), maxBytes: 100 })
    expect(main.requests.at(-1)?.headers.range).toBe('bytes=0-99')
    expect(small.body.length).toBe(100)
    expect(small.totalSize).toBe(MEDIA.length)
  })

  it('reads at most maxBytes and takes content-length on a 200 that ignores the range', async () => {
    const result = await exemptMain().probe(`${main.origin}/media-no-range`, { signal: signal(), maxBytes: 1000 })
    expect(result.statusCode).toBe(200)
    expect(result.body.length).toBe(1000)
    expect(result.totalSize).toBe(MEDIA.length)
  })

  it('has no total size when neither header gives one', async () => {
    const result = await exemptMain().probe(`${main.origin}/page`, { signal: signal() })
    expect(result.statusCode).toBe(200)
    expect(result.totalSize).toBe(null)
    expect(result.body.toString()).toBe(PAGE)
  })

  it('follows redirects and checks each hop', async () => {
    const target = encodeURIComponent(`${main.origin}/media`)
    const result = await exemptMain().probe(`${main.origin}/to?target=${target}`, { signal: signal(), maxBytes: 10 })
    expect(result.url).toBe(`${main.origin}/media`)
    expect(result.totalSize).toBe(MEDIA.length)
    const blocked = encodeURIComponent(`${other.origin}/a.png`)
    const err = await failure(exemptMain().probe(`${main.origin}/to?target=${blocked}`, { signal: signal() }))
    expect(err.code).toBe('EFORBIDDENURL')
    expect(other.connections()).toBe(0)
  })
})

describe('signal', () => {
  it('ends a request to a server that never answers, throwing the signal\'s AppError reason', async () => {
    const controller = new AbortController()
    const reason = new AppError('ETIMEOUT', { data: { marker: 'mine' } })
    setTimeout(() => controller.abort(reason), 150)
    const started = Date.now()
    const err = await failure(exemptMain().fetchPage(`${main.origin}/hang`, { signal: controller.signal, maxBytes: 1024 }))
    expect(err).toBe(reason)
    expect(Date.now() - started).toBeLessThan(3000)
  })

  it('ends a probe the same way', async () => {
    const controller = new AbortController()
    const reason = new AppError('ETIMEOUT')
    setTimeout(() => controller.abort(reason), 150)
    await expect(exemptMain().probe(`${main.origin}/hang`, { signal: controller.signal })).rejects.toBe(reason)
  })

  it('ends a body that stalls, and maps a non-AppError reason to ETIMEOUT', async () => {
    const started = Date.now()
    const err = await failure(exemptMain().fetchPage(`${main.origin}/stall-body`, { signal: AbortSignal.timeout(200), maxBytes: 1024 }))
    expect(err.code).toBe('ETIMEOUT')
    expect(Date.now() - started).toBeLessThan(3000)
  })

  it('does not start when the signal has already aborted', async () => {
    const before = main.connections()
    const reason = new AppError('ETIMEOUT')
    const err = await failure(exemptMain().fetchPage(`${main.origin}/page`, { signal: AbortSignal.abort(reason), maxBytes: 1024 }))
    expect(err).toBe(reason)
    expect(main.connections()).toBe(before)
  })
})
