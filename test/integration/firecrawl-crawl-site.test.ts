// A crawl job over the 200-page crawl fixture site (test/helpers/crawl-site.ts: robots.txt, sitemaps, loops,
// redirects, duplicates, an endless calendar, external links) through the real v2 SDK: exactly the pages the rules
// allow, compared with the site's hand-written truth, each fetched once, none robots.txt disallows, and `limit` obeyed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type Firecrawl from '@mendable/firecrawl-js'
import { startFirecrawlApp, type FirecrawlApp } from '../helpers/firecrawl.ts'
import { startCrawlSite, type CrawlSite } from '../helpers/crawl-site.ts'

let site: CrawlSite
let fc: FirecrawlApp
let v2: Firecrawl

beforeAll(async () => {
  site = await startCrawlSite()
  fc = await startFirecrawlApp({ ALLOW_PRIVATE_HOSTS: site.allowPrivateHosts, JOB_CONCURRENCY: '8' }, { resolve: site.resolve })
  v2 = fc.v2()
}, 60_000)

afterAll(async () => {
  await fc?.close()
  await site?.close()
})

/** What one list has that the other lacks, both ways: [] and [] when they hold the same URLs. */
function difference (got: string[], want: string[]): { missing: string[], extra: string[] } {
  return { missing: want.filter(u => !got.includes(u)), extra: got.filter(u => !want.includes(u)) }
}

const finalUrls = (docs: Array<{ metadata?: { url?: unknown } }>): string[] => docs.map(d => String(d.metadata?.url)).sort()

describe('crawl of the fixture site', () => {
  it('returns every page the rules allow, each once, none that robots.txt disallows', async () => {
    site.hits.clear()
    const job = await v2.crawl(`${site.origin}/`, { excludePaths: ['^/cal/'], ignoreQueryParameters: true, limit: 1000, pollInterval: 1, timeout: 300 })
    expect(job.status).toBe('completed')
    const finals = finalUrls(job.data)
    expect(difference(finals, site.truth.crawlAll)).toEqual({ missing: [], extra: [] })
    // Each final URL once: /docs/1, reached directly and through /old/1 → /docs/1, is returned once.
    expect(finals.filter((u, i) => finals.indexOf(u) !== i)).toEqual([])
    expect(job.total).toBe(site.truth.crawlAll.length)
    const pageHits = [...site.hits.entries()].filter(([k]) => !/robots\.txt|sitemap/.test(k))
    // Each URL fetched once; the redirect's target is fetched again by following /old/1 (which is then dropped).
    expect(pageHits.filter(([, n]) => n > 1).map(([k]) => k)).toEqual(['site.test /docs/1'])
    for (const url of site.truth.disallowed) expect(site.hits.has(`${new URL(url).host} ${new URL(url).pathname}`)).toBe(false)
  }, 320_000)

  it('maxDiscoveryDepth 1 without sitemaps: the final URLs and robots-blocked list of the truth', async () => {
    const rules = { sitemap: 'skip' as const, maxDiscoveryDepth: 1, excludePaths: ['^/cal/'], ignoreQueryParameters: true }
    const started = await v2.startCrawl(`${site.origin}/`, rules)
    const job = await v2.crawl(`${site.origin}/`, { ...rules, pollInterval: 1, timeout: 120 })
    // /old/1 → /docs/1 counts as /docs/1, once.
    expect(finalUrls(job.data)).toEqual([...site.truth.crawlDepth1].sort())
    for (let i = 0; i < 120 && (await v2.getCrawlStatus(started.id)).status === 'scraping'; i++) await new Promise(resolve => setTimeout(resolve, 500))
    expect((await v2.getCrawlErrors(started.id)).robotsBlocked.sort()).toEqual([...site.truth.crawlDepth1Blocked].sort())
  }, 150_000)

  it('maxDiscoveryDepth 1 with query parameters kept (Firecrawl\'s default): /products/?ref=home is a page of its own', async () => {
    const job = await v2.crawl(`${site.origin}/`, { sitemap: 'skip', maxDiscoveryDepth: 1, excludePaths: ['^/cal/'], pollInterval: 1, timeout: 120 })
    expect(finalUrls(job.data)).toEqual([...site.truth.crawlDepth1, `${site.origin}/products/?ref=home`].sort())
  }, 150_000)

  it('stops at `limit`, the endless calendar included', async () => {
    const job = await v2.crawl(`${site.origin}/cal/2026/11`, { limit: 25, crawlEntireDomain: true, sitemap: 'skip', pollInterval: 1, timeout: 120 })
    expect(job.status).toBe('completed')
    expect(job.total).toBe(25)
    expect(job.data.length).toBeLessThanOrEqual(25)
    const sources = job.data.map(d => String(d.metadata?.sourceURL))
    expect(new Set(sources).size).toBe(sources.length)
  }, 150_000)
})
