// The crawl's frontier as data: a seen set keyed by seenKey (url.ts), a queue of {url, depth}, and the count of URLs
// admitted so far against `limit`. A job store keeps it (in Redis for jobs shared by replicas, in memory otherwise)
// behind FrontierStore; the decisions (admit, keys, sitemaps, robots) are the functions here, the same for both.
import { admit } from './admit.ts'
import { readSitemaps, type SitemapDiscovery, type SitemapLimits } from './sitemap.ts'
import { canonicalUrl, seenKey } from './url.ts'
import type { CompiledRules } from './rules.ts'
import type { RobotsCache } from './robots.ts'
import type { CrawlFetch } from './types.ts'

export interface FrontierEntry {
  /** The canonical URL to fetch. */
  url: string
  /** 0 for the start URL and sitemap URLs; a link on a depth-n page is n+1. */
  depth: number
}

export type ClaimResult = 'queued' | 'seen' | 'full'

/** What a job store implements; each method is one atomic step (one Lua script or MULTI on Redis). */
export interface FrontierStore {
  /**
   * If `key` is not in the seen set: add it, and when fewer than `limit` URLs were queued so far, count it and
   * append `entry` to the queue ('queued'), else 'full'. A key already seen: 'seen'.
   */
  claim (key: string, entry: FrontierEntry, limit: number): Promise<ClaimResult>
  /** Adds `key` to the seen set without counting or queueing it; true when it was new (robots-blocked URLs). */
  markSeen (key: string): Promise<boolean>
}

export interface OfferResult {
  /** Entries appended to the queue, in order. */
  queued: FrontierEntry[]
  /** URLs robots.txt refused, each reported once per job. */
  robotsBlocked: string[]
  /** The limit was reached: nothing more will be queued. */
  full: boolean
}

export interface OfferDeps {
  compiled: CompiledRules
  robots: RobotsCache
  store: FrontierStore
  signal: AbortSignal
}

/**
 * Offers URLs found at `depth` (links of a depth-1 page are offered at `depth`; sitemap URLs at 0): each is admitted
 * (admit.ts, with its origin's robots.txt), keyed, and claimed in the store. Stops at the first 'full'.
 */
export async function offer (urls: readonly string[], depth: number, deps: OfferDeps): Promise<OfferResult> {
  const { compiled, store, signal } = deps
  const out: OfferResult = { queued: [], robotsBlocked: [], full: false }
  for (const raw of urls) {
    signal.throwIfAborted()
    const robots = compiled.rules.ignoreRobotsTxt || !/^https?:/i.test(raw) ? undefined : await deps.robots.forUrl(raw, signal)
    const verdict = admit(raw, depth, compiled, robots)
    if (!verdict.ok) {
      const canonical = verdict.reason === 'robots' ? canonicalUrl(raw, { ignoreQuery: compiled.rules.ignoreQueryParameters }) : undefined
      if (canonical !== undefined && await store.markSeen(`robots:${seenKey(canonical, compiled.rules)}`)) out.robotsBlocked.push(canonical)
      continue
    }
    const entry = { url: verdict.url, depth }
    const claimed = await store.claim(seenKey(verdict.url, compiled.rules), entry, compiled.rules.limit)
    if (claimed === 'queued') out.queued.push(entry)
    if (claimed === 'full') { out.full = true; break }
  }
  return out
}

/** Whether links found on pages are followed (`sitemap: only` takes the sitemaps' URLs and the start URL only). */
export function followsLinks (compiled: CompiledRules): boolean {
  return compiled.rules.sitemap !== 'only'
}

/** The sitemaps a site names: its robots.txt `Sitemap:` lines, then `/sitemap.xml` of the start URL's origin. */
export async function sitemapRoots (start: string, robots: RobotsCache, signal: AbortSignal): Promise<string[]> {
  const origin = new URL(start).origin
  const view = await robots.forUrl(start, signal)
  return [...new Set([...view.sitemaps, `${origin}/sitemap.xml`])]
}

export interface SeedDeps extends OfferDeps {
  fetch: CrawlFetch
  sitemapLimits?: Partial<SitemapLimits>
}

/**
 * Seeds a job's frontier: the start URL at depth 0, then (unless `sitemap: skip`) every sitemap URL at depth 0.
 * The caller then takes entries from the store, fetches each page, and offers its links (extractLinks) at
 * depth + 1 while followsLinks() and the entry's depth is below maxDiscoveryDepth.
 */
export async function seed (deps: SeedDeps): Promise<OfferResult & { sitemaps?: SitemapDiscovery }> {
  const { compiled, signal } = deps
  const first = await offer([compiled.rules.start], 0, deps)
  if (compiled.rules.sitemap === 'skip' || first.full) return first
  const roots = await sitemapRoots(compiled.rules.start, deps.robots, signal)
  const sitemaps = await readSitemaps(roots, { fetch: deps.fetch, signal, ...(deps.sitemapLimits === undefined ? {} : { limits: deps.sitemapLimits }) })
  const rest = await offer(sitemaps.urls, 0, deps)
  return {
    queued: [...first.queued, ...rest.queued],
    robotsBlocked: [...first.robotsBlocked, ...rest.robotsBlocked],
    full: rest.full,
    sitemaps
  }
}

/** The frontier in memory (the embedded queue, and tests): a Set, an array and a counter. */
export function createMemoryFrontier (): FrontierStore & { readonly queue: FrontierEntry[], take (): FrontierEntry | undefined } {
  const seen = new Set<string>()
  const queue: FrontierEntry[] = []
  let counted = 0
  return {
    queue,
    async claim (key, entry, limit) {
      if (seen.has(key)) return 'seen'
      seen.add(key)
      if (counted >= limit) return 'full'
      counted++
      queue.push(entry)
      return 'queued'
    },
    async markSeen (key) {
      if (seen.has(key)) return false
      seen.add(key)
      return true
    },
    take: () => queue.shift()
  }
}
