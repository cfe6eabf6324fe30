// Crawl discovery against the crawl fixture site over real loopback HTTP, through the real guarded client
// (src/net/http-client.ts): the crawl loop that src/crawl/index.ts describes (seed, fetch, keepFinal, offer of the
// page's links) with the memory frontier returns exactly the site's truth for each set of rules; hostile sitemaps
// (huge, endlessly nested, wide, gzip bombs as a file and as a transfer coding, a stalled one, a private address)
// are bounded.
import type http from 'node:http'
import { gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAddressGuard } from '../../src/net/guard.ts'
import { createHttpClient } from '../../src/net/http-client.ts'
import type { HttpClient } from '../../src/net/types.ts'
import {
  compileRules, createMemoryFrontier, createRobotsCache, extractLinks, followsLinks, keepFinal, offer, readSitemaps,
  rulesFromRequest, seed, SITEMAP_LIMITS
} from '../../src/crawl/index.ts'
import { startCrawlSite, type CrawlSite } from '../helpers/crawl-site.ts'
import { installLoopbackNet, type ConnectAttempt } from '../helpers/loopback-net.ts'

let site: CrawlSite
let client: HttpClient
const violations: ConnectAttempt[] = []
let uninstall: () => void

beforeAll(async () => {
  uninstall = installLoopbackNet({ violations })
  site = await startCrawlSite()
  const guard = createAddressGuard({ allowPrivateHosts: site.allowPrivateHosts.split(','), resolve: site.resolve })
  client = createHttpClient({ guard, userAgent: 'Mozilla/5.0 (compatible; pagecast)' })
})

afterAll(async () => {
  await client?.close()
  await site?.close()
  uninstall?.()
  expect(violations).toEqual([])
})

interface Crawled { pages: string[], robotsBlocked: string[], fetched: number }

/** The crawl loop of src/crawl/index.ts, with the memory frontier; pages are final URLs in the order fetched. */
async function crawl (body: Record<string, unknown>): Promise<Crawled> {
  const compiled = compileRules(rulesFromRequest({ url: `${site.origin}/`, ...body }))
  const fetch = client.fetchPage
  const store = createMemoryFrontier()
  const signal = AbortSignal.timeout(120_000)
  const deps = { compiled, robots: createRobotsCache({ fetch }), store, signal, fetch }
  const out: Crawled = { pages: [], robotsBlocked: [], fetched: 0 }
  out.robotsBlocked.push(...(await seed(deps)).robotsBlocked)
  const max = compiled.rules.maxDiscoveryDepth
  for (let entry = store.take(); entry !== undefined; entry = store.take()) {
    const page = await fetch(entry.url, { signal, maxBytes: 1024 * 1024 })
    out.fetched++
    if (page.statusCode >= 400 || !await keepFinal(entry, page.url, deps)) continue
    out.pages.push(page.url)
    if (!followsLinks(compiled) || (max !== undefined && entry.depth >= max)) continue
    const offered = await offer(extractLinks(page.body.toString('utf8'), page.url), entry.depth + 1, deps)
    out.robotsBlocked.push(...offered.robotsBlocked)
  }
  return out
}

const sorted = (list: string[]): string[] => [...list].sort()

describe('a crawl of the fixture site returns exactly what the rules allow, each page once', () => {
  it('everything but the trap: the 189 pages robots.txt allows, never a disallowed one', async () => {
    const result = await crawl({ excludePaths: ['^/cal/'], ignoreQueryParameters: true })
    expect(sorted(result.pages)).toEqual(sorted(site.truth.crawlAll))
    expect(result.pages).toHaveLength(189)
    expect(new Set(result.pages).size).toBe(result.pages.length)
    // The private index and the sitemap's /private/3 are reported; no private page was ever requested.
    expect(sorted(result.robotsBlocked)).toEqual(sorted(site.truth.disallowed.filter((u) => /\/private\/(3)?$/.test(u))))
    expect([...site.hits.keys()].filter((k) => k.startsWith('site.test /private'))).toEqual([])
  })

  it('maxDiscoveryDepth 1 and sitemap skip: home and what it links to; the redirect lands on /docs/1', async () => {
    const result = await crawl({ excludePaths: ['^/cal/'], sitemap: 'skip', maxDiscoveryDepth: 1, ignoreQueryParameters: true })
    expect(result.pages).toEqual(site.truth.crawlDepth1)
    expect(result.robotsBlocked).toEqual(site.truth.crawlDepth1Blocked)
  })

  it('sitemap only: the start URL and the sitemaps\' pages, no link followed', async () => {
    const result = await crawl({ sitemap: 'only' })
    expect(sorted(result.pages)).toEqual(sorted(site.truth.crawlSitemapOnly))
    expect(result.robotsBlocked).toEqual(site.truth.crawlSitemapOnlyBlocked)
  })

  it('the endless calendar is stopped by limit: exactly `limit` distinct pages, none disallowed', async () => {
    // /old/ is left out: a redirect onto a page already in the job is dropped, and its place under the limit is spent.
    const result = await crawl({ sitemap: 'skip', limit: 50, excludePaths: ['^/old/'] })
    expect(result.pages).toHaveLength(50)
    expect(new Set(result.pages).size).toBe(50)
    for (const url of result.pages) expect(site.truth.disallowed).not.toContain(url)
    expect(result.fetched).toBe(50)
    // Inside the trap only: 30 months, one after the other, then the limit.
    const trap = await crawl({ url: `${site.origin}/cal/2026/11`, sitemap: 'skip', limit: 30, crawlEntireDomain: true, includePaths: ['^/cal/'] })
    expect(trap.pages).toHaveLength(30)
    expect(trap.pages.at(-1)).toBe(`${site.origin}/cal/2029/4`)
  })

  it('the calendar alone, from its first month, is cut by maxDiscoveryDepth', async () => {
    const result = await crawl({ url: `${site.origin}/cal/2026/11`, sitemap: 'skip', maxDiscoveryDepth: 5, crawlEntireDomain: true, includePaths: ['^/cal/'] })
    expect(result.pages).toEqual(['/cal/2026/11', '/cal/2026/12', '/cal/2027/1', '/cal/2027/2', '/cal/2027/3', '/cal/2027/4'].map((p) => site.origin + p))
  })

  it('query parameters and www duplicates: without ignoreQueryParameters the variants count; deduplicateSimilarURLs folds www', async () => {
    const keep = await crawl({ includePaths: ['^/products/', '^/$'], excludePaths: ['^/cal/'], sitemap: 'skip', crawlEntireDomain: true })
    const products = keep.pages.filter((u) => u.includes('/products/'))
    // /products/ with ?ref=home, 40 leaves, 40 ?ref=list and 40 ?color=red variants, the index itself.
    expect(products).toHaveLength(1 + 1 + 40 * 3)
    const folded = await crawl({ includePaths: ['^/about$'], excludePaths: ['^/cal/'], sitemap: 'skip', crawlEntireDomain: true })
    // /about links http://www.site.test/about and /index.html: both are the same pages as /about and /.
    expect(folded.pages).toEqual([`${site.origin}/`, `${site.origin}/about`])
    const apart = await crawl({ includePaths: ['^/about$', '^/index\\.html$'], excludePaths: ['^/cal/'], sitemap: 'skip', crawlEntireDomain: true, deduplicateSimilarURLs: false })
    // Apart, each spelling is a page: www.site.test/about's own /index.html link too.
    const www = `http://www.site.test:${site.port}`
    expect(sorted(apart.pages)).toEqual(sorted([`${site.origin}/`, `${site.origin}/about`, `${site.origin}/index.html`, `${www}/about`, `${www}/index.html`]))
  })

  it('allowSubdomains and allowExternalLinks reach blog.site.test and the other port', async () => {
    const sub = await crawl({ includePaths: ['^/$', '^/s/'], sitemap: 'skip', maxDiscoveryDepth: 1, allowSubdomains: true })
    expect(sub.pages).toContain(`${site.sub}/`)
    expect(sub.pages.some((u) => u.startsWith(site.external))).toBe(false)
    const ext = await crawl({ includePaths: ['^/$', '^/ext/'], sitemap: 'skip', maxDiscoveryDepth: 1, allowExternalLinks: true })
    expect(ext.pages).toContain(`${site.external}/ext/1`)
  })
})

describe('hostile sitemaps are bounded', () => {
  const read = async (path: string, limits = {}, ms = 60_000): ReturnType<typeof readSitemaps> =>
    await readSitemaps([`${site.origin}${path}`], { fetch: client.fetchPage, signal: AbortSignal.timeout(ms), limits })
  const xml = (res: http.ServerResponse, body: string | Buffer, headers: Record<string, string> = {}): void => {
    res.writeHead(200, { 'content-type': 'application/xml', ...headers })
    res.end(body)
  }
  const entries = (n: number, from = 0): string => Array.from({ length: n }, (_, i) => `<url><loc>${site.origin}/h/${from + i}</loc></url>`).join('')

  it('a 24 MiB urlset is read up to maxBytes and maxUrls', async () => {
    const huge = `<urlset>${entries(400_000)}</urlset>`
    expect(huge.length).toBeGreaterThan(20 * 1024 * 1024)
    site.route('/huge.xml', (_req, res) => { xml(res, huge) })
    const result = await read('/huge.xml')
    expect(result.truncated).toBe(true)
    expect(result.urls.length).toBe(SITEMAP_LIMITS.maxUrls)
    const small = await read('/huge.xml', { maxBytes: 64 * 1024 })
    expect(small.truncated).toBe(true)
    expect(small.urls.length).toBeLessThan(64 * 1024 / 40)
    expect(small.urls.length).toBeGreaterThan(100)
  })

  it('an index that nests for ever stops at maxDepth; one listing 10,000 children stops at maxFiles', async () => {
    site.route('/nest.xml', (req, res) => {
      const n = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('n') ?? 0)
      xml(res, `<sitemapindex><sitemap><loc>${site.origin}/nest.xml?n=${n + 1}</loc></sitemap></sitemapindex>`)
    })
    const deep = await read('/nest.xml')
    expect(deep.truncated).toBe(true)
    expect(deep.files.map((f) => f.url)).toEqual([0, 1, 2, 3].map((n) => n === 0 ? `${site.origin}/nest.xml` : `${site.origin}/nest.xml?n=${n}`))
    site.route('/wide.xml', (_req, res) => {
      xml(res, `<sitemapindex>${Array.from({ length: 10_000 }, (_, i) => `<sitemap><loc>${site.origin}/child.xml?i=${i}</loc></sitemap>`).join('')}</sitemapindex>`)
    })
    site.route('/child.xml', (_req, res) => { xml(res, `<urlset>${entries(10)}</urlset>`) })
    const before = [...site.hits.keys()].filter((k) => k.startsWith('site.test /child.xml')).length
    const wide = await read('/wide.xml')
    const fetched = [...site.hits.keys()].filter((k) => k.startsWith('site.test /child.xml')).length - before
    expect(wide.truncated).toBe(true)
    expect(wide.files).toHaveLength(SITEMAP_LIMITS.maxFiles)
    expect(fetched).toBe(SITEMAP_LIMITS.maxFiles - 1)
  })

  it('gzip bombs, as a .xml.gz file and as a transfer coding, inflate no further than maxBytes', async () => {
    const inflated = `<urlset>${entries(1000)}${'<!-- padding -->'.repeat(4 * 1024 * 1024)}</urlset>`
    const bomb = gzipSync(inflated, { level: 9 })
    expect(inflated.length / bomb.length).toBeGreaterThan(200)
    site.route('/bomb.xml.gz', (_req, res) => { xml(res, bomb, { 'content-type': 'application/gzip' }) })
    site.route('/bomb.xml', (_req, res) => { xml(res, bomb, { 'content-encoding': 'gzip' }) })
    for (const path of ['/bomb.xml.gz', '/bomb.xml']) {
      const result = await read(path, { maxBytes: 1024 * 1024 })
      expect(result.truncated, path).toBe(true)
      expect(result.urls, path).toHaveLength(1000)
      expect(result.files[0]?.error, path).toBeUndefined()
    }
  })

  it('a sitemap that never finishes ends with the caller\'s deadline', async () => {
    site.route('/stall.xml', (_req, res) => { res.writeHead(200, { 'content-type': 'application/xml' }); res.write('<urlset>') })
    await expect(read('/stall.xml', {}, 1000)).rejects.toThrow()
  })

  it('a sitemap on a private address is refused by the guard before any connection (a pure address check)', async () => {
    site.route('/to-private.xml', (_req, res) => { xml(res, '<sitemapindex><sitemap><loc>http://10.9.8.7/sitemap.xml</loc></sitemap></sitemapindex>') })
    const result = await read('/to-private.xml')
    expect(result.files[1]).toMatchObject({ url: 'http://10.9.8.7/sitemap.xml', urls: 0 })
    expect(result.files[1]?.error).toMatch(/not allowed/)
    expect(result.urls).toEqual([])
  })
})
