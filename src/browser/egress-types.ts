// The egress proxy's contracts (egress-proxy.ts): its options, its refusal records and what the pool sees of it.
import type { AppError } from '../errors.ts'
import type { AddressGuard } from '../net/guard.ts'

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
  /** The job's proxy failed, not the target (EINVALPROXY, or EFORBIDDENURL with `data.proxy`): its error. */
  proxyError?: AppError
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
  /** Extra CA trusted for https proxies (tests with a self-signed proxy). */
  proxyCa?: string | Buffer | undefined
  /**
   * Require Basic proxy credentials, made up here per proxy (`EgressProxy.credentials`), so that it is nobody's open
   * proxy: the pool's proxies always do (any local process could reach one on loopback). Default off.
   */
  authenticate?: boolean
}

export interface EgressProxyStats {
  /** Upstream connections opened (to checked addresses). */
  upstreamConnections: number
  /** Requests and tunnels refused since the proxy started. */
  refusals: number
  /** Connections of the current job opened through its proxy. */
  jobProxied: number
}

export interface EgressProxy {
  /** `http://<host>:<port>`, for Chromium's proxy setting. */
  readonly server: string
  /** The credentials the browser must send, when `authenticate` is on. */
  readonly credentials: { username: string, password: string } | undefined
  readonly port: number
  /** Refusals recorded since the last newJob(). */
  refusals (): readonly EgressRefusal[]
  /**
   * Starts over for the next job: forgets the refusals and every cached verdict (nothing carries over), and routes
   * the job's upstream connections through `proxy` (an href with credentials), or directly when it is undefined.
   */
  newJob (proxy?: string): void
  /**
   * The job is over: every connection the browser has open to the proxy is ended (requests still in flight with
   * it) and new ones are refused, until newJob().
   */
  endJob (): void
  /** Called synchronously on each refusal (before the browser sees it). */
  onRefusal (listener: (refusal: EgressRefusal) => void): () => void
  stats (): EgressProxyStats
  /** Stops listening and destroys every open connection, client and upstream. */
  close (): Promise<void>
}
