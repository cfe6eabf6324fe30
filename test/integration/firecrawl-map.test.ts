// The Firecrawl map (POST /v1|v2/map, docs/firecrawl.md#map) driven by the real @mendable/firecrawl-js clients,
// unchanged (v2 `Firecrawl.map`, v1 `FirecrawlAppV1.mapUrl`), against the crawl fixture site on loopback
// (test/helpers/crawl-site.ts): the answer is compared, in order, with the site's hand-written truth for each
// sitemap mode, search, limit, subdomains and query parameters; robots.txt is obeyed for `pagecast`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type Firecrawl from '@mendable/firecrawl-js'
import type { Built } from '../helpers/build.ts'
import { startFirecrawlApp, type FirecrawlApp } from '../helpers/firecrawl.ts'
import { startCrawlSite, type CrawlSite } from '../helpers/crawl-site.ts'

let site: CrawlSite
let fc: FirecrawlApp
let app: Built
let freeUrl: string
let v2: Firecrawl

beforeAll(async () => {
  site = await startCrawlSite()
  fc = await startFirecrawlApp({ ALLOW_PRIVATE_HOSTS: site.allowPrivateHosts, FREE_DAILY_LIMIT: '1000' }, { resolve: site.resolve })
  ;({ app, freeUrl } = fc)
  v2 = fc.v2()
}, 60_000)

afterAll(async () => {
  await fc?.close()
  await site?.close()
})

const urls = (links: Array<{ url: string }>): string[] => links.map((l) => l.url)

describe('v2 client (Firecrawl.map)', () => {
  it('sitemap include (the default): the start page, its links, then every sitemap URL, in order, each once', async () => {
    const result = await v2.map(`${site.origin}/`)
    expect(urls(result.links)).toEqual(site.truth.mapInclude)
    expect(result.links.length).toBe(180)
  })

  it('sitemap only: robots.txt Sitemap line, /sitemap.xml, the nested index and the gzipped child, in reading order', async () => {
    const result = await v2.map(site.origin, { sitemap: 'only' })
    expect(urls(result.links)).toEqual(site.truth.mapOnly)
  })

  it('sitemap skip: the start page and its links only; the sitemaps are not fetched', async () => {
    const before = site.hits.get('site.test /sitemap-index.xml') ?? 0
    const result = await v2.map(`${site.origin}/`, { sitemap: 'skip' })
    expect(urls(result.links)).toEqual(site.truth.mapSkip)
    expect(site.hits.get('site.test /sitemap-index.xml') ?? 0).toBe(before)
  })

  it('never lists what robots.txt refuses to pagecast, nor another site', async () => {
    const result = urls((await v2.map(`${site.origin}/`)).links)
    for (const url of site.truth.disallowed) expect(result).not.toContain(url)
    expect(result.some((u) => u.startsWith(site.external))).toBe(false)
    // The `*` group (Disallow: /) is not ours: everything else is listed.
    expect(result).toContain(`${site.origin}/docs/1`)
  })

  it('search keeps the URLs containing every word, in the same order', async () => {
    const result = await v2.map(`${site.origin}/`, { search: 'ORPHAN' })
    expect(urls(result.links)).toEqual(site.truth.mapInclude.filter((u) => u.includes('/orphan/')))
    const two = await v2.map(`${site.origin}/`, { search: 'blog 4' })
    expect(urls(two.links)).toEqual(site.truth.mapInclude.filter((u) => u.includes('blog') && u.includes('4')))
  })

  it('limit keeps the first URLs', async () => {
    const result = await v2.map(`${site.origin}/`, { limit: 10 })
    expect(urls(result.links)).toEqual(site.truth.mapInclude.slice(0, 10))
    const searched = await v2.map(`${site.origin}/`, { search: 'docs', limit: 3 })
    expect(urls(searched.links)).toEqual(site.truth.mapInclude.filter((u) => u.includes('docs')).slice(0, 3))
  })

  it('includeSubdomains: false leaves blog.site.test out', async () => {
    const result = await v2.map(`${site.origin}/`, { includeSubdomains: false })
    expect(urls(result.links)).toEqual(site.truth.mapInclude.filter((u) => !u.startsWith(site.sub)))
    expect(site.truth.mapInclude.filter((u) => u.startsWith(site.sub)).length).toBe(2)
  })

  it('ignoreQueryParameters: false keeps a URL that differs by its query', async () => {
    const result = await v2.map(`${site.origin}/`, { sitemap: 'skip', ignoreQueryParameters: false })
    const expected = [...site.truth.mapSkip]
    expected.splice(expected.indexOf(`${site.origin}/old/1`) + 1, 0, `${site.origin}/products/?ref=home`)
    expect(urls(result.links)).toEqual(expected)
  })

  it('works on the free listener without a key', async () => {
    const free = fc.v2('anything', freeUrl)
    expect(urls((await free.map(`${site.origin}/`, { sitemap: 'skip' })).links)).toEqual(site.truth.mapSkip)
  })
})

describe('v1 client (FirecrawlAppV1.mapUrl)', () => {
  it('answers links as strings; ignoreSitemap and sitemapOnly are v1 names of sitemap skip and only', async () => {
    const v1 = fc.v1()
    const all = await v1.mapUrl(`${site.origin}/`, {})
    expect(all).toMatchObject({ success: true })
    expect((all as { links: string[] }).links).toEqual(site.truth.mapInclude)
    const skip = await v1.mapUrl(`${site.origin}/`, { ignoreSitemap: true })
    expect((skip as { links: string[] }).links).toEqual(site.truth.mapSkip)
    const only = await v1.mapUrl(`${site.origin}/`, { sitemapOnly: true })
    expect((only as { links: string[] }).links).toEqual(site.truth.mapOnly)
  })
})

describe('errors (the Firecrawl envelope)', () => {
  async function post (path: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number, body: Record<string, unknown> }> {
    const res = await app.pro.inject({ method: 'POST', url: path, headers: { 'content-type': 'application/json', authorization: 'Bearer fc-key', ...headers }, payload: JSON.stringify(body) })
    return { status: res.statusCode, body: res.json() }
  }

  it('refuses a bad body with 400 naming what is wrong', async () => {
    const missing = await post('/v2/map', {})
    expect(missing.status).toBe(400)
    expect(missing.body).toMatchObject({ success: false, code: 'EINVALQUERY' })
    expect(String(missing.body.error)).toMatch(/url/)
    const mode = await post('/v2/map', { url: site.origin, sitemap: 'sometimes' })
    expect(mode.status).toBe(400)
    expect(String(mode.body.error)).toMatch(/sitemap/)
    const limit = await post('/v1/map', { url: site.origin, limit: 0 })
    expect(limit.status).toBe(400)
    const scheme = await post('/v2/map', { url: 'ftp://site.test/' })
    expect(scheme).toMatchObject({ status: 400, body: { success: false, code: 'EINVALQUERY' } })
  })

  it('refuses a private address before any connection (a pure address check)', async () => {
    const res = await post('/v2/map', { url: 'http://10.1.2.3/' })
    expect(res).toMatchObject({ status: 400, body: { success: false, code: 'EFORBIDDENURL' } })
  })

  it('401 on the pro listener without a key', async () => {
    const res = await post('/v2/map', { url: site.origin }, { authorization: '' })
    expect(res).toMatchObject({ status: 401, body: { success: false, error: 'Unauthorized' } })
  })

  it('a doubled slash after the host reaches the route', async () => {
    const res = await post('//v2/map', { url: site.origin, sitemap: 'skip' })
    expect(res.status).toBe(200)
    expect((res.body.links as Array<{ url: string }>).map((l) => l.url)).toEqual(site.truth.mapSkip)
  })
})
