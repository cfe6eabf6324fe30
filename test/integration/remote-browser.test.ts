// A remote browser (docs/operations.md#remote-browsers): a Playwright browser server in its own process on another
// loopback address (127.0.0.2, started by scripts/browser-server.ts as an operator would), the service connected to
// it through BROWSER_WS_ENDPOINT, its egress layer listening on a third address (EGRESS_HOST=127.0.0.3) with
// per-proxy credentials. Renders work; the address guard still decides every request the remote browser makes;
// nobody without the credentials can use the egress proxy; the service reconnects when the browser server
// restarts; and a browser server of another Playwright version is refused with a plain message.
import { spawn, type ChildProcess } from 'node:child_process'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { build, qs, type Built } from '../helpers/build.ts'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'
import { watchListening } from '../helpers/processes.ts'
import { freePort } from '../setup/global-setup.ts'
import { PLAYWRIGHT_VERSION, remoteError } from '../../src/browser/pool/supervisor.ts'

const ROOT = path.resolve(import.meta.dirname, '../..')
const TOKEN = 'remote-browser-test-token'

let fx: FixtureServer
let app: Built
let port: number
let browserServer: ChildProcess | undefined
/** A loopback server the service may not reach, and the connections it saw. */
let blocked: http.Server
let blockedPort: number
let blockedConnections = 0
/**
 * Every server this test process started listening on EGRESS_HOST (127.0.0.3): the egress proxies the service under
 * test opened, seen through Node's `net.server.listen` tracing channel. Nothing else on the machine is looked at.
 */
let egressListeners: ReturnType<typeof watchListening> | undefined

async function startBrowserServer (): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['scripts/browser-server.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, BROWSER_SERVER_HOST: '127.0.0.2', BROWSER_SERVER_PORT: String(port), BROWSER_SERVER_TOKEN: TOKEN, EGRESS_ADVERTISE_HOST: '127.0.0.3' },
    stdio: ['ignore', 'pipe', 'inherit'],
    detached: true
  })
  await new Promise<void>((resolve, reject) => {
    let out = ''
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      if (out.includes('wsEndpoint')) resolve()
    })
    child.once('exit', (code) => { reject(new Error(`the browser server exited with ${String(code)}`)) })
  })
  return child
}

function stopBrowserServer (child: ChildProcess | undefined): void {
  // Its whole process group: the server and its Chromium.
  if (child?.pid !== undefined) {
    try { process.kill(-child.pid, 'SIGKILL') } catch {}
  }
}

beforeAll(async () => {
  egressListeners = watchListening('127.0.0.3')
  fx = await startFixtureServer()
  blocked = http.createServer((_req, res) => { res.end('reached') })
  blocked.on('connection', () => { blockedConnections++ })
  await new Promise<void>(resolve => blocked.listen(0, '127.0.0.1', resolve))
  blockedPort = (blocked.address() as AddressInfo).port
  fx.route('/remote/with-blocked-image', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' })
    res.end(`<!doctype html><title>Remote page</title><img src="http://127.0.0.1:${blockedPort}/pixel.png"><p>Rendered remotely.</p>`)
  })
  port = await freePort()
  browserServer = await startBrowserServer()
  app = await build({
    ALLOW_PRIVATE_HOSTS: fx.host,
    API_KEYS: 'k',
    BROWSER_WS_ENDPOINT: `ws://127.0.0.2:${port}/${TOKEN}`,
    EGRESS_HOST: '127.0.0.3',
    BROWSER_CONCURRENCY: '1'
  })
}, 120_000)

afterAll(async () => {
  egressListeners?.stop()
  await app?.close()
  stopBrowserServer(browserServer)
  await fx?.close()
  await new Promise(resolve => blocked?.close(resolve))
})

async function render (query: Record<string, string | number | boolean>) {
  return await app.pro.inject({ url: `/?${qs({ prerender: true, force: true, ...query })}`, headers: { 'x-api-key': 'k' } })
}

describe('a remote browser through BROWSER_WS_ENDPOINT', () => {
  it('renders pages, with a screenshot, while the address guard decides every request it makes', async () => {
    const res = await render({ url: `${fx.origin}/remote/with-blocked-image`, screenshot: true })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json().data.title).toBe('Remote page')
    expect(res.json().data.screenshot.type).toBe('png')
    expect(blockedConnections).toBe(0)
    // A navigation to the blocked server is the request's failure, with no connection made.
    const refused = await render({ url: `http://127.0.0.1:${blockedPort}/` })
    expect(refused.statusCode).toBe(400)
    expect(refused.json().code).toBe('EFORBIDDENURL')
    expect(blockedConnections).toBe(0)
  }, 60_000)

  it('keeps the egress proxy closed to anyone without its credentials', async () => {
    // The contexts' proxies listen on EGRESS_HOST: the servers the service started there (in this process, seen as
    // they began listening), the ones still open. Each of them asks for credentials.
    const listening = egressListeners?.ports() ?? []
    expect(listening.length).toBeGreaterThan(0)
    for (const proxyPort of listening) {
      const status = await new Promise<number>((resolve, reject) => {
        const req = http.request({ host: '127.0.0.3', port: proxyPort, method: 'GET', path: `${fx.origin}/plain/` }, (res) => { res.resume(); resolve(res.statusCode ?? 0) })
        req.on('error', reject)
        req.end()
      })
      expect(status).toBe(407)
    }
  })

  it('reconnects when the browser server restarts', async () => {
    stopBrowserServer(browserServer)
    await sleep(300)
    browserServer = await startBrowserServer()
    let last = 0
    for (let i = 0; i < 20; i++) {
      const res = await render({ url: `${fx.origin}/plain/?try=${i}` })
      last = res.statusCode
      if (last === 200) break
      await sleep(500)
    }
    expect(last).toBe(200)
  }, 60_000)
})

describe('a browser server of another Playwright version', () => {
  it('is refused with a message naming both versions', async () => {
    // What Playwright's server answers to a client of another version (a 428 carrying its boxed message).
    const server = http.createServer((_req, res) => {
      res.writeHead(428, { 'content-type': 'text/plain' })
      res.end('Playwright version mismatch:\n  - server version: v1.40.0\n  - client version: v1.65.1\n')
    })
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    const fake = (server.address() as AddressInfo).port
    try {
      const { chromium } = await import('playwright-core')
      const err = await chromium.connect(`ws://127.0.0.1:${fake}/x`, { timeout: 5000 }).then(() => undefined, (e: unknown) => e)
      const message = remoteError(err).message
      expect(message).toContain('Playwright v1.40')
      expect(message).toContain(`playwright-core v${PLAYWRIGHT_VERSION}`)
    } finally {
      server.close()
    }
  })
})
