// A site's URLs for the Firecrawl map (POST /v1|v2/map): the start page's links and the site's sitemaps, each URL
// checked by the same admit() as a crawl (site, subdomains, robots.txt), each once, then `search` and `limit`.
// Order: the start URL, the start page's links in document order, then the sitemaps' URLs in reading order.
import { isAppError } from '../errors.ts'
import { admit } from './admit.ts'
import { extractLinks } from './links.ts'
import { createRobotsCache, type RobotsCache } from './robots.ts'
import { readSitemaps, type SitemapDiscovery, type SitemapLimits } from './sitemap.ts'
import { sitemapRoots } from './frontier.ts'
import { canonicalUrl, seenKey } from './url.ts'
import type { CompiledRules } from './rules.ts'
import type { CrawlFetch, RobotsView, SitemapMode } from './types.ts'

/** Default and ceiling of a map's `limit`. */
export const DEFAULT_MAP_LIMIT = 5000
export const MAX_MAP_LIMIT = 100_000
/** Origins whose robots.txt a map reads at most; URLs of further origins (subdomains) are left out. */
export const MAX_MAP_ORIGINS = 20

export interface MapRequest {
  /** The start URL, absolute http(s). */
  url: string
  sitemap: SitemapMode
  /** URLs on subdomains of the start host's registrable domain are kept. */
  includeSubdomains: boolean
  /** `/a?x=1` is `/a`. */
  ignoreQueryParameters: boolean
  /** Words every kept URL contains (case-insensitive, URL-decoded); empty: no filter. */
  search: string
  limit: number
}

export interface MapDeps {
  fetch: CrawlFetch
  signal: AbortSignal
  /** Bytes of the start page read (MAX_HTML_BYTES). */
  maxHtmlBytes: number
  sitemapLimits?: Partial<SitemapLimits>
}

export interface MapResult {
  links: string[]
  /** What the sitemaps gave (undefined with `sitemap: skip`). */
  sitemaps?: SitemapDiscovery
  /** Why the start page's links are missing, when they are (it failed, or is not HTML). */
  startPageError?: string
}

function rulesFor (request: MapRequest, start: string): CompiledRules {
  const rules = {
    start,
    includePaths: [],
    excludePaths: [],
    regexOnFullURL: false,
    maxDiscoveryDepth: undefined,
    limit: request.limit,
    crawlEntireDomain: true,
    allowSubdomains: request.includeSubdomains,
    allowExternalLinks: false,
    sitemap: request.sitemap,
    ignoreQueryParameters: request.ignoreQueryParameters,
    deduplicateSimilarURLs: false,
    ignoreRobotsTxt: false
  }
  return { rules, start: new URL(start), include: [], exclude: [] }
}

function matcher (search: string): (url: string) => boolean {
  const terms = search.toLowerCase().split(/\s+/).filter((t) => t !== '')
  if (terms.length === 0) return () => true
  return (url) => {
    let text = url.toLowerCase()
    try { text = decodeURIComponent(text) } catch {}
    return terms.every((t) => text.includes(t))
  }
}

/**
 * The start page's links, or why there are none. A refused address always fails the map; another failure fails it
 * only when the page is its one source (`sitemap: skip`).
 */
async function startLinks (start: string, deps: MapDeps, onlySource: boolean): Promise<{ links: string[], error?: string }> {
  try {
    const page = await deps.fetch(start, { signal: deps.signal, maxBytes: deps.maxHtmlBytes })
    const type = page.headers['content-type'] ?? ''
    if (page.statusCode >= 400) return { links: [], error: `status ${page.statusCode}` }
    if (!/html|xml/i.test(type) && type !== '') return { links: [], error: `not HTML (${type})` }
    return { links: extractLinks(page.body.toString('utf8'), page.url) }
  } catch (err) {
    if (deps.signal.aborted || onlySource || (isAppError(err) && err.code === 'EFORBIDDENURL')) throw err
    return { links: [], error: isAppError(err) ? err.code : String(err) }
  }
}

export async function mapSite (request: MapRequest, deps: MapDeps): Promise<MapResult> {
  const start = canonicalUrl(request.url, { ignoreQuery: request.ignoreQueryParameters })
  if (start === undefined) throw new TypeError(`not an http(s) URL: ${request.url}`)
  const compiled = rulesFor(request, start)
  const robots: RobotsCache = createRobotsCache({ fetch: deps.fetch })
  const origins = new Set<string>()
  const keys = new Set<string>()
  const kept: string[] = []
  const wanted = matcher(request.search)
  const full = (): boolean => kept.length >= request.limit

  async function add (url: string): Promise<void> {
    if (full()) return
    let origin: string
    try { origin = new URL(url).origin } catch { return }
    if (!origins.has(origin)) {
      if (origins.size >= MAX_MAP_ORIGINS) return
      origins.add(origin)
    }
    // The site checks come first, so robots.txt is read only for origins the map may list.
    const bySite = admit(url, 1, compiled)
    if (!bySite.ok) return
    const view: RobotsView = await robots.forUrl(bySite.url, deps.signal)
    const verdict = admit(bySite.url, 1, compiled, view)
    if (!verdict.ok || !wanted(verdict.url)) return
    const key = seenKey(verdict.url, compiled.rules)
    if (keys.has(key)) return
    keys.add(key)
    kept.push(verdict.url)
  }

  const result: MapResult = { links: kept }
  if (request.sitemap !== 'only') {
    const page = await startLinks(start, deps, request.sitemap === 'skip')
    if (page.error !== undefined) result.startPageError = page.error
    for (const url of [start, ...page.links]) await add(url)
  }
  if (request.sitemap !== 'skip' && !full()) {
    const roots = await sitemapRoots(start, robots, deps.signal)
    const sitemaps = await readSitemaps(roots, {
      fetch: deps.fetch,
      signal: deps.signal,
      limits: { ...deps.sitemapLimits, maxUrls: Math.min(deps.sitemapLimits?.maxUrls ?? MAX_MAP_LIMIT, MAX_MAP_LIMIT) }
    })
    result.sitemaps = sitemaps
    for (const url of sitemaps.urls) await add(url)
  }
  return result
}
