// Proxies the proxy tests start on loopback: an HTTP proxy (CONNECT tunnels; over TLS when given a certificate) and a
// SOCKS5 proxy (RFC 1928 CONNECT with no auth or RFC 1929 username/password). Each counts the connections it
// accepted and the tunnels it opened, and records the target authorities and credentials it was given, so a test can
// tell that traffic went through it and how. They connect only to loopback targets (anything else is refused), so
// a test can never reach out through them. A plain (forwarding) request gets 405: pagecast must tunnel everything.
import http from 'node:http'
import https from 'node:https'
import net from 'node:net'
import type { AddressInfo, Socket } from 'node:net'
import type { Duplex } from 'node:stream'

export interface TestProxy {
  /** `http://127.0.0.1:<port>`, `https://localhost:<port>` or `socks5://127.0.0.1:<port>` (no credentials). */
  url: string
  host: string
  port: number
  /** `host:port` for ALLOW_PRIVATE_HOSTS. */
  allowEntry: string
  /** TCP connections accepted. */
  connections: () => number
  /** Tunnels opened to a target. */
  tunnels: () => number
  /** The `host:port` each tunnel asked for. */
  targets: string[]
  /** `user:password` of each authenticated request ('' when none was sent). */
  credentials: string[]
  /** Plain (non-CONNECT) requests, refused with 405. */
  forwarded: () => number
  /** Local ports of the proxy's sockets to targets: a target that sees one of these got the request through it. */
  upstreamPorts: Set<number>
  close: () => Promise<void>
}

export interface ProxyAuth {
  username: string
  password: string
}

function isLoopback (host: string): boolean {
  const bare = host.startsWith('[') ? host.slice(1, -1) : host
  return net.isIPv4(bare) ? bare.startsWith('127.') : bare === '::1'
}

function pipeTo (client: Duplex, host: string, port: number, ports: Set<number>, onOpen: () => void, onFail: () => void): void {
  const upstream = net.connect({ host: host.startsWith('[') ? host.slice(1, -1) : host, port })
  upstream.once('connect', () => {
    if (upstream.localPort !== undefined) ports.add(upstream.localPort)
    onOpen()
    upstream.pipe(client)
    client.pipe(upstream)
  })
  upstream.on('error', () => { onFail(); client.destroy() })
  client.on('error', () => { upstream.destroy() })
  client.on('close', () => { upstream.destroy() })
  upstream.on('close', () => { client.destroy() })
}

async function listen (server: net.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return (server.address() as AddressInfo).port
}

function closer (server: net.Server, sockets: Set<Duplex>): () => Promise<void> {
  return async () => {
    for (const socket of sockets) socket.destroy()
    await new Promise<void>((resolve) => { server.close(() => { resolve() }) })
  }
}

/** An HTTP proxy; with `tls` (key and cert for `localhost`), an https proxy reached as `https://localhost:<port>`. */
export async function startHttpProxy (options: { auth?: ProxyAuth, tls?: { key: string, cert: string } } = {}): Promise<TestProxy> {
  let connections = 0
  let tunnels = 0
  let forwarded = 0
  const targets: string[] = []
  const credentials: string[] = []
  const sockets = new Set<Duplex>()
  const upstreamPorts = new Set<number>()
  const server = options.tls === undefined ? http.createServer() : https.createServer({ key: options.tls.key, cert: options.tls.cert })
  server.on(options.tls === undefined ? 'connection' : 'secureConnection', (socket: Socket) => {
    connections += 1
    sockets.add(socket)
    socket.once('close', () => { sockets.delete(socket) })
  })
  server.on('request', (_req: http.IncomingMessage, res: http.ServerResponse) => {
    forwarded += 1
    res.writeHead(405, { connection: 'close', 'content-length': 0 }).end()
  })
  server.on('connect', (req: http.IncomingMessage, client: Duplex, head: Buffer) => {
    sockets.add(client)
    const header = req.headers['proxy-authorization']
    const sent = header?.startsWith('Basic ') === true ? Buffer.from(header.slice(6), 'base64').toString('utf8') : ''
    credentials.push(sent)
    const wanted = options.auth === undefined ? undefined : `${options.auth.username}:${options.auth.password}`
    if (wanted !== undefined && sent !== wanted) {
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\nproxy-authenticate: Basic realm="test"\r\ncontent-length: 0\r\n\r\n')
      return
    }
    const authority = req.url ?? ''
    targets.push(authority)
    const colon = authority.lastIndexOf(':')
    const host = authority.slice(0, colon)
    const port = Number(authority.slice(colon + 1))
    if (!isLoopback(host)) {
      client.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n')
      return
    }
    pipeTo(client, host, port, upstreamPorts, () => {
      tunnels += 1
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
      if (head.length > 0) client.unshift(head)
    }, () => { client.end('HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\n\r\n') })
  })
  server.on('clientError', (_err, socket: Duplex) => { socket.destroy() })
  const port = await listen(server)
  const host = options.tls === undefined ? '127.0.0.1' : 'localhost'
  return {
    url: `${options.tls === undefined ? 'http' : 'https'}://${host}:${port}`,
    host,
    port,
    allowEntry: `${host}:${port}`,
    connections: () => connections,
    tunnels: () => tunnels,
    targets,
    credentials,
    forwarded: () => forwarded,
    upstreamPorts,
    close: closer(server, sockets)
  }
}

/** Reads exactly `n` bytes (or undefined when the socket ends first). */
function reader (socket: Socket): (n: number) => Promise<Buffer | undefined> {
  let buffered = Buffer.alloc(0)
  let waiting: (() => void) | undefined
  let ended = false
  socket.on('data', (chunk: Buffer) => { buffered = Buffer.concat([buffered, chunk]); waiting?.() })
  socket.on('close', () => { ended = true; waiting?.() })
  return async (n) => {
    while (buffered.length < n) {
      if (ended) return undefined
      await new Promise<void>((resolve) => { waiting = resolve })
      waiting = undefined
    }
    const out = buffered.subarray(0, n)
    buffered = buffered.subarray(n)
    return out
  }
}

/** A SOCKS5 proxy (CONNECT only), requiring username/password when `auth` is given. */
export async function startSocks5Proxy (options: { auth?: ProxyAuth } = {}): Promise<TestProxy> {
  let connections = 0
  let tunnels = 0
  const targets: string[] = []
  const credentials: string[] = []
  const sockets = new Set<Duplex>()
  const upstreamPorts = new Set<number>()
  const server = net.createServer((socket) => {
    connections += 1
    sockets.add(socket)
    socket.once('close', () => { sockets.delete(socket) })
    socket.on('error', () => { socket.destroy() })
    handshake(socket).catch(() => { socket.destroy() })
  })
  async function handshake (socket: Socket): Promise<void> {
    const read = reader(socket)
    const greeting = await read(2)
    if (greeting?.[0] !== 5) { socket.destroy(); return }
    const methods = await read(greeting[1] ?? 0)
    const want = options.auth === undefined ? 0 : 2
    if (methods === undefined || !methods.includes(want)) { socket.end(Buffer.from([5, 0xff])); return }
    socket.write(Buffer.from([5, want]))
    if (want === 2) {
      const version = await read(2)
      const user = (await read(version?.[1] ?? 0))?.toString('utf8') ?? ''
      const passLength = await read(1)
      const pass = (await read(passLength?.[0] ?? 0))?.toString('utf8') ?? ''
      credentials.push(`${user}:${pass}`)
      const ok = user === options.auth?.username && pass === options.auth.password
      socket.write(Buffer.from([1, ok ? 0 : 1]))
      if (!ok) { socket.end(); return }
    } else {
      credentials.push('')
    }
    const request = await read(4)
    if (request?.[1] !== 1) { socket.end(Buffer.from([5, 7, 0, 1, 0, 0, 0, 0, 0, 0])); return }
    let host: string
    if (request[3] === 1) host = [...((await read(4)) ?? [])].join('.')
    else if (request[3] === 4) host = `[${((await read(16)) ?? Buffer.alloc(16)).toString('hex').replace(/(.{4})(?!$)/g, '$1:')}]`
    else host = ((await read((await read(1))?.[0] ?? 0)) ?? Buffer.alloc(0)).toString('utf8')
    const port = (await read(2))?.readUInt16BE(0) ?? 0
    targets.push(`${host}:${port}`)
    const reply = (code: number): Buffer => Buffer.from([5, code, 0, 1, 127, 0, 0, 1, 0, 0])
    if (!isLoopback(host)) { socket.end(reply(2)); return }
    socket.removeAllListeners('data')
    pipeTo(socket, host, port, upstreamPorts, () => { tunnels += 1; socket.write(reply(0)) }, () => { socket.end(reply(5)) })
  }
  const port = await listen(server)
  return {
    url: `socks5://127.0.0.1:${port}`,
    host: '127.0.0.1',
    port,
    allowEntry: `127.0.0.1:${port}`,
    connections: () => connections,
    tunnels: () => tunnels,
    targets,
    credentials,
    forwarded: () => 0,
    upstreamPorts,
    close: closer(server, sockets)
  }
}

/** `url` with `auth` put in as user info. */
export function withAuth (url: string, auth: ProxyAuth): string {
  const parsed = new URL(url)
  parsed.username = encodeURIComponent(auth.username)
  parsed.password = encodeURIComponent(auth.password)
  return parsed.href.replace(/\/$/, '')
}
