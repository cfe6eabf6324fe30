// The address guard inside the browser (docs/api.md §10), with real Chromium. Network rule: only loopback. The "blocked"
// server listens on 127.0.0.1, 127.0.0.2 and [::1] (same port) and counts every connection and every UDP datagram;
// none of them is exempt, so every test ends by asserting that it saw nothing. The allowed fixture server is exempt
// (ALLOW_PRIVATE_HOSTS), and its pages point at the blocked one in every way a page can.
import dgram from 'node:dgram'
import { installLoopbackNet, type ConnectAttempt } from '../helpers/loopback-net.ts'
import { readFile } from 'node:fs/promises'
import http from 'node:http'
import net from 'node:net'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { isAppError } from '../../src/errors.ts'
import { createAddressGuard } from '../../src/net/guard.ts'
import type { ResolvedAddress } from '../../src/net/guard.ts'
import { createBrowserPool } from '../../src/browser/pool/index.ts'
import type { BrowserPool, JobInfo } from '../../src/browser/pool/index.ts'
import type { Emulation } from '../../src/browser/emulation.ts'
import type { EgressRefusal } from '../../src/browser/egress-proxy.ts'
import { startFixtureServer } from '../helpers/fixture-server.ts'
import type { FixtureServer } from '../helpers/fixture-server.ts'

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/browser')

// ---------------------------------------------------------------- safety net for this process (the egress proxy)

const violations: ConnectAttempt[] = []
let uninstallSafetyNet = (): void => {}

function installSafetyNet (): void {
  uninstallSafetyNet = installLoopbackNet({ violations })
}

// ---------------------------------------------------------------- servers

interface BlockedServer {
  port: number
  udpPort: number
  v6: boolean
  connections: () => number
  datagrams: () => number
  close: () => Promise<void>
}

async function listen (server: net.Server, port: number, host: string): Promise<boolean> {
  return await new Promise<boolean>((resolve) => {
    server.once('error', () => { resolve(false) })
    server.listen(port, host, () => { resolve(true) })
  })
}

async function startBlockedServer (): Promise<BlockedServer> {
  let connections = 0
  let datagrams = 0
  const servers: http.Server[] = []
  const make = (): http.Server => {
    const server = http.createServer((_req, res) => { res.end('must never be reached') })
    server.on('connection', () => { connections += 1 })
    server.on('upgrade', (_req, socket: net.Socket) => { socket.destroy() })
    servers.push(server)
    return server
  }
  const first = make()
  await listen(first, 0, '127.0.0.1')
  const { port } = first.address() as AddressInfo
  await listen(make(), port, '127.0.0.2')
  const v6 = await listen(make(), port, '::1')
  const udp = dgram.createSocket('udp4')
  udp.on('message', () => { datagrams += 1 })
  await new Promise<void>((resolve) => { udp.bind(0, '127.0.0.1', resolve) })
  return {
    port,
    udpPort: udp.address().port,
    v6,
    connections: () => connections,
    datagrams: () => datagrams,
    close: async () => {
      udp.close()
      await Promise.all(servers.filter((s) => s.listening).map((s) => new Promise<void>((resolve) => { s.closeAllConnections(); s.close(() => { resolve() }) })))
    }
  }
}

async function template (file: string, vars: Record<string, string>): Promise<string> {
  let text = await readFile(path.join(FIXTURES, file), 'utf8')
  for (const [name, value] of Object.entries(vars)) text = text.replaceAll(`{{${name}}}`, value)
  return text
}

function html (res: http.ServerResponse, body: string): void {
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(body) })
  res.end(body)
}

// ---------------------------------------------------------------- setup

let blocked: BlockedServer
/** An exempt loopback port where nothing listens: allowed, but unreachable. */
let closedPort: number
let allowed: FixtureServer
let other: FixtureServer
let pool: BrowserPool
const otherRequests: http.IncomingMessage[] = []
const allowedRequests: http.IncomingMessage[] = []

function emulation (over: Partial<Emulation> = {}): Emulation {
  return {
    viewport: { width: 800, height: 600 },
    deviceScaleFactor: 1,
    isMobile: false,
    hasTouch: false,
    userAgent: 'pagecast-test',
    javaScriptEnabled: true,
    colorScheme: 'no-preference',
    reducedMotion: false,
    extraHTTPHeaders: {},
    ...over
  }
}

function run<T> (job: (page: import('playwright-core').Page, info: JobInfo) => Promise<T>, over: Partial<Emulation> = {}): Promise<T> {
  return pool.run(job, { signal: AbortSignal.timeout(20_000), emulation: emulation(over) })
}

async function expectForbidden (promise: Promise<unknown>): Promise<void> {
  const error = await promise.then(() => undefined, (err: unknown) => err)
  expect(isAppError(error), `expected an AppError, got ${String(error)}`).toBe(true)
  if (isAppError(error)) expect(error.code).toBe('EFORBIDDENURL')
}

beforeAll(async () => {
  installSafetyNet()
  blocked = await startBlockedServer()
  allowed = await startFixtureServer()
  other = await startFixtureServer()
  const B = `http://127.0.0.1:${blocked.port}`
  const vars = {
    BLOCKED: B,
    BLOCKED_HTTPS: `https://127.0.0.1:${blocked.port}`,
    BLOCKED_WS: `ws://127.0.0.1:${blocked.port}`,
    BLOCKED_WSS: `wss://127.0.0.1:${blocked.port}`,
    BLOCKED_LOCALHOST: `http://localhost:${blocked.port}`,
    BLOCKED_V6: `http://[::1]:${blocked.port}`,
    BLOCKED_ALIAS: `http://127.0.0.2:${blocked.port}`,
    STUN: `127.0.0.1:${blocked.udpPort}`,
    TARGET: `${B}/landing`
  }
  for (const file of ['subresources.html', 'meta-refresh.html', 'js-navigation.html', 'webrtc.html', 'plain.html']) {
    const body = await template(file, vars)
    allowed.route(`/${file}`, (_req, res) => { html(res, body) })
  }
  allowed.route('/sw.js', (_req, res) => { res.writeHead(200, { 'content-type': 'text/javascript' }); res.end('self.addEventListener("fetch", () => {})') })
  allowed.route('/redirect-to-blocked', (_req, res) => { res.writeHead(302, { location: `${B}/landing` }); res.end() })
  allowed.route('/redirect-chain', (_req, res) => { res.writeHead(302, { location: `${allowed.origin}/redirect-to-blocked` }); res.end() })
  allowed.route('/headers', (req, res) => {
    allowedRequests.push(req)
    html(res, `<!doctype html><title>headers</title><img src="${other.origin}/pixel.png"><script>fetch('/api')</script>`)
  })
  allowed.route('/api', (req, res) => { allowedRequests.push(req); res.end('{}') })
  allowed.route('/headers-redirect', (req, res) => {
    allowedRequests.push(req)
    res.writeHead(302, { location: `${other.origin}/landing` })
    res.end()
  })
  other.route('/pixel.png', (req, res) => { otherRequests.push(req); res.writeHead(404); res.end() })
  other.route('/landing', (req, res) => { otherRequests.push(req); html(res, '<!doctype html><title>landing</title>') })

  const probe = net.createServer()
  await listen(probe, 0, '127.0.0.1')
  closedPort = (probe.address() as AddressInfo).port
  await new Promise<void>((resolve) => { probe.close(() => { resolve() }) })

  const names: Record<string, ResolvedAddress[]> = {
    // Only our resolver knows this name: a page loading from it proves Chromium did not look it up itself.
    'named.test': [{ address: '127.0.0.1', family: 4 }],
    'loopback.test': [{ address: '127.0.0.1', family: 4 }],
    // One answer public, one loopback: every answer is checked, so the name is refused (no connection is made).
    'mixed.test': [{ address: '93.184.216.34', family: 4 }, { address: '127.0.0.1', family: 4 }]
  }
  const guard = createAddressGuard({
    allowPrivateHosts: [allowed.host, other.host, `named.test:${allowed.port}`, `127.0.0.1:${closedPort}`],
    resolve: async (hostname) => {
      const answers = names[hostname]
      if (answers === undefined) throw Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })
      return answers
    }
  })
  pool = await createBrowserPool({ concurrency: 2, queueLimit: 16 }, { guard })
})

afterEach(() => {
  expect(blocked.connections()).toBe(0)
  expect(blocked.datagrams()).toBe(0)
  expect(violations).toEqual([])
})

afterAll(async () => {
  await pool?.close()
  await Promise.all([blocked?.close(), allowed?.close(), other?.close()])
  uninstallSafetyNet()
})

// ---------------------------------------------------------------- tests

describe('sub-requests', () => {
  it('refuses every sub-request to a blocked address while the allowed page renders', async () => {
    const result = await run(async (page, info) => {
      const response = await page.goto(`${allowed.origin}/subresources.html`)
      const results = await page.evaluate('window.__done') as Record<string, string>
      // Give late requests (favicon, prefetch, beacon) a moment to show up.
      await page.waitForTimeout(500)
      return {
        status: response?.status(),
        title: await page.title(),
        heading: await page.textContent('#heading'),
        screenshot: await page.screenshot(),
        results,
        refused: info.refusals().map((r) => r.url),
        navigation: info.refusedNavigation()
      }
    })
    expect(result.status).toBe(200)
    expect(result.title).toBe('Allowed page')
    expect(result.heading).toBe('The allowed page still renders')
    expect(result.screenshot.length).toBeGreaterThan(1000)
    expect(result.navigation).toBeUndefined()
    expect(allowed.hitsOf('/sw.js')).toBe(0)
    for (const [name, outcome] of Object.entries(result.results)) {
      // A no-cors fetch cannot tell the proxy's 403 from any other answer: its refusal is checked below.
      if (name !== 'fetch-no-cors') expect(outcome, name).toMatch(/^failed/)
    }
    expect(Object.keys(result.results).sort()).toEqual([
      'beacon', 'dynamic-image', 'fetch', 'fetch-no-cors', 'fetch-tls', 'service-worker', 'service-worker-cross',
      'websocket', 'websocket-tls', 'worker-import', 'xhr'
    ])
    const B = `http://127.0.0.1:${blocked.port}`
    for (const url of [`${B}/image.png`, `${B}/frame.html`, `${B}/script.js`, `${B}/style.css`, `${B}/fetch`, `${B}/fetch-no-cors`, `${B}/xhr`,
      `${B}/dynamic.png`, `${B}/from-worker`, `http://localhost:${blocked.port}/image.png`, `http://[::1]:${blocked.port}/image.png`,
      `http://127.0.0.2:${blocked.port}/image.png`]) {
      expect(result.refused, url).toContain(url)
    }
    // TLS and WebSockets go through CONNECT, where only host:port is visible.
    expect(result.refused).toContain(`https://127.0.0.1:${blocked.port}`)
  })

  it('sends no UDP around the proxy (WebRTC ICE to a STUN server)', async () => {
    const candidates = await run(async (page) => {
      await page.goto(`${allowed.origin}/webrtc.html`)
      return await page.evaluate('window.__done') as string[]
    })
    expect(candidates.filter((c) => / udp /i.test(c))).toEqual([])
  })
})

describe('main navigations', () => {
  const targets = (): string[] => [
    `http://127.0.0.2:${blocked.port}/`,
    `http://localhost:${blocked.port}/`,
    `http://[::1]:${blocked.port}/`,
    `http://127.0.0.1:${blocked.port}/`,
    `https://127.0.0.1:${blocked.port}/`,
    `http://loopback.test:${blocked.port}/`,
    `http://mixed.test:${blocked.port}/`,
    `http://named.test:${blocked.port}/`
  ]

  it('gives EFORBIDDENURL for a blocked address, and tells the job first', async () => {
    for (const url of targets()) {
      const seen: Array<EgressRefusal | undefined> = []
      await expectForbidden(run(async (page, info) => {
        await page.goto(url).catch(() => undefined)
        seen.push(info.refusedNavigation())
        return 'rendered'
      }))
      expect(seen[0]?.kind, url).toBe('blocked')
    }
    if (blocked.v6) expect(blocked.connections()).toBe(0)
  })

  it('gives EFORBIDDENURL when a redirect leads to a blocked address', async () => {
    const before = allowed.hitsOf('/redirect-chain')
    await expectForbidden(run(async (page) => { await page.goto(`${allowed.origin}/redirect-chain`) }))
    expect(allowed.hitsOf('/redirect-chain')).toBe(before + 1)
    expect(allowed.hitsOf('/redirect-to-blocked')).toBeGreaterThan(0)
  })

  for (const file of ['meta-refresh.html', 'js-navigation.html']) {
    it(`gives EFORBIDDENURL when the page leaves for a blocked address (${file})`, async () => {
      await expectForbidden(run(async (page, info) => {
        await page.goto(`${allowed.origin}/${file}`)
        for (let i = 0; i < 50 && info.refusedNavigation() === undefined; i++) await page.waitForTimeout(100)
        return 'finished'
      }))
    })
  }

  it('gives EINVALURL for an allowed address that cannot be reached, not the proxy\'s answer', async () => {
    for (const url of [`http://127.0.0.1:${closedPort}/`, `https://127.0.0.1:${closedPort}/`]) {
      const error = await run(async (page) => { await page.goto(url).catch(() => undefined); return 'rendered' }).then(() => undefined, (err: unknown) => err)
      expect(isAppError(error), url).toBe(true)
      if (isAppError(error)) expect(error.code, url).toBe('EINVALURL')
    }
  })

  it('refuses file: URLs, whoever asks', async () => {
    await expectForbidden(run(async (page) => { await page.goto('file:///etc/passwd') }))
    const stayed = await run(async (page) => {
      await page.goto(`${allowed.origin}/plain.html`)
      await page.evaluate("location.href = 'file:///etc/passwd'")
      await page.waitForTimeout(300)
      return { url: page.url(), text: await page.textContent('body') }
    })
    expect(stayed.url).toBe(`${allowed.origin}/plain.html`)
    expect(stayed.text).not.toMatch(/root:/)
  })

  it('refuses chrome: and view-source: navigations', async () => {
    await expectForbidden(run(async (page) => { await page.goto('chrome://version') }))
    await expectForbidden(run(async (page) => { await page.goto(`view-source:${allowed.origin}/plain.html`) }))
  })

  it('connects to the address the proxy resolved: a name only our resolver knows loads', async () => {
    const title = await run(async (page) => {
      await page.goto(`http://named.test:${allowed.port}/plain.html`)
      return await page.title()
    })
    expect(title).toBe('Plain fixture')
  })
})

describe('forwarded headers', () => {
  it('sends origin-scoped headers to the target origin only, user-agent and accept-language everywhere', async () => {
    allowedRequests.length = 0
    otherRequests.length = 0
    const headers = { 'x-secret': 's3cret', 'accept-language': 'fr-FR', 'user-agent': 'CustomAgent/1.0', host: 'evil.example' }
    const agent = await run(async (page) => {
      await page.goto(`${allowed.origin}/headers`)
      await page.waitForLoadState('networkidle')
      await page.goto(`${allowed.origin}/headers-redirect`)
      return await page.evaluate('navigator.userAgent')
    }, { extraHTTPHeaders: headers })
    expect(agent).toBe('CustomAgent/1.0')
    const paths = (requests: http.IncomingMessage[]): string[] => requests.map((r) => r.url ?? '')
    expect(paths(allowedRequests)).toEqual(['/headers', '/api', '/headers-redirect'])
    expect(paths(otherRequests).sort()).toEqual(['/landing', '/pixel.png'])
    for (const req of allowedRequests) {
      expect(req.headers['x-secret'], req.url).toBe('s3cret')
      expect(req.headers.host).toBe(allowed.host)
    }
    for (const req of [...allowedRequests, ...otherRequests]) {
      expect(req.headers['accept-language'], req.url).toBe('fr-FR')
      expect(req.headers['user-agent'], req.url).toBe('CustomAgent/1.0')
    }
    for (const req of otherRequests) expect(req.headers['x-secret'], req.url).toBeUndefined()

    // The next job on the same slot forwards nothing.
    allowedRequests.length = 0
    await pool.run(async (page) => { await page.goto(`${allowed.origin}/headers`) }, { signal: AbortSignal.timeout(20_000), emulation: emulation() })
    expect(allowedRequests.length).toBeGreaterThan(0)
    for (const req of allowedRequests) {
      expect(req.headers['x-secret']).toBeUndefined()
      expect(req.headers['accept-language']).not.toBe('fr-FR')
    }
  })
})
