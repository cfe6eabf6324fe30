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
// One proxy serves one browser context at a time (the pool gives each slot its own): its records are the job's.
//
// A job's `proxy` (docs/api.md §3.6) is chained behind this layer: newJob(proxy) makes every upstream connection of
// the job a tunnel through the user's proxy to the CHECKED address (net/proxy-tunnel.ts, which also checks the
// proxy's own host), plain-http requests included. The next newJob() goes direct again unless it names a proxy too;
// a change of route drops every open connection, so no kept-alive socket or tunnel carries one job's traffic the
// way another job chose; a job through a proxy starts with none open either (it never inherits a tunnel).
//
// Between jobs nothing goes through: endJob() ends every connection the browser has open to the proxy (a keepalive
// fetch or a beacon of the last job still waiting for its answer included, so no answer of its can set a cookie in
// the next job) and refuses new ones until newJob(). Kept-alive upstream sockets of plain-http requests stay.
//
// The pool's proxies ask every client for a credential of their own (egress-auth.ts).
import http from 'node:http'
import net from 'node:net'
import type { AddressInfo, Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import { isAppError } from '../errors.ts'
import type { ResolvedAddress } from '../net/guard.ts'
import { openTunnel, parseUpstreamProxy, type UpstreamProxy } from '../net/proxy-tunnel.ts'
import { EGRESS_MARKER_HEADER, answer, describe, filteredHeaders, parseAuthority, resendable } from './egress-wire.ts'
import type { EgressProxy, EgressProxyOptions, EgressRefusal, EgressRefusalKind } from './egress-types.ts'
import { challenge, createEgressGate } from './egress-auth.ts'

export { EGRESS_MARKER_HEADER, egressKey } from './egress-wire.ts'
export type { EgressProxy, EgressProxyLog, EgressProxyOptions, EgressProxyStats, EgressRefusal, EgressRefusalKind } from './egress-types.ts'

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
  /** The job's proxy (undefined: direct), with the href it came from. */
  let route: { href: string, proxy: UpstreamProxy } | undefined
  let jobProxied = 0
  /** The browser's connections to this proxy (each request and tunnel arrives on one). */
  const clients = new Set<Socket>()
  /** The last job ended and the next has not begun: nothing is let through (the credential is still asked first). */
  let betweenJobs = false
  /** `host:port` of the proxy itself as the browser names it, once listening. */
  let selfHost = ''

  // Upstream sockets are keyed by the checked IP and port (the Agent's name), so a kept-alive socket is only reused
  // for the very address it was opened to.
  function createAgent (): http.Agent {
    const created = new http.Agent({ keepAlive: true, maxSockets: 64, maxFreeSockets: 16, timeout: 30_000 })
    const agentCreateConnection = created.createConnection.bind(created)
    created.createConnection = ((...args: Parameters<typeof agentCreateConnection>) => {
      upstreamConnections += 1
      const socket = agentCreateConnection(...args)
      if (socket !== undefined && socket !== null) track(socket as Duplex)
      return socket
    }) as typeof created.createConnection
    return created
  }
  let agent = createAgent()

  function track (socket: Duplex): void {
    sockets.add(socket)
    socket.once('close', () => { sockets.delete(socket) })
  }

  /**
   * A connected socket to a checked address: directly, or through the job's proxy. A failure that is the guard's
   * (the proxy host blocked at connection time) says so, so the refusal is recorded as a block.
   */
  async function dial (target: ResolvedAddress, port: number): Promise<Duplex> {
    upstreamConnections += 1
    if (route !== undefined) {
      const socket = await openTunnel(guard, route.proxy, { address: target.address, port }, { timeoutMs: connectTimeoutMs, ca: options.proxyCa })
      jobProxied += 1
      track(socket)
      return socket
    }
    const socket = net.connect({ host: target.address, port, family: target.family })
    track(socket)
    await new Promise<void>((resolve, reject) => {
      socket.setTimeout(connectTimeoutMs, () => { socket.destroy(new Error('connect timeout')) })
      socket.once('connect', () => { socket.setTimeout(0); socket.off('error', reject); resolve() })
      socket.once('error', reject)
    })
    return socket
  }

  function dialFailure (err: unknown): EgressRefusalKind {
    return isAppError(err) && err.code === 'EFORBIDDENURL' ? 'blocked' : 'unreachable'
  }

  function refuse (kind: EgressRefusalKind, channel: 'http' | 'tunnel', url: string, host: string, port: number, reason: string, err?: unknown): EgressRefusal {
    const proxyError = isAppError(err) && 'proxy' in err.data ? { proxyError: err } : {}
    const refusal: EgressRefusal = { kind, channel, url, host, port, reason, ...proxyError }
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
    // The browser learning the credential (authenticateEgress): answered here, nothing goes upstream.
    if (url.host === selfHost) {
      res.writeHead(204, { 'cache-control': 'no-store', 'content-length': 0 }).end()
      return
    }
    const port = url.port === '' ? 80 : Number(url.port)
    const verdict = await check(url.hostname, port)
    // The job ended meanwhile (endJob): its request goes nowhere.
    if (req.socket.destroyed || closed) return
    if (!verdict.ok) {
      refuse(verdict.kind, 'http', url.href, url.hostname, port, verdict.reason)
      answer(res, verdict.kind === 'blocked' ? 403 : 502, verdict.kind)
      return
    }
    if (req.destroyed || closed) return
    const headers = filteredHeaders(req.rawHeaders)
    const target = verdict.target
    let dialError: unknown
    // The request upstream; one that fails on a reused socket before any answer goes once more (egress-wire.ts).
    let upstream: http.ClientRequest
    const send = (retried: boolean): void => {
      const request = http.request({
        host: target.address,
        family: target.family,
        port,
        method: req.method,
        path: `${url.pathname}${url.search}`,
        headers,
        setHost: false,
        // Through a proxy: one tunnel per request (never pooled with direct sockets); directly: the keep-alive agent.
        ...(route === undefined
          ? { agent }
          : {
              createConnection: (_options: unknown, done: (err: Error | null, socket: Duplex) => void) => {
                dial(target, port).then((socket) => { done(null, socket) }, (err: unknown) => {
                  dialError = err
                  done(err instanceof Error ? err : new Error(String(err)), undefined as unknown as Duplex)
                })
                return undefined
              }
            }),
        // An idle backstop (long polls included); the job's deadline is what really ends a request.
        timeout: 60_000
      })
      request.on('timeout', () => { request.destroy(new Error('upstream idle timeout')) })
      request.on('response', (upstreamRes) => {
        // No `date` of ours where the target sent none (its `connection`/`keep-alive` are dropped on reading: net/headers.ts).
        res.sendDate = false
        res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.statusMessage, filteredHeaders(upstreamRes.rawHeaders))
        upstreamRes.pipe(res)
        upstreamRes.on('error', () => { res.destroy() })
      })
      request.on('error', (err) => {
        if (res.headersSent) { res.destroy(); return }
        if (!retried && request.reusedSocket && resendable(req) && !res.destroyed && !closed) { send(true); return }
        const kind = dialError === undefined ? 'unreachable' : dialFailure(dialError)
        refuse(kind, 'http', url.href, url.hostname, port, dialError === undefined ? err.message : describe(dialError), dialError)
        answer(res, kind === 'blocked' ? 403 : 502, kind)
      })
      upstream = request
      if (retried) request.end()
      else req.pipe(request)
    }
    send(false)
    res.on('close', () => { if (!res.writableFinished) upstream.destroy() })
  }

  async function onConnect (req: http.IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    track(client)
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
    let upstream: Duplex
    try {
      upstream = await dial(verdict.target, port)
    } catch (err) {
      if (client.destroyed) return
      const kind = dialFailure(err)
      refuse(kind, 'tunnel', shown, host, port, describe(err), err)
      client.end(`HTTP/1.1 ${kind === 'blocked' ? '403 Forbidden' : '502 Bad Gateway'}\r\n${EGRESS_MARKER_HEADER}: ${kind}\r\nconnection: close\r\ncontent-length: 0\r\n\r\n`)
      return
    }
    relay(client, upstream, 'HTTP/1.1 200 Connection Established\r\n\r\n', head)
  }

  /** Joins a client and its upstream byte for byte, after `preface` to the client and `head` to the upstream. */
  function relay (client: Duplex, upstream: Duplex, preface: string, head: Buffer): void {
    upstream.on('error', () => { client.destroy() })
    upstream.on('close', () => { client.destroy() })
    client.on('close', () => { upstream.destroy() })
    if (client.destroyed || closed) { upstream.destroy(); return }
    if (preface !== '') client.write(preface)
    if (head.length > 0) upstream.write(head)
    upstream.pipe(client)
    client.pipe(upstream)
  }

  // Absolute-form upgrade requests (a plain ws:// sent without CONNECT): checked, then relayed byte for byte.
  async function onUpgrade (req: http.IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
    track(client)
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
    let upstream: Duplex
    try {
      upstream = await dial(verdict.target, port)
    } catch {
      client.destroy()
      return
    }
    // Upgrade keeps its Connection/Upgrade headers; only the proxy's own go.
    const lines = [`${req.method ?? 'GET'} ${url.pathname}${url.search} HTTP/1.1`]
    for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
      const name = req.rawHeaders[i] ?? ''
      if (/^proxy-/i.test(name)) continue
      lines.push(`${name}: ${req.rawHeaders[i + 1] ?? ''}`)
    }
    upstream.write(`${lines.join('\r\n')}\r\n\r\n`)
    relay(client, upstream, '', head)
  }

  const server = http.createServer({ keepAlive: true, requestTimeout: 0, headersTimeout: 60_000 })
  server.on('connection', (socket: Socket) => {
    clients.add(socket)
    socket.once('close', () => { clients.delete(socket) })
    track(socket)
  })
  const gate = createEgressGate(options.authenticate === true)
  /** Whether a client's request may go on: it carries the credential, and a job is running (else it is dropped). */
  function admitted (req: http.IncomingMessage, to: http.ServerResponse | Duplex): boolean {
    if (!gate.authorized(req)) {
      challenge(to)
      return false
    }
    if (betweenJobs) {
      req.socket.destroy()
      if (!('writeHead' in to)) to.destroy()
      return false
    }
    return true
  }

  server.on('request', (req, res) => {
    if (!admitted(req, res)) return
    onRequest(req, res).catch((err: unknown) => {
      log?.warn({ err }, 'egress proxy request failed')
      res.destroy()
    })
  })
  // On `connect` and `upgrade` Node hands the raw socket over without its error listener: one goes on first, or a
  // client that resets the connection after our 407 would throw in this process.
  server.on('connect', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => { socket.destroy() })
    if (!admitted(req, socket)) return
    onConnect(req, socket, head).catch((err: unknown) => {
      log?.warn({ err }, 'egress proxy tunnel failed')
      socket.destroy()
    })
  })
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => { socket.destroy() })
    if (!admitted(req, socket)) return
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
  selfHost = new URL(`http://${advertisedHost}:${port}`).host

  return {
    server: `http://${advertisedHost}:${port}`,
    credentials: gate.credentials,
    port,
    refusals: () => records,
    newJob: (proxy) => {
      betweenJobs = false
      records = []
      verdicts.clear()
      jobProxied = 0
      // A job through a proxy, or the first direct one after it, starts with no open connection: nothing opened for
      // another job may carry its requests, and every connection it uses is counted as its own (Chromium reconnects
      // at once). Direct jobs after direct jobs keep their kept-alive connections.
      const fresh = route !== undefined || proxy !== undefined
      route = proxy === undefined ? undefined : { href: proxy, proxy: parseUpstreamProxy(proxy) }
      if (fresh) {
        for (const socket of sockets) socket.destroy()
        agent.destroy()
        agent = createAgent()
      }
    },
    endJob: () => {
      betweenJobs = true
      for (const socket of clients) socket.destroy()
    },
    onRefusal (listener) {
      listeners.add(listener)
      return () => { listeners.delete(listener) }
    },
    stats: () => ({ upstreamConnections, refusals: refusalCount, jobProxied }),
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
