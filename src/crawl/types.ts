// The crawl's rules and verdicts as plain data (storable as JSON in a job record), shared by the rule modules of
// src/crawl/ and their callers (the Firecrawl map route, the crawl jobs). Nothing here does I/O.
import type { HttpClient } from '../net/types.ts'

/** Where URLs come from besides links: the site's sitemaps too (`include`), links only (`skip`), sitemaps only. */
export type SitemapMode = 'include' | 'skip' | 'only'

/** A crawl's rules, as the request set them (Firecrawl v2 names; v1 names are mapped in rulesFromRequest). */
export interface CrawlRules {
  /** The start URL, canonical (canonicalUrl). Its host is the site; its directory bounds the crawl (crawlEntireDomain). */
  start: string
  /** Regular expressions (RE2 syntax) a discovered URL's path must match one of; empty: every path. */
  includePaths: readonly string[]
  /** Regular expressions (RE2 syntax) no discovered URL's path may match. */
  excludePaths: readonly string[]
  /** The patterns test the whole URL instead of the path. */
  regexOnFullURL: boolean
  /** Links followed from the start page at most this deep (start and sitemap URLs are depth 0); undefined: no bound. */
  maxDiscoveryDepth: number | undefined
  /** URLs admitted at most, the start URL included. */
  limit: number
  /** Follow links outside the start URL's directory (on the same host). */
  crawlEntireDomain: boolean
  /** Follow links to subdomains of the start host's registrable domain. */
  allowSubdomains: boolean
  /** Follow links to other sites. */
  allowExternalLinks: boolean
  sitemap: SitemapMode
  /** Drop the query string: `/a?x=1` and `/a` are one URL. */
  ignoreQueryParameters: boolean
  /** www/non-www, http/https, `index.html` and a trailing slash make no difference to the seen set. */
  deduplicateSimilarURLs: boolean
  /** Skip robots.txt (the pro plan only; the caller checks the plan). */
  ignoreRobotsTxt: boolean
}

/** Why a URL is not admitted. `robots` URLs are reported to the caller (the job's `robotsBlocked`), the rest dropped. */
export type RefusalReason =
  | 'invalid' // not an http(s) URL
  | 'external' // another site, allowExternalLinks off
  | 'subdomain' // a subdomain, allowSubdomains off
  | 'outside' // same host, outside the start URL's directory, crawlEntireDomain off
  | 'depth' // deeper than maxDiscoveryDepth
  | 'excluded' // matches an excludePaths pattern
  | 'not-included' // matches no includePaths pattern
  | 'robots' // robots.txt disallows it for `pagecast`

export type Admission = { ok: true, url: string } | { ok: false, reason: RefusalReason }

/** What robots.txt says about one origin (robots.ts). */
export interface RobotsView {
  /** Whether the user agent `pagecast` may fetch `url` (a URL of this origin). */
  allows (url: string): boolean
  /** The `Sitemap:` lines, absolute. */
  readonly sitemaps: readonly string[]
  /** `Crawl-delay` for `pagecast` in seconds, when given. */
  readonly crawlDelay: number | undefined
}

/** The one outbound GET the crawl modules use: the guarded client's (src/net/http-client.ts), so every hop is checked. */
export type CrawlFetch = HttpClient['fetchPage']
