// Contracts of the guarded outbound HTTP client (src/net/http-client.ts), shared by the pipeline
// and the metadata extractor, which only see these interfaces.

export interface Redirect {
  statusCode: number
  /** The URL that answered with the redirect. */
  url: string
}

export interface FetchPageOptions {
  signal: AbortSignal
  /** Largest body read; the read stops there (`truncated` is set). */
  maxBytes: number
  /** Extra request headers (already filtered; user-agent included when wanted). */
  headers?: Record<string, string>
  /** The `proxy` to go through (href with credentials); default: the request's egress scope (egress-scope.ts). */
  proxy?: string
}

export interface FetchPageResult {
  /** The final URL after redirects. */
  url: string
  statusCode: number
  /** Lower-case names, repeats joined by ', '. */
  headers: Record<string, string>
  redirects: Redirect[]
  body: Buffer
  truncated: boolean
}

export interface ProbeOptions {
  signal: AbortSignal
  /** Bytes read at most (a ranged GET asks for exactly these); default 64 KiB. */
  maxBytes?: number
  /** The first byte asked for (the range's start); default 0. A server that ignores ranges answers 200 from byte 0. */
  offset?: number
  /** As FetchPageOptions.proxy. */
  proxy?: string
}

export interface ProbeResult {
  /** Final URL after redirects. */
  url: string
  statusCode: number
  headers: Record<string, string>
  /** The first bytes of the body, at most maxBytes. */
  body: Buffer
  /** Total size of the resource from content-range or content-length, else null. */
  totalSize: number | null
}

export interface HttpClient {
  /** GET a page, following at most 10 redirects, each hop checked by the address guard. */
  fetchPage (url: string, options: FetchPageOptions): Promise<FetchPageResult>
  /** Ranged GET of the first bytes of a media URL, under the same guard and redirect rules. */
  probe (url: string, options: ProbeOptions): Promise<ProbeResult>
  close (): Promise<void>
}

export type Probe = HttpClient['probe']
