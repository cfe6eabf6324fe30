// The user's `proxy` (docs/api.md §3.6, docs/security.md "The `proxy` parameter"): its host's checks, and a TCP
// tunnel through it to one checked target address. The plain fetcher's connector (connectors.ts) and the browser's
// egress proxy (browser/egress-proxy.ts) both dial through here, so the rules hold for every request:
//
// - The TARGET is resolved and checked by our guard first, as without a proxy; the tunnel is asked for the checked
//   IP literal (`CONNECT 93.184.216.34:443`, SOCKS5 with an address, never a name), so the proxy cannot resolve the
//   name to something else. TLS to the target runs inside the tunnel, with the original name for SNI.
// - The PROXY's own host passes the same guard (ALLOW_PRIVATE_HOSTS exemptions included), and the socket goes to
//   the very address that was checked. A blocked proxy host is EFORBIDDENURL with `data.proxy`.
// - http and https proxies are always spoken to with CONNECT, plain-http targets included: a forwarding proxy would
//   resolve the target's name itself. https proxies get TLS to the proxy (its name checked against its certificate).
// - Credentials go only to the proxy (Proxy-Authorization: Basic, or SOCKS5 username/password). They never appear in
//   an error, a cause or a log line: everything shown names the proxy as `scheme://host:port`.
import net from 'node:net'
import tls from 'node:tls'
import type { Duplex } from 'node:stream'
import { SocksClient } from 'socks'
import { AppError, isAppError } from '../errors.ts'
import type { AddressGuard, ResolvedAddress } from './guard.ts'

export type ProxyProtocol = 'http:' | 'https:' | 'socks5:'

export interface UpstreamProxy {
  protocol: ProxyProtocol
  /** WHATWG host name (IPv6 in brackets). */
  hostname: string
  port: number
  /** Decoded; empty when none. */
  username: string
  password: string
  /** `scheme://host:port`: the only form that may be logged or shown. */
  shown: string
}

export interface TunnelOptions {
  /** Connect and handshake backstop. */
  timeoutMs: number
  signal?: AbortSignal
  /** Extra CA certificates trusted for https proxies (tests with a self-signed proxy). */
  ca?: string | Buffer | undefined
}

/** The target of a tunnel: a checked IP literal and a port. */
export interface TunnelTarget {
  address: string
  port: number
}

const DEFAULT_PORTS: Readonly<Record<ProxyProtocol, number>> = { 'http:': 80, 'https:': 443, 'socks5:': 1080 }
const MAX_RESPONSE_HEAD = 16 * 1024

function decode (part: string): string {
  try { return decodeURIComponent(part) } catch { return part }
}

/** Reads a `proxy` value as the parser left it (an http, https or socks5 href). */
export function parseUpstreamProxy (href: string): UpstreamProxy {
  let url: URL
  try { url = new URL(href) } catch (err) {
    throw new AppError('EINVALPROXY', { data: { proxy: 'The proxy URL is not valid.' }, cause: err })
  }
  const protocol = url.protocol
  if ((protocol !== 'http:' && protocol !== 'https:' && protocol !== 'socks5:') || url.hostname === '') {
    throw new AppError('EINVALPROXY', { data: { proxy: `The proxy scheme \`${url.protocol}\` is not supported.` } })
  }
  const port = url.port === '' ? DEFAULT_PORTS[protocol] : Number(url.port)
  return {
    protocol,
    hostname: url.hostname,
    port,
    username: decode(url.username),
    password: decode(url.password),
    shown: `${protocol}//${url.hostname}:${port}`
  }
}

function hostOnly (hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname
}

function remapGuardError (err: unknown, proxy: UpstreamProxy): AppError {
  if (isAppError(err) && err.code === 'EFORBIDDENURL') {
    return new AppError('EFORBIDDENURL', {
      data: { proxy: `The proxy \`${proxy.shown}\` points to an address that is not allowed.` },
      cause: err
    })
  }
  if (isAppError(err) && err.code === 'EINVALURL') {
    return new AppError('EINVALPROXY', { data: { proxy: `The proxy host \`${proxy.hostname}\` does not resolve.` }, cause: err })
  }
  return new AppError('EINVALPROXY', { data: { proxy: `The proxy \`${proxy.shown}\` could not be checked.` }, cause: err })
}

/** The checks of the proxy host that need no DNS (a blocked literal or `localhost`), as EFORBIDDENURL `data.proxy`. */
export function assertProxyLiteralAllowed (guard: AddressGuard, proxy: UpstreamProxy): void {
  try {
    // The guard's literal checks speak http(s) URLs; the exemptions match on host and this effective port.
    const probe = new URL(`http://${proxy.hostname}:${proxy.port}/`)
    if (probe.port === '' && proxy.port !== 80) throw new Error('unreachable: port dropped')
    guard.assertUrlAllowed(probe)
  } catch (err) {
    throw remapGuardError(err, proxy)
  }
}

/** Resolves the proxy host and checks every answer: the address the tunnel's socket goes to. */
export async function resolveProxy (guard: AddressGuard, proxy: UpstreamProxy): Promise<ResolvedAddress> {
  assertProxyLiteralAllowed(guard, proxy)
  try {
    return await guard.resolveChecked(proxy.hostname, proxy.port)
  } catch (err) {
    throw remapGuardError(err, proxy)
  }
}

/** A failure of the proxy itself (down, bad handshake, refused credentials): EINVALPROXY, credentials never shown. */
function proxyFailed (proxy: UpstreamProxy, detail: string): AppError {
  return new AppError('EINVALPROXY', {
    data: { proxy: `The proxy \`${proxy.shown}\` ${detail}.` },
    cause: new Error(`proxy ${proxy.shown}: ${detail}`)
  })
}

/** The proxy answered, but could not reach the target: the target "cannot be reached" (EINVALURL). */
function targetUnreachable (proxy: UpstreamProxy, target: TunnelTarget, detail: string): AppError {
  return new AppError('EINVALURL', {
    data: { url: 'The URL cannot be reached through the proxy.' },
    cause: new Error(`${target.address}:${target.port} through ${proxy.shown}: ${detail}`)
  })
}

function authority (target: TunnelTarget): string {
  return net.isIPv6(target.address) ? `[${target.address}]:${target.port}` : `${target.address}:${target.port}`
}

/** Waits for `event` on a socket, failing on error, close, the timeout or the signal (the socket is then destroyed). */
async function waitFor (socket: Duplex, event: string, options: TunnelOptions, onFail: (err: unknown) => AppError): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => { fail(new Error('timed out')) }, options.timeoutMs)
    const onAbort = (): void => { fail(options.signal?.reason) }
    const cleanup = (): void => {
      clearTimeout(timer)
      options.signal?.removeEventListener('abort', onAbort)
      socket.off(event, onEvent)
      socket.off('error', fail)
      socket.off('close', onClose)
    }
    function fail (err: unknown): void {
      cleanup()
      socket.destroy()
      reject(options.signal?.aborted === true && isAppError(options.signal.reason) ? options.signal.reason : onFail(err))
    }
    const onEvent = (): void => { cleanup(); resolve() }
    const onClose = (): void => { fail(new Error('closed')) }
    socket.once(event, onEvent)
    socket.once('error', fail)
    socket.once('close', onClose)
    if (options.signal?.aborted === true) onAbort()
    else options.signal?.addEventListener('abort', onAbort, { once: true })
  })
}

/** Sends CONNECT and reads the proxy's answer head; bytes past it are given back to the socket. */
async function httpConnect (socket: Duplex, proxy: UpstreamProxy, target: TunnelTarget, options: TunnelOptions): Promise<void> {
  const lines = [`CONNECT ${authority(target)} HTTP/1.1`, `Host: ${authority(target)}`]
  if (proxy.username !== '' || proxy.password !== '') {
    lines.push(`Proxy-Authorization: Basic ${Buffer.from(`${proxy.username}:${proxy.password}`).toString('base64')}`)
  }
  socket.write(`${lines.join('\r\n')}\r\n\r\n`)
  const head = await new Promise<string>((resolve, reject) => {
    let received = Buffer.alloc(0)
    const timer = setTimeout(() => { done(proxyFailed(proxy, 'did not answer the tunnel request in time')) }, options.timeoutMs)
    const onAbort = (): void => { done(isAppError(options.signal?.reason) ? options.signal.reason : proxyFailed(proxy, 'tunnel aborted')) }
    // Read with 'readable' (never 'data'): the socket leaves here neither flowing nor explicitly paused, so whoever
    // takes it next (undici, an http.ClientRequest, a pipe) starts reading it the ordinary way.
    const onReadable = (): void => {
      for (let chunk = socket.read() as Buffer | null; chunk !== null; chunk = socket.read() as Buffer | null) {
        received = Buffer.concat([received, chunk])
        const end = received.indexOf('\r\n\r\n')
        if (end === -1) {
          if (received.length > MAX_RESPONSE_HEAD) { done(proxyFailed(proxy, 'sent an oversized answer to the tunnel request')); return }
          continue
        }
        const rest = received.subarray(end + 4)
        done(undefined, received.subarray(0, end).toString('latin1'))
        if (rest.length > 0) socket.unshift(rest)
        return
      }
    }
    const onError = (): void => { done(proxyFailed(proxy, 'closed the connection during the tunnel request')) }
    function done (err: AppError | undefined, value?: string): void {
      clearTimeout(timer)
      options.signal?.removeEventListener('abort', onAbort)
      socket.off('readable', onReadable)
      socket.off('error', onError)
      socket.off('close', onError)
      if (err !== undefined) { socket.destroy(); reject(err) } else { resolve(value ?? '') }
    }
    socket.on('readable', onReadable)
    socket.once('error', onError)
    socket.once('close', onError)
    if (options.signal?.aborted === true) onAbort()
    else options.signal?.addEventListener('abort', onAbort, { once: true })
  })
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1]
  if (status === undefined) { socket.destroy(); throw proxyFailed(proxy, 'answered the tunnel request with something other than HTTP') }
  const code = Number(status)
  if (code >= 200 && code < 300) return
  socket.destroy()
  if (code === 407) throw proxyFailed(proxy, 'refused the credentials (407)')
  throw targetUnreachable(proxy, target, `CONNECT answered ${code}`)
}

async function socksConnect (socket: Duplex, proxyAddress: ResolvedAddress, proxy: UpstreamProxy, target: TunnelTarget, options: TunnelOptions): Promise<void> {
  const auth = proxy.username !== '' || proxy.password !== '' ? { userId: proxy.username, password: proxy.password } : {}
  const onAbort = (): void => { socket.destroy() }
  options.signal?.addEventListener('abort', onAbort, { once: true })
  try {
    await SocksClient.createConnection({
      proxy: { host: proxyAddress.address, port: proxy.port, type: 5, ...auth },
      command: 'connect',
      destination: { host: target.address, port: target.port },
      existing_socket: socket,
      timeout: options.timeoutMs
    })
  } catch (err) {
    socket.destroy()
    if (options.signal?.aborted === true && isAppError(options.signal.reason)) throw options.signal.reason
    // The socks library's errors carry the options (the password among them): only their message is kept.
    const message = err instanceof Error ? err.message : String(err)
    if (/rejected connection/i.test(message)) throw targetUnreachable(proxy, target, message)
    throw proxyFailed(proxy, /authentication/i.test(message) ? 'refused the credentials' : 'failed the SOCKS5 handshake')
  } finally {
    options.signal?.removeEventListener('abort', onAbort)
  }
}

/**
 * Opens a tunnel through `proxy` to `target` (a checked address). Resolves to a socket that carries bytes to the
 * target as if connected to it directly (TLS to the target, if any, is the caller's).
 */
export async function openTunnel (guard: AddressGuard, proxy: UpstreamProxy, target: TunnelTarget, options: TunnelOptions): Promise<Duplex> {
  const proxyAddress = await resolveProxy(guard, proxy)
  const raw = net.connect({ host: proxyAddress.address, port: proxy.port, family: proxyAddress.family })
  raw.setNoDelay(true)
  await waitFor(raw, 'connect', options, () => proxyFailed(proxy, 'cannot be reached'))
  let socket: Duplex = raw
  if (proxy.protocol === 'https:') {
    const name = hostOnly(proxy.hostname)
    const secure = tls.connect({
      socket: raw,
      ...(net.isIP(name) === 0 ? { servername: name } : {}),
      // The certificate is checked against the name the user gave (an IP literal against its IP SANs).
      checkServerIdentity: (_host, cert) => tls.checkServerIdentity(name, cert),
      ALPNProtocols: ['http/1.1'],
      ...(options.ca === undefined ? {} : { ca: [...tls.rootCertificates, options.ca.toString()] })
    })
    await waitFor(secure, 'secureConnect', options, () => proxyFailed(proxy, 'failed the TLS handshake'))
    socket = secure
  }
  if (proxy.protocol === 'socks5:') await socksConnect(socket, proxyAddress, proxy, target, options)
  else await httpConnect(socket, proxy, target, options)
  return socket
}
