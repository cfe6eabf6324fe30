// Site discovery and the crawl's rules (docs/crawl.md). Used by the Firecrawl map route (src/firecrawl/map.ts) and
// the crawl jobs (src/jobs/). A crawl job, in order:
//   1. rules = rulesFromRequest(body)            plain data, stored with the job (RuleError → 400)
//      compiled = compileRules(rules)            per process: RE2 patterns
//   2. robots = createRobotsCache({ fetch })     per job (and per process): robots.txt per origin, for `pagecast`
//   3. seed({ compiled, robots, store, fetch, signal })   start URL + sitemap URLs (unless `sitemap: skip`), depth 0
//   4. for each entry taken from the store: fetch the page (the scrape path), then, when followsLinks(compiled) and
//      the entry's depth < maxDiscoveryDepth (or no bound): offer(extractLinks(html, finalUrl), entry.depth + 1, …)
//   robotsBlocked URLs of every offer/seed go to the job's errors (`GET …/errors`), each once.
// FrontierStore is the job store's part: a seen set keyed by seenKey(), a queue of {url, depth}, a counter vs limit.
export type { CrawlRules, SitemapMode, RefusalReason, Admission, RobotsView, CrawlFetch } from './types.ts'
export { rulesFromRequest, compileRules, compilePattern, RuleError, DEFAULT_CRAWL_LIMIT, type CompiledRules, type RulesOptions } from './rules.ts'
export { admit } from './admit.ts'
export { canonicalUrl, seenKey, relationTo, registrableDomain, siteHost, startDirectory, MAX_URL_LENGTH, type Relation } from './url.ts'
export { createRobotsCache, parseRobots, robotsOutcome, ROBOTS_USER_AGENT, ALLOW_ALL, DISALLOW_ALL, type RobotsCache } from './robots.ts'
export { parseSitemap, readSitemaps, gunzipBounded, SITEMAP_LIMITS, type SitemapLimits, type SitemapDiscovery, type ParsedSitemap } from './sitemap.ts'
export { extractLinks, MAX_LINKS_PER_PAGE } from './links.ts'
export { offer, seed, followsLinks, sitemapRoots, createMemoryFrontier, type FrontierStore, type FrontierEntry, type ClaimResult, type OfferResult } from './frontier.ts'
