// The oEmbed component (docs/api.md §3.4 `iframe`): finds the page's oEmbed endpoint (its discovery links first,
// then the bundled provider registry), calls it through the guarded HTTP client under the request's signal with a
// bounded read, and makes the answer into `data.iframe = {html, scripts}`, or null.
//
// Every endpoint call is an outbound request like any other (docs/api.md §10): the address guard checks each hop and
// the connection actually made, so a link to a private address gets no connection unless ALLOW_PRIVATE_HOSTS lists
// it. A refused, unreachable or non-2xx endpoint, an answer over the size cap, or a body that is not an oEmbed
// object gives nothing, and the next candidate is tried; with none left, the result is null. Only the request's
// deadline ends the work with an error.
import type { CheerioAPI } from 'cheerio'
import type { HttpClient } from '../net/types.ts'
import { toHttpUrl } from '../util/url.ts'
import { discoverEndpoints, type OembedEndpoint } from './discover.ts'
import { createRegistry, type OembedProvider, type OembedRegistry } from './registry.ts'
import { iframeOf, type Iframe } from './response.ts'

export { bundledProviders, createRegistry, type OembedProvider, type OembedRegistry } from './registry.ts'
export { discoverEndpoints, type OembedEndpoint } from './discover.ts'
export { iframeOf, splitScripts, parseResponse, type Iframe, type IframeScript } from './response.ts'

/** The largest oEmbed answer read; a larger one is cut and so gives nothing. */
export const OEMBED_MAX_BYTES = 1024 * 1024

export interface OembedLog {
  debug (obj: object, msg: string): void
}

export interface OembedRequest {
  /** The page's final URL. */
  url: string
  /** The URL asked for, when redirects led elsewhere: the registry is tried with it too. */
  requestedUrl?: string
  /** The page's own discovery links, in order (discoverOembed; absent for targets that are not HTML). */
  discovered?: readonly OembedEndpoint[]
  /** `iframe.*` keys, lower-cased, passed to the provider as query parameters. */
  params: Readonly<Record<string, string>>
  signal: AbortSignal
}

export interface OembedClient {
  readonly registry: OembedRegistry
  /** The endpoints that would be called for a page, in order, with the parameters added. */
  endpointsFor (request: Omit<OembedRequest, 'signal'>): OembedEndpoint[]
  find (request: OembedRequest): Promise<Iframe | null>
}

export interface OembedOptions {
  http: HttpClient
  providers: readonly OembedProvider[]
  maxBytes?: number
  log?: OembedLog
}

const ACCEPT: Readonly<Record<OembedEndpoint['format'], string>> = {
  json: 'application/json, application/json+oembed;q=0.9, */*;q=0.1',
  xml: 'text/xml, application/xml;q=0.9, */*;q=0.1'
}

/** The registry's endpoint for a page: `{format}` filled in, else `format=json` added, and `url` the page's. */
export function registryEndpoint (registry: OembedRegistry, pageUrl: string): OembedEndpoint | null {
  const match = registry.match(pageUrl)
  if (match === null) return null
  const inPath = match.endpoint.includes('{format}')
  let url: URL
  try {
    url = new URL(match.endpoint.replace('{format}', 'json'))
  } catch {
    return null
  }
  url.searchParams.set('url', pageUrl)
  if (!inPath) url.searchParams.set('format', 'json')
  return { url: url.href, format: 'json', source: 'registry' }
}

/** The endpoint with the caller's parameters set (`url` stays the page's: it is not the caller's to change). */
export function withParams (endpoint: OembedEndpoint, params: Readonly<Record<string, string>>): OembedEndpoint {
  const names = Object.keys(params).filter((name) => name !== 'url')
  if (names.length === 0) return endpoint
  const url = new URL(endpoint.url)
  for (const name of names) url.searchParams.set(name, params[name] ?? '')
  return { ...endpoint, url: url.href }
}

function baseOf ($: CheerioAPI, pageUrl: string): string {
  const base = $('base[href]').first().attr('href')
  return (base === undefined ? undefined : toHttpUrl(base, pageUrl)) ?? pageUrl
}

/** The page's oEmbed discovery links, resolved against its `<base>` or its URL: read where the page is parsed. */
export function discoverOembed ($: CheerioAPI, pageUrl: string): OembedEndpoint[] {
  return discoverEndpoints($, baseOf($, pageUrl))
}

export function createOembed (options: OembedOptions): OembedClient {
  const { http, log } = options
  const maxBytes = options.maxBytes ?? OEMBED_MAX_BYTES
  const registry = createRegistry(options.providers)

  function endpointsFor (request: Omit<OembedRequest, 'signal'>): OembedEndpoint[] {
    const candidates: OembedEndpoint[] = [...(request.discovered ?? [])]
    const pages = [request.url, ...(request.requestedUrl === undefined || request.requestedUrl === request.url ? [] : [request.requestedUrl])]
    const fromRegistry = pages.map((page) => registryEndpoint(registry, page)).find((endpoint) => endpoint !== null)
    if (fromRegistry !== undefined && fromRegistry !== null) candidates.push(fromRegistry)
    const seen = new Set<string>()
    return candidates.map((endpoint) => withParams(endpoint, request.params)).filter((endpoint) => {
      if (seen.has(endpoint.url)) return false
      seen.add(endpoint.url)
      return true
    })
  }

  async function call (endpoint: OembedEndpoint, signal: AbortSignal): Promise<Iframe | null> {
    let response
    try {
      response = await http.fetchPage(endpoint.url, { signal, maxBytes, headers: { accept: ACCEPT[endpoint.format] } })
    } catch (err) {
      // The deadline ends the request; anything else (refused address, unreachable, redirect loop) is a miss.
      if (signal.aborted) throw err
      log?.debug({ endpoint: endpoint.url, err }, 'oembed endpoint failed')
      return null
    }
    if (response.statusCode < 200 || response.statusCode > 299 || response.truncated) {
      log?.debug({ endpoint: endpoint.url, statusCode: response.statusCode, truncated: response.truncated }, 'oembed endpoint gave nothing')
      return null
    }
    const iframe = iframeOf(response.body.toString('utf8'), response.url)
    if (iframe === null) log?.debug({ endpoint: endpoint.url }, 'oembed answer unusable')
    return iframe
  }

  async function find (request: OembedRequest): Promise<Iframe | null> {
    for (const endpoint of endpointsFor(request)) {
      const iframe = await call(endpoint, request.signal)
      if (iframe !== null) return iframe
    }
    return null
  }

  return { registry, endpointsFor, find }
}
