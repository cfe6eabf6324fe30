// URL identity for crawls and maps: the form a URL is fetched and reported in (canonicalUrl), and the key of the
// seen set that makes "the same page" be fetched once (seenKey). Pure.
import { getDomain } from 'tldts'
import { toHttpUrl } from '../util/url.ts'
import type { CrawlRules } from './types.ts'

/** Longest URL a crawl takes; longer ones are refused as `invalid` (browsers and servers commonly stop near 8 KiB). */
export const MAX_URL_LENGTH = 8192

const INDEX_FILE = /\/index\.(?:html?|php|aspx?)$/i

/**
 * The URL as a crawl fetches and reports it: absolute http(s) (resolved against `base`), no fragment, the scheme's
 * default port dropped and the host lower-cased (WHATWG URL does both), the query dropped when `ignoreQuery`.
 * Undefined when it is not an http(s) URL or is longer than MAX_URL_LENGTH.
 */
export function canonicalUrl (value: string, options: { base?: string, ignoreQuery?: boolean } = {}): string | undefined {
  const href = toHttpUrl(value, options.base)
  if (href === undefined) return undefined
  const url = new URL(href)
  url.hash = ''
  url.username = ''
  url.password = ''
  if (options.ignoreQuery === true) url.search = ''
  const out = url.href
  return out.length > MAX_URL_LENGTH ? undefined : out
}

/** The host without a leading `www.`: `www.example.com` and `example.com` are one site. */
export function siteHost (hostname: string): string {
  return hostname.startsWith('www.') ? hostname.slice(4) : hostname
}

/**
 * The seen-set key of a canonical URL: a trailing slash makes no difference (`/a/` is `/a`), and with
 * `deduplicateSimilarURLs` neither do the scheme, a `www.` prefix or an index file (`/a/index.html` is `/a`).
 */
export function seenKey (canonical: string, rules: Pick<CrawlRules, 'deduplicateSimilarURLs'>): string {
  const url = new URL(canonical)
  let path = url.pathname
  if (rules.deduplicateSimilarURLs) path = path.replace(INDEX_FILE, '/')
  if (path.length > 1 && path.endsWith('/')) path = path.replace(/\/+$/, '')
  if (path === '') path = '/'
  if (!rules.deduplicateSimilarURLs) return `${url.protocol}//${url.host}${path}${url.search}`
  return `//${siteHost(url.hostname)}${url.port === '' ? '' : `:${url.port}`}${path}${url.search}`
}

/** The registrable domain of a host name (`blog.example.co.uk` → `example.co.uk`); undefined for IPs and single labels. */
export function registrableDomain (hostname: string): string | undefined {
  return getDomain(hostname, { allowPrivateDomains: true }) ?? undefined
}

export type Relation = 'same' | 'subdomain' | 'external'

/**
 * How `url` relates to the start URL's site: `same` host (modulo `www.`, any scheme) and port, a `subdomain` of the
 * start host's registrable domain (any port), or `external`. Ports matter for `same`: another port is another server.
 */
export function relationTo (start: URL, url: URL): Relation {
  const a = siteHost(start.hostname)
  const b = siteHost(url.hostname)
  const portOf = (u: URL): string => u.port === '' ? (u.protocol === 'https:' ? '443' : '80') : u.port
  const samePort = portOf(start) === portOf(url) || start.port === url.port
  if (a === b && samePort) return 'same'
  const domain = registrableDomain(a)
  if (domain !== undefined && (b === domain || b.endsWith(`.${domain}`)) && a !== b) return 'subdomain'
  return 'external'
}

/** The directory a start URL bounds a crawl to: its path up to the last `/` (`/blog/post` → `/blog/`). */
export function startDirectory (start: URL): string {
  return start.pathname.slice(0, start.pathname.lastIndexOf('/') + 1)
}
