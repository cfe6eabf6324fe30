// `proxy` (docs/api.md §3.6, docs/security.md "The `proxy` parameter"), end to end against proxies this file starts on
// loopback (test/helpers/proxy-servers.ts): an HTTP proxy, an https one (TLS to the proxy, certificate made here with
// openssl) and a SOCKS5 one, all with credentials. The fixture routes record the client port of every request they
// get, and the proxies the local port of every tunnel they open, so each test can tell which request came through
// which proxy, and which came directly.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import net from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { build, qs, type Built } from '../helpers/build.ts'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'
import { startHttpProxy, startSocks5Proxy, withAuth, type TestProxy } from '../helpers/proxy-servers.ts'
import { cacheKeyOf } from '../../src/cache/key.ts'
import { parseQuery } from '../../src/schemas/query.ts'

const KEY = 'proxy-test-key'
const AUTH = { username: 'proxy-user-91', password: 'proxy-pass-92:@/x' }
const PNG_1X1 = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64')

let fx: FixtureServer
let app: Built
let httpProxy: TestProxy
let httpsProxy: TestProxy
let socksProxy: TestProxy
/** A proxy on loopback that is NOT in ALLOW_PRIVATE_HOSTS: it must never get a connection. */
let outsider: TestProxy
let certDir: string
/** Client port of each request the fixture routes got, by path. */
const clientPorts = new Map<string, number[]>()

function record (pathname: string, port: number | undefined): void {
  clientPorts.set(pathname, [...(clientPorts.get(pathname) ?? []), port ?? -1])
}

function portsOf (pathname: string): number[] {
  return clientPorts.get(pathname) ?? []
}

beforeAll(async () => {
  fx = await startFixtureServer()
  // A page with an image and an icon: the plain fetch, then two media probes.
  fx.route('/px/page', (req, res) => {
    const id = new URL(req.url ?? '/', 'http://x').searchParams.get('id') ?? ''
    record(`/px/page?id=${id}`, req.socket.remotePort)
    const body = `<!doctype html><html><head><title>proxied ${id}</title><meta property="og:image" content="/px/cover.png?id=${id}">` +
      `<link rel="icon" href="/px/icon.png?id=${id}"></head><body><h1>through the proxy</h1>` +
      `<img src="/px/cover.png?id=${id}" width="1" height="1" alt=""></body></html>`
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(body) })
    res.end(body)
  })
  for (const name of ['cover', 'icon']) {
    fx.route(`/px/${name}.png`, (req, res) => {
      const id = new URL(req.url ?? '/', 'http://x').searchParams.get('id') ?? ''
      record(`/px/${name}.png?id=${id}`, req.socket.remotePort)
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': PNG_1X1.length })
      res.end(PNG_1X1)
    })
  }
  certDir = mkdtempSync(path.join(os.tmpdir(), 'pagecast-proxy-cert-'))
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost',
    '-addext', 'subjectAltName=DNS:localhost', '-keyout', path.join(certDir, 'key.pem'), '-out', path.join(certDir, 'cert.pem')], { stdio: 'ignore' })
  const cert = readFileSync(path.join(certDir, 'cert.pem'), 'utf8')
  const key = readFileSync(path.join(certDir, 'key.pem'), 'utf8')
  httpProxy = await startHttpProxy({ auth: AUTH })
  httpsProxy = await startHttpProxy({ auth: AUTH, tls: { key, cert } })
  socksProxy = await startSocks5Proxy({ auth: AUTH })
  outsider = await startHttpProxy()
  app = await build({
    ALLOW_PRIVATE_HOSTS: [fx.host, httpProxy.allowEntry, httpsProxy.allowEntry, socksProxy.allowEntry].join(','),
    API_KEYS: KEY,
    BROWSER_CONCURRENCY: '1'
  }, {
    proxyCa: cert,
    // `*.test` names resolve to loopback (the outsider proxy by name); anything else does not resolve.
    resolve: async (hostname) => hostname.endsWith('.test') || hostname === 'localhost' ? [{ address: '127.0.0.1', family: 4 }] : []
  })
}, 60_000)

afterAll(async () => {
  await app?.close()
  await Promise.all([fx, httpProxy, httpsProxy, socksProxy, outsider].map(async (s) => await s?.close()))
  if (certDir !== undefined) rmSync(certDir, { recursive: true, force: true })
})

async function pro (query: Record<string, string | number | boolean>): Promise<{ status: number, body: any, headers: Record<string, unknown> }> {
  const res = await app.pro.inject({ url: `/?${qs(query)}`, headers: { 'x-api-key': KEY } })
  return { status: res.statusCode, body: res.json(), headers: res.headers }
}

/** Whether every port is one the proxy opened a tunnel from (the request came through it). */
function cameThrough (proxy: TestProxy, ports: number[]): boolean {
  return ports.length > 0 && ports.every((port) => proxy.upstreamPorts.has(port))
}

const fxAuthority = (): string => `127.0.0.1:${fx.port}`

describe.each([
  ['http', () => httpProxy],
  ['https (TLS to the proxy)', () => httpsProxy],
  ['socks5', () => socksProxy]
])('through an %s proxy with credentials', (name, proxyOf) => {
  it('the plain fetch and the media probes go through it (fetch-proxy)', async () => {
    const proxy = proxyOf()
    const id = `fetch-${name}`
    const before = proxy.credentials.length
    const answer = await pro({ url: `${fx.origin}/px/page?id=${id}`, prerender: false, proxy: withAuth(proxy.url, AUTH) })
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    expect(answer.headers['x-fetch-mode']).toBe('fetch-proxy')
    expect(answer.body.data.title).toBe(`proxied ${id}`)
    expect(answer.body.data.image.width).toBe(1)
    // The page and both probes reached the fixture from the proxy's own sockets.
    expect(cameThrough(proxy, portsOf(`/px/page?id=${id}`))).toBe(true)
    expect(cameThrough(proxy, portsOf(`/px/cover.png?id=${id}`))).toBe(true)
    expect(cameThrough(proxy, portsOf(`/px/icon.png?id=${id}`))).toBe(true)
    // It was asked for the checked address, with the credentials, and never to forward a plain request.
    expect(proxy.targets).toContain(fxAuthority())
    expect(proxy.credentials.slice(before)).toContain(`${AUTH.username}:${AUTH.password}`)
    expect(proxy.forwarded()).toBe(0)
  })

  it('every browser request goes through it (prerender-proxy)', async () => {
    const proxy = proxyOf()
    const id = `render-${name}`
    const tunnels = proxy.tunnels()
    const answer = await pro({ url: `${fx.origin}/px/page?id=${id}`, prerender: true, waitUntil: 'load', 'meta.title': true, proxy: withAuth(proxy.url, AUTH) })
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    expect(answer.headers['x-fetch-mode']).toBe('prerender-proxy')
    expect(answer.body.data.title).toBe(`proxied ${id}`)
    expect(proxy.tunnels()).toBeGreaterThan(tunnels)
    // The page, and the image Chromium loaded for it before `load`. (Not the icon: Chromium asks for it after the
    // load, and under load the job may be over by then, when the egress proxy lets nothing through.)
    expect(cameThrough(proxy, portsOf(`/px/page?id=${id}`))).toBe(true)
    expect(cameThrough(proxy, portsOf(`/px/cover.png?id=${id}`))).toBe(true)
  }, 60_000)
})

describe('routing', () => {
  it('a later job without a proxy on the same pooled context goes directly', async () => {
    const contexts = app.ctx.browser.stats().contexts
    const id = 'after-proxy'
    const proxied = await pro({ url: `${fx.origin}/px/page?id=${id}-1`, prerender: true, waitUntil: 'load', 'meta.title': true, proxy: withAuth(httpProxy.url, AUTH) })
    expect(proxied.headers['x-fetch-mode']).toBe('prerender-proxy')
    const tunnels = [httpProxy, httpsProxy, socksProxy].map((p) => p.tunnels())
    const direct = await pro({ url: `${fx.origin}/px/page?id=${id}-2`, prerender: true, waitUntil: 'load', 'meta.title': true })
    expect(direct.status, JSON.stringify(direct.body)).toBe(200)
    expect(direct.headers['x-fetch-mode']).toBe('prerender')
    expect([httpProxy, httpsProxy, socksProxy].map((p) => p.tunnels())).toEqual(tunnels)
    const ports = portsOf(`/px/page?id=${id}-2`)
    expect(ports.length).toBeGreaterThan(0)
    expect(ports.some((port) => httpProxy.upstreamPorts.has(port))).toBe(false)
    // One context served both jobs (BROWSER_CONCURRENCY=1, same profile): the route was reset, not the context.
    expect(app.ctx.browser.stats().contexts - contexts).toBeLessThanOrEqual(1)
    // And back through the proxy on the next job.
    const again = await pro({ url: `${fx.origin}/px/page?id=${id}-3`, prerender: true, waitUntil: 'load', 'meta.title': true, proxy: withAuth(socksProxy.url, AUTH) })
    expect(again.headers['x-fetch-mode']).toBe('prerender-proxy')
    expect(cameThrough(socksProxy, portsOf(`/px/page?id=${id}-3`))).toBe(true)
    // The same proxy again on the next job: it is that job's too (x-fetch-mode says so), not an inherited tunnel.
    const same = await pro({ url: `${fx.origin}/px/page?id=${id}-4`, prerender: true, waitUntil: 'load', 'meta.title': true, proxy: withAuth(socksProxy.url, AUTH) })
    expect(same.headers['x-fetch-mode']).toBe('prerender-proxy')
    expect(cameThrough(socksProxy, portsOf(`/px/page?id=${id}-4`))).toBe(true)
  }, 60_000)

  it('an embedded page asset is fetched through the proxy too', async () => {
    const id = 'embed'
    const res = await app.pro.inject({ url: `/?${qs({ url: `${fx.origin}/px/page?id=${id}`, prerender: false, embed: 'image.url', proxy: withAuth(socksProxy.url, AUTH) })}`, headers: { 'x-api-key': KEY } })
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200)
    expect(res.headers['content-type']).toBe('image/png')
    // The probe during the computation, then the embed fetch while answering: both out of the proxy.
    expect(portsOf(`/px/cover.png?id=${id}`).length).toBeGreaterThanOrEqual(2)
    expect(cameThrough(socksProxy, portsOf(`/px/cover.png?id=${id}`))).toBe(true)
  })

  it('meta=false with nothing to load is `skipped`: the proxy carried nothing', async () => {
    const connections = httpProxy.connections()
    const answer = await pro({ url: `${fx.origin}/px/page?id=skipped`, meta: false, proxy: withAuth(httpProxy.url, AUTH) })
    expect(answer.status).toBe(200)
    expect(answer.headers['x-fetch-mode']).toBe('skipped')
    expect(httpProxy.connections()).toBe(connections)
  })

  it('the proxy is part of the cache key, hashed', async () => {
    const url = `${fx.origin}/px/page?id=cache`
    const one = withAuth(httpProxy.url, AUTH)
    const keyOf = (extra: Record<string, string>): string => cacheKeyOf(parseQuery(qs({ url, ...extra }), { plan: 'pro', headers: {}, maxTimeout: 28_000 }))
    const keys = [keyOf({}), keyOf({ proxy: one }), keyOf({ proxy: withAuth(socksProxy.url, AUTH) }), keyOf({ proxy: withAuth(httpProxy.url, { ...AUTH, password: 'other' }) })]
    expect(new Set(keys).size).toBe(4)
    expect(keyOf({ 'proxy.url': one })).toBe(keys[1])

    const first = await pro({ url, prerender: false, proxy: one })
    expect(first.headers['x-cache-status']).toBe('MISS')
    const direct = await pro({ url, prerender: false })
    expect(direct.headers['x-cache-status']).toBe('MISS')
    expect(direct.headers['x-fetch-mode']).toBe('fetch')
    const hit = await pro({ url, prerender: false, proxy: one })
    expect(hit.headers['x-cache-status']).toBe('HIT')
    expect(hit.headers['x-fetch-mode']).toBe('fetch-proxy')
  })
})

describe('refusals', () => {
  it('a proxy host outside ALLOW_PRIVATE_HOSTS: 400 EFORBIDDENURL with data.proxy, and the proxy gets no connection', async () => {
    for (const proxy of [outsider.url, `socks5://outsider.test:${outsider.port}`, `http://u:p@localhost:${outsider.port}`, `https://[::1]:${outsider.port}`]) {
      for (const prerender of [false, true]) {
        const answer = await pro({ url: `${fx.origin}/px/page?id=outsider`, prerender, proxy })
        expect(answer.status, `${proxy} ${JSON.stringify(answer.body)}`).toBe(400)
        expect(answer.body.code).toBe('EFORBIDDENURL')
        expect(answer.body.data.proxy).toContain('not allowed')
        expect(JSON.stringify(answer.body)).not.toContain('u:p')
      }
    }
    expect(outsider.connections()).toBe(0)
    expect(portsOf('/px/page?id=outsider')).toEqual([])
  })

  it('wrong credentials: 400 EINVALPROXY, the target never reached', async () => {
    for (const proxy of [httpProxy, socksProxy]) {
      for (const prerender of [false, true]) {
        const answer = await pro({ url: `${fx.origin}/px/page?id=badauth`, prerender, proxy: withAuth(proxy.url, { ...AUTH, password: 'wrong-93' }), force: true })
        expect(answer.status, `${proxy.url} ${JSON.stringify(answer.body)}`).toBe(400)
        expect(answer.body.code).toBe('EINVALPROXY')
        expect(answer.body.data.proxy).toContain('credentials')
        expect(JSON.stringify(answer.body)).not.toContain('wrong-93')
      }
    }
    expect(portsOf('/px/page?id=badauth')).toEqual([])
  }, 60_000)

  it('a proxy that is down: 400 EINVALPROXY', async () => {
    const closed = net.createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const port = (closed.address() as net.AddressInfo).port
    await new Promise<void>((resolve) => closed.close(() => { resolve() }))
    const local = await build({ ALLOW_PRIVATE_HOSTS: `${fx.host},127.0.0.1:${port}`, API_KEYS: KEY })
    try {
      const res = await local.pro.inject({ url: `/?${qs({ url: `${fx.origin}/plain/`, prerender: false, proxy: `socks5://127.0.0.1:${port}` })}`, headers: { 'x-api-key': KEY } })
      expect(res.statusCode, res.body).toBe(400)
      expect(res.json().code).toBe('EINVALPROXY')
      expect(res.json().data.proxy).toContain('cannot be reached')
    } finally {
      await local.close()
    }
  })

  it('free plan: 403 EPROXY, nothing dialled', async () => {
    const connections = httpProxy.connections()
    const res = await app.free.inject({ url: `/?${qs({ url: `${fx.origin}/px/page?id=free`, proxy: httpProxy.url })}` })
    expect(res.statusCode).toBe(403)
    expect(res.json().code).toBe('EPROXY')
    expect(httpProxy.connections()).toBe(connections)
  })
})

describe('secrets', () => {
  it('the proxy credentials are in no log line', () => {
    expect(app.rawLogs.length).toBeGreaterThan(0)
    const all = app.rawLogs.join('\n')
    for (const secret of [AUTH.password, encodeURIComponent(AUTH.password), 'wrong-93', Buffer.from(`${AUTH.username}:${AUTH.password}`).toString('base64')]) {
      expect(all).not.toContain(secret)
    }
  })
})
