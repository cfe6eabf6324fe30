// The plain fetcher's dispatchers (http-client.ts): one Agent that connects directly, and one per `proxy` that
// tunnels through it (proxy-tunnel.ts). Both pin the connection to the address the guard checked.
//
// No DNS rebinding: for every NEW socket the connector calls guard.resolveChecked(hostname, port), which resolves the
// name once, checks every answer, and returns one of those checked addresses; the socket (or the proxy's tunnel) then
// goes to that IP literal, so no second lookup happens anywhere. TLS keeps the original host name for SNI and
// certificate checks, and the Host header comes from the request URL, so neither changes. A kept-alive socket is only
// ever reused for the same origin (and, through a proxy, the same proxy URL), and it still points at the address
// that was checked when it was opened.
import { Agent, buildConnector } from 'undici'
import type { Dispatcher } from 'undici'
import { isIP } from 'node:net'
import type { Socket } from 'node:net'
import { defaultPort } from '../util/url.ts'
import type { AddressGuard } from './guard.ts'
import { openTunnel, parseUpstreamProxy } from './proxy-tunnel.ts'

/** Backstops only: the caller's signal is the real deadline. */
const CONNECT_TIMEOUT_MS = 10_000
const HEADERS_TIMEOUT_MS = 30_000
const BODY_TIMEOUT_MS = 30_000
/** Proxy URLs whose Agents are kept (least recently used first out, closed gracefully). */
const MAX_PROXY_AGENTS = 16

export interface DispatcherOptions {
  guard: AddressGuard
  /** Extra CA trusted for https proxies (tests). */
  proxyCa?: string | Buffer | undefined
}

export interface Dispatchers {
  /** The direct Agent, or the Agent of `proxy` (an href with credentials, never logged). */
  for (proxy: string | undefined): Dispatcher
  close (): Promise<void>
}

function noop (): void {}

function asError (err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err))
}

export function createDispatchers (options: DispatcherOptions): Dispatchers {
  const { guard } = options
  const baseConnect = buildConnector({ timeout: CONNECT_TIMEOUT_MS, allowH2: false })

  /** The connector of one route (direct or one proxy): resolve and check, then hand the checked address on. */
  function pinned (open: (address: string, port: number, options: buildConnector.Options, callback: buildConnector.Callback) => void): buildConnector.connector {
    return (connectOptions, callback) => {
      const port = connectOptions.port
        ? Number(connectOptions.port)
        : (defaultPort(connectOptions.protocol) ?? 80)
      const host = connectOptions.hostname
      // SNI and certificate verification use the original name (none for an IP-literal host).
      const { servername: _ignored, ...rest } = connectOptions
      const tlsName = connectOptions.protocol === 'https:' && isIP(host) === 0 ? { servername: host } : {}
      guard.resolveChecked(host, port).then(
        (target) => { open(target.address, port, { ...rest, ...tlsName }, callback) },
        (err: unknown) => { callback(asError(err), null) }
      )
    }
  }

  // Direct: on plain http no servername is passed, so undici connects straight to the IP with no lookup of its own.
  const direct = pinned((address, _port, connectOptions, callback) => { baseConnect({ ...connectOptions, hostname: address }, callback) })

  function tunnelled (href: string): buildConnector.connector {
    const proxy = parseUpstreamProxy(href)
    return pinned((address, port, connectOptions, callback) => {
      openTunnel(guard, proxy, { address, port }, { timeoutMs: CONNECT_TIMEOUT_MS, ca: options.proxyCa }).then(
        (socket) => {
          // TLS to the target runs inside the tunnel (undici's httpSocket); plain http uses the tunnel as it is.
          if (connectOptions.protocol === 'https:') baseConnect({ ...connectOptions, hostname: address, httpSocket: socket as Socket }, callback)
          else callback(null, socket as Socket)
        },
        (err: unknown) => { callback(asError(err), null) }
      )
    })
  }

  const agentOptions = { headersTimeout: HEADERS_TIMEOUT_MS, bodyTimeout: BODY_TIMEOUT_MS, allowH2: false }
  const agent = new Agent({ ...agentOptions, connect: direct })
  const proxied = new Map<string, Agent>()

  return {
    for (proxy) {
      if (proxy === undefined) return agent
      let found = proxied.get(proxy)
      if (found !== undefined) {
        proxied.delete(proxy)
      } else {
        found = new Agent({ ...agentOptions, connect: tunnelled(proxy) })
        if (proxied.size >= MAX_PROXY_AGENTS) {
          const [oldest, old] = proxied.entries().next().value ?? []
          if (oldest !== undefined) proxied.delete(oldest)
          // close() lets its running requests finish.
          old?.close().catch(noop)
        }
      }
      proxied.set(proxy, found)
      return found
    },
    async close () {
      const all = [agent, ...proxied.values()]
      proxied.clear()
      await Promise.all(all.map(async (a) => { await a.close() }))
    }
  }
}
