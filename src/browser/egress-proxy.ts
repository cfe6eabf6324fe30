// The address guard inside the browser (docs/api.md §10): a forward proxy in this process that Chromium must send every
// request through. For each plain-http request and each CONNECT tunnel (https, wss, ws) it resolves the host once
// with guard.resolveChecked (which checks EVERY answer and honours ALLOW_PRIVATE_HOSTS), then connects to exactly
// the address that was checked, so Chromium never looks a target up itself and DNS rebinding has nothing to rebind.
//
// Refusals answer in a way Chromium cannot mistake for the target: a CONNECT gets a non-200 reply (the browser sees
// ERR_TUNNEL_CONNECTION_FAILED); a plain-http request gets a 403 (blocked) or 502 (unreachable) carrying the
// `x-pagecast-egress` marker header. Each refusal is recorded, so the pool can tell a job that its main navigation
// was refused (EFORBIDDENURL / EINVALURL) while a refused sub-request merely fails inside the page.
//
// One proxy serves one browser context at a time (the pool gives each slot its own), so its records belong to
// the job running there.

import { randomBytes, timingSafeEqual } from 'node:crypto'
import http from 'node:http'
import net from 'node:net'
import type { AddressInfo, Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import { isAppError } from '../errors.ts'
import type { AddressGuard, ResolvedAddress } from '../net/guard.ts'
import { EGRESS_MARKER_HEADER, describe, filteredHeaders, parseAuthority } from './egress-wire.ts'

export { EGRESS_MARKER_HEADER, egressKey } from './egress-wire.ts'


export type EgressRefusalKind = 'blocked' | 'unreachable'

export interface EgressRefusal {
  kind: EgressRefusalKind
  /** How the request came: a plain-http request, a CONNECT tunnel, or a non-web scheme stopped in the browser. */
  channel: 'http' | 'tunnel' | 'scheme'
  /** The full URL for plain http; `https://host:port` for a tunnel (the path is hidden by TLS). */
  url: string
  /** WHATWG host form: lower case, IPv6 in brackets. */
  host: string
  port: number
  /** Internal detail (the resolved address, the policy reason): for logs, never for clients. */
  reason: string
}

export interface EgressProxyLog {
  debug (obj: object, msg: string): void
  warn (obj: object, msg: string): void
}

export interface EgressProxyOptions {
  guard: AddressGuard
  log?: EgressProxyLog
  /** Interface to listen on; default 127.0.0.1. */
  listenHost?: string
  /** Host the browser is told to use; default the listen host. */
  advertisedHost?: string
  /** Upstream connect backstop; the job's deadline is the real limit. Default 15 s. */
  connectTimeoutMs?: number
  /**
   * How long a host:port verdict (the checked address, or the refusal) is reused, so a page with a hundred
   * requests to one host resolves it once. Default 30 s; 0 turns it off. newJob() forgets them all.
   */
  verdictTtlMs?: number
  /**
   * Require Basic proxy credentials, made up here per proxy (`EgressProxy.credentials`): on when the proxy listens
   * where others could reach it (a remote browser, a non-loopback EGRESS_HOST), so it is nobody's open proxy.
   */
  authenticate?: boolean
}

export interface EgressProxyStats {
  /** Upstream connections opened (to checked addresses). */
  upstreamConnections: number
  /** Requests and tunnels refused since the proxy started. */
  refusals: number
}

export interface EgressProxy {
  /** `http://<host>:<port>`, for Chromium's proxy setting. */
  readonly server: string
  /** The credentials the browser must send, when `authenticate` is on. */
  readonly credentials: { username: string, password: string } | undefined
  readonly port: number
  /** Refusals recorded since the last newJob(). */
  refusals (): readonly EgressRefusal[]
  /** Starts over for the next job: forgets the refusals and every cached verdict (nothing carries over). */
  newJob (): void
  /** Called synchronously on each refusal (before the browser sees it). */
  onRefusal (listener: (refusal: EgressRefusal) => void): () => void
  stats (): EgressProxyStats
  /** Stops listening and destroys every open connection, client and upstream. */
  close (): Promise<void>
}

type Verdict = { ok: true, target: ResolvedAddress } | { ok: false, kind: EgressRefusalKind, reason: string }


export async function createEgressProxy (options: EgressProxyOptions): Promise<EgressProxy> {
  const { guard, log } = options
  const listenHost = options.listenHost ?? '127.0.0.1'
  const connectTimeoutMs = options.connectTimeoutMs ?? 15_000
  const verdictTtlMs = options.verdictTtlMs ?? 30_000
  const verdicts = new Map<string, { verdict: Promise<Verdict>, expires: number }>()
  let records: EgressRefusal[] = []
  const listeners = new Set<(refusal: EgressRefusal) => void>()
  const sockets = new Set<Duplex>()
  let upstreamConnections = 0
  let refusalCount = 0
  let closed = false

  // Upstream sockets are keyed by the checked IP and port (the Agent's name), so a kept-alive socket is only reused
  // for the very address it was opened to.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64, maxFreeSockets: 16, timeout: 30_000 })
  const agentCreateConnection = agent.createConnection.bind(agent)
  agent.createConnection = ((...args: Parameters<typeof agentCreateConnection>) => {
    upstreamConnections += 1
    const socket = agentCreateConnection(...args)
    if (socket !== undefined && socket !== null) track(socket as Duplex)
    return socket
  }) as typeof agent.createConnection

  function track (socket: Duplex): void {
    sockets.add(socket)
    socket.once('close', () => { sockets.delete(socket) })
  }

  function refuse (kind: EgressRefusalKind, channel: 'http' | 'tunnel', url: string, host: string, port: number, reason: string): EgressRefusal {
    const refusal: EgressRefusal = { kind, channel, url, host, port, reason }
    records.push(refusal)
    refusalCount += 1
    log?.debug({ kind, url, reason }, 'browser egress refused')
    for (const listener of listeners) {
      try { listener(refusal) } catch (err) { log?.warn({ err }, 'egress refusal listener failed') }
    }
    return refusal
  }

  /** resolveChecked, classified: an EFORBIDDENURL is a block, anything else (no such name) is unreachable. */
  async function resolve (host: string, port: number): Promise<Verdict> {
    try {
      return { ok: true, target: await guard.resolveChecked(host, port) }
    } catch (err) {
      const kind: EgressRefusalKind = isAppError(err) && err.code === 'EFORBIDDENURL' ? 'blocked' : 'unreachable'
      return { ok: false, kind, reason: describe(err) }
    }
  }

  /** The verdict for host:port, reused for verdictTtlMs: the connection still goes to the address checked. */
  function check (host: string, port: number): Promise<Verdict> {
    if (verdictTtlMs <= 0) return resolve(host, port)
    const key = `${host}:${port}`
    const now = Date.now()
    const cached = verdicts.get(key)
    if (cached !== undefined && cached.expires > now) return cached.verdict
    if (verdicts.size >= 1000) verdicts.clear()
    const verdict = resolve(host, port)
    verdicts.set(key, { verdict, expires: now + verdictTtlMs })
    return verdict
  }

  function answer (res: http.ServerResponse, status: number, kind: EgressRefusalKind): void {
    if (res.headersSent) { res.destroy(); return }
    const body = kind === 'blocked' ? 'Blocked by pagecast: the address is not allowed.\n' : 'pagecast could not reach the address.\n'
    res.writeHead(status, {
      [EGRESS_MARKER_HEADER]: kind,
      'content-type': 'text/plain; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      'cache-control': 'no-store',
      connection: 'close'
    })
    res.end(body)
  }

  async function onRequest (req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    let url: URL
    try {
      url = new URL(req.url ?? '')
    } catch {
      res.writeHead(400, { [EGRESS_MARKER_HEADER]: 'bad-request', connection: 'close', 'content-length': 0 }).end()
      return
    }
    // Chromium sends only http in absolute form (https and ws/wss go through CONNECT).
    if (url.protocol !== 'http:') {
      refuse('blocked', 'http', url.href, url.hostname, Number(url.port || 0), `scheme ${url.protocol} through the proxy`)
      answer(res, 403, 'blocked')
      return
    }
    const port = url.port === '' ? 80 : Number(url.port)
    const verdict = await check(url.hostname, port)
    if (!verdict.ok) {
      refuse(verdict.kind, 'http', url.href, url.hostname, port, verdict.reason)
      answer(res, verdict.kind === 'blocked' ? 403 : 502, verdict.kind)
      return
    }
    if (req.destroyed || closed) return
    const headers = filteredHeaders(req.rawHeaders)
    const upstream = http.request({
      host: verdict.target.address,
      family: verdict.target.family,
      port,
      method: req.method,
      path: `${url.pathname}${url.search}`,
      headers,
      setHost: false,
      agent,
      // An idle backstop (long polls included); the job's deadline is what really ends a request.
      timeout: 60_000
    })
    upstream.on('timeout', () => { upstream.destroy(new Error('upstream idle timeout')) })
    upstream.on('response', (upstreamRes) => {
      res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.statusMessage, filteredHeaders(upstreamRes.rawHeaders))
      upstreamRes.pipe(res)
      upstreamRes.on('error', () => { res.destroy() })
    })
    upstream.on('error', (err) => {
      if (res.headersSent) { res.destroy(); return }
      refuse('unreachable', 'http', url.href, url.hostname, port, err.message)
      answer(res, 502, 'unreachable')
    })
    res.on('close', () => { if (!res.writableFinished) upstream.destroy() })
    req.pipe(upstream)
  }

  async function onConnect (req: http.IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    track(client)
    client.on('error', () => { client.destroy() })
    const authority = parseAuthority(req.url ?? '')
    if (authority === undefined) {
      client.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n')
      return
    }
    const { host, port } = authority
    const shown = `https://${host}:${port}`
    const verdict = await check(host, port)
    if (client.destroyed || closed) return
    if (!verdict.ok) {
      refuse(verdict.kind, 'tunnel', shown, host, port, verdict.reason)
      const status = verdict.kind === 'blocked' ? '403 Forbidden' : '502 Bad Gateway'
      client.end(`HTTP/1.1 ${status}\r\n${EGRESS_MARKER_HEADER}: ${verdict.kind}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`)
      return
    }
    upstreamConnections += 1
    const upstream: Socket = net.connect({ host: verdict.target.address, port, family: verdict.target.family })
    track(upstream)
    upstream.setTimeout(connectTimeoutMs, () => { upstream.destroy(new Error('connect timeout')) })
    let connected = false
    upstream.once('connect', () => {
      connected = true
      upstream.setTimeout(0)
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
      if (head.length > 0) upstream.write(head)
      upstream.pipe(client)
      client.pipe(upstream)
    })
    upstream.on('error', (err) => {
      if (!connected && !client.destroyed) {
        refuse('unreachable', 'tunnel', shown, host, port, err.message)
        client.end(`HTTP/1.1 502 Bad Gateway\r\n${EGRESS_MARKER_HEADER}: unreachable\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`)
        return
      }
      client.destroy()
    })
    upstream.on('close', () => { client.destroy() })
    client.on('close', () => { upstream.destroy() })
  }

  // Absolute-form upgrade requests (a plain ws:// sent without CONNECT): checked, then relayed byte for byte.
  async function onUpgrade (req: http.IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    track(client)
    client.on('error', () => { client.destroy() })
    let url: URL
    try { url = new URL(req.url ?? '') } catch { client.destroy(); return }
    if (url.protocol !== 'http:' && url.protocol !== 'ws:') {
      refuse('blocked', 'http', url.href, url.hostname, Number(url.port || 0), `scheme ${url.protocol} through the proxy`)
      client.destroy()
      return
    }
    const port = url.port === '' ? 80 : Number(url.port)
    const verdict = await check(url.hostname, port)
    if (client.destroyed || closed) return
    if (!verdict.ok) {
      refuse(verdict.kind, 'http', url.href, url.hostname, port, verdict.reason)
      client.end(`HTTP/1.1 ${verdict.kind === 'blocked' ? '403 Forbidden' : '502 Bad Gateway'}\r\n${EGRESS_MARKER_HEADER}: ${verdict.kind}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`)
      return
    }
    upstreamConnections += 1
    const upstream = net.connect({ host: verdict.target.address, port, family: verdict.target.family })
    track(upstream)
    upstream.once('connect', () => {
      // Upgrade keeps its Connection/Upgrade headers; only the proxy's own go.
      const lines = [`${req.method ?? 'GET'} ${url.pathname}${url.search} HTTP/1.1`]
      for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
        const name = req.rawHeaders[i] ?? ''
        if (/^proxy-/i.test(name)) continue
        lines.push(`${name}: ${req.rawHeaders[i + 1] ?? ''}`)
      }
      upstream.write(`${lines.join('\r\n')}\r\n\r\n`)
      if (head.length > 0) upstream.write(head)
      upstream.pipe(client)
      client.pipe(upstream)
    })
    upstream.on('error', () => { client.destroy() })
    upstream.on('close', () => { client.destroy() })
    client.on('close', () => { upstream.destroy() })
  }

  const server = http.createServer({ keepAlive: true, requestTimeout: 0, headersTimeout: 60_000 })
  server.on('connection', (socket: Socket) => { track(socket) })
  const credentials = options.authenticate === true
    ? { username: `pagecast-${randomBytes(6).toString('hex')}`, password: randomBytes(24).toString('base64url') }
    : undefined
  const expected = credentials === undefined ? undefined : Buffer.from(`Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`)
  /** Whether the request carries this proxy's credentials (always, when it needs none); compared in constant time. */
  function authorized (req: http.IncomingMessage): boolean {
    if (expected === undefined) return true
    const given = Buffer.from(String(req.headers['proxy-authorization'] ?? ''))
    return given.length === expected.length && timingSafeEqual(given, expected)
  }
  const CHALLENGE = 'HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="pagecast-egress"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n'

  server.on('request', (req, res) => {
    if (!authorized(req)) {
      res.writeHead(407, { 'proxy-authenticate': 'Basic realm="pagecast-egress"', 'content-length': 0, connection: 'close' }).end()
      return
    }
    onRequest(req, res).catch((err: unknown) => {
      log?.warn({ err }, 'egress proxy request failed')
      res.destroy()
    })
  })
  server.on('connect', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    if (!authorized(req)) {
      socket.end(CHALLENGE)
      return
    }
    onConnect(req, socket, head).catch((err: unknown) => {
      log?.warn({ err }, 'egress proxy tunnel failed')
      socket.destroy()
    })
  })
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    if (!authorized(req)) {
      socket.end(CHALLENGE)
      return
    }
    onUpgrade(req, socket, head).catch((err: unknown) => {
      log?.warn({ err }, 'egress proxy upgrade failed')
      socket.destroy()
    })
  })
  server.on('clientError', (_err, socket: Duplex) => { socket.destroy() })

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, listenHost, () => { server.off('error', reject); resolve() })
  })
  const { port } = server.address() as AddressInfo
  const advertised = options.advertisedHost ?? listenHost
  const advertisedHost = net.isIPv6(advertised) ? `[${advertised}]` : advertised

  return {
    server: `http://${advertisedHost}:${port}`,
    credentials,
    port,
    refusals: () => records,
    newJob: () => {
      records = []
      verdicts.clear()
    },
    onRefusal (listener) {
      listeners.add(listener)
      return () => { listeners.delete(listener) }
    },
    stats: () => ({ upstreamConnections, refusals: refusalCount }),
    async close () {
      if (closed) return
      closed = true
      listeners.clear()
      const done = new Promise<void>((resolve) => { server.close(() => { resolve() }) })
      for (const socket of sockets) socket.destroy()
      agent.destroy()
      await done
    }
  }
}
