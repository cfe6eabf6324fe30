// Discovery's pure parts (src/crawl/robots.ts, sitemap.ts, links.ts, frontier.ts): robots.txt as a view for
// `pagecast`, sitemap documents of every kind and their bounds, bounded gunzip, page links, the memory frontier.
import { gzipSync } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { createMemoryFrontier, extractLinks, gunzipBounded, parseRobots, parseSitemap, robotsOutcome } from '../../src/crawl/index.ts'

describe('robots.txt', () => {
  const text = [
    'User-agent: Googlebot', 'Disallow: /', '',
    'User-agent: PageCast', 'Disallow: /private/', 'Allow: /private/open', 'Disallow: /*.pdf$', 'Crawl-delay: 2', '',
    'User-agent: *', 'Disallow: /', '',
    'Sitemap: https://a.test/s1.xml', 'Sitemap: /relative.xml', 'Sitemap: ftp://a.test/s.xml'
  ].join('\n')
  const view = parseRobots('https://a.test/robots.txt', text)

  it('follows the pagecast group (case-insensitive), not *: longest match, Allow on a tie, * and $', () => {
    expect(view.allows('https://a.test/')).toBe(true)
    expect(view.allows('https://a.test/private/x')).toBe(false)
    expect(view.allows('https://a.test/private/open/1')).toBe(true)
    expect(view.allows('https://a.test/docs/a.pdf')).toBe(false)
    expect(view.allows('https://a.test/docs/a.pdf?x')).toBe(true)
    expect(view.crawlDelay).toBe(2)
  })

  it('keeps absolute http(s) Sitemap lines', () => {
    expect(view.sitemaps).toEqual(['https://a.test/s1.xml'])
  })

  it('without a pagecast group, * applies; an empty file allows all', () => {
    const star = parseRobots('https://a.test/robots.txt', 'User-agent: *\nDisallow: /x\n')
    expect(star.allows('https://a.test/x/1')).toBe(false)
    expect(star.allows('https://a.test/y')).toBe(true)
    expect(parseRobots('https://a.test/robots.txt', '').allows('https://a.test/x')).toBe(true)
  })

  it('status: 2xx read, 4xx no rules, 5xx refuse everything (RFC 9309)', () => {
    expect([200, 204, 404, 403, 410, 500, 503].map(robotsOutcome)).toEqual(['parse', 'parse', 'allow-all', 'allow-all', 'allow-all', 'disallow-all', 'disallow-all'])
  })
})

describe('parseSitemap', () => {
  it('reads a urlset: <loc> of <url> only, entities decoded, whitespace trimmed, namespaced tags', () => {
    const xml = `<?xml version="1.0"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="x">
      <url><loc>
        https://a.test/1 </loc><image:image><image:loc>https://a.test/img.png</image:loc></image:image></url>
      <url><loc>https://a.test/2?a=1&amp;b=2</loc></url>
      <url><loc>javascript:alert(1)</loc></url>
      <url><loc><![CDATA[https://a.test/3]]></loc></url>
    </urlset>`
    expect(parseSitemap(xml)).toEqual({ kind: 'urlset', locs: ['https://a.test/1', 'https://a.test/2?a=1&b=2', 'https://a.test/3'], truncated: false })
  })

  it('reads an index, with a prefix on the tags and a BOM', () => {
    const xml = '\uFEFF<sm:sitemapindex xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9"><sm:sitemap><sm:loc>https://a.test/a.xml</sm:loc></sm:sitemap></sm:sitemapindex>'
    expect(parseSitemap(xml)).toEqual({ kind: 'index', locs: ['https://a.test/a.xml'], truncated: false })
  })

  it('reads a text sitemap, one URL per line', () => {
    expect(parseSitemap('https://a.test/1\r\n\nnot a url\nhttps://a.test/2')).toEqual({ kind: 'text', locs: ['https://a.test/1', 'https://a.test/2'], truncated: false })
  })

  it('keeps at most maxEntries, and no <loc> longer than a URL may be', () => {
    const xml = `<urlset>${Array.from({ length: 100 }, (_, i) => `<url><loc>https://a.test/${i}</loc></url>`).join('')}<url><loc>https://a.test/${'x'.repeat(10_000)}</loc></url></urlset>`
    const parsed = parseSitemap(xml, 10)
    expect(parsed.locs).toHaveLength(10)
    expect(parsed.truncated).toBe(true)
    expect(parseSitemap(xml).locs).toHaveLength(100)
  })

  it('survives broken and hostile markup: unclosed tags, deep nesting, no root', () => {
    expect(parseSitemap('<urlset><url><loc>https://a.test/1</loc>').locs).toEqual(['https://a.test/1'])
    const deep = `<urlset>${'<x>'.repeat(100_000)}<url><loc>https://a.test/deep</loc></url></urlset>`
    expect(parseSitemap(deep).locs).toEqual([])
    expect(parseSitemap('<html><body><a href="https://a.test/">x</a></body></html>')).toEqual({ kind: 'unknown', locs: [], truncated: false })
  })
})

describe('gunzipBounded', () => {
  it('inflates within the bound', async () => {
    const out = await gunzipBounded(gzipSync('hello sitemap'), 1024)
    expect(out).toEqual({ body: Buffer.from('hello sitemap'), truncated: false })
  })

  it('stops a gzip bomb at the bound: 64 MiB of zeros in a 64 KiB file gives 1 MiB', async () => {
    const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024), { level: 9 })
    expect(bomb.length).toBeLessThan(128 * 1024)
    const before = process.memoryUsage().arrayBuffers
    const out = await gunzipBounded(bomb, 1024 * 1024)
    expect(out.truncated).toBe(true)
    expect(out.body.length).toBe(1024 * 1024)
    // Far below what inflating it all would hold (a wide margin for the allocator).
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(32 * 1024 * 1024)
  })

  it('a corrupt stream gives what decoded before the fault', async () => {
    const good = gzipSync(Buffer.from('x'.repeat(100_000)))
    const cut = good.subarray(0, Math.floor(good.length / 2))
    const out = await gunzipBounded(cut, 1024 * 1024)
    expect(out.body.length).toBeLessThanOrEqual(100_000)
    expect(out.truncated).toBe(false)
  })
})

describe('extractLinks', () => {
  it('a and area hrefs, resolved against the first <base>, http(s) only, no fragments, each once, in order', () => {
    const html = `<html><head><base href="/docs/"><base href="/ignored/"></head><body>
      <a href="a">A</a><a href="a#top">again</a><A HREF="/b?x=1&amp;y=2">B</A><area href="https://other.test/c">
      <a href="mailto:x@y.z">m</a><a href="javascript:void(0)">j</a><a href="#frag">f</a><a>no href</a>
      <link rel="next" href="/not-a-link"><a href=" //cdn.test/d ">D</a></body></html>`
    expect(extractLinks(html, 'http://site.test/page')).toEqual([
      'http://site.test/docs/a', 'http://site.test/b?x=1&y=2', 'https://other.test/c', 'http://site.test/docs/', 'http://cdn.test/d'
    ])
  })

  it('stays linear on 200,000 unclosed elements (htmlparser2\'s Parser would take 10^10 steps)', () => {
    const html = `${'<div>'.repeat(200_000)}<a href="/deep">x</a>`
    expect(extractLinks(html, 'http://site.test/')).toEqual(['http://site.test/deep'])
  })

  it('keeps at most max links', () => {
    const html = Array.from({ length: 50 }, (_, i) => `<a href="/p/${i}">x</a>`).join('')
    expect(extractLinks(html, 'http://site.test/', 7)).toHaveLength(7)
  })
})

describe('memory frontier', () => {
  it('claims each key once, queues in order, and stops at the limit; markSeen is separate from the count', async () => {
    const f = createMemoryFrontier()
    expect(await f.claim('a', { url: 'http://t/a', depth: 0 }, 2)).toBe('queued')
    expect(await f.claim('a', { url: 'http://t/a', depth: 1 }, 2)).toBe('seen')
    expect(await f.markSeen('r')).toBe(true)
    expect(await f.markSeen('r')).toBe(false)
    expect(await f.claim('b', { url: 'http://t/b', depth: 1 }, 2)).toBe('queued')
    expect(await f.claim('c', { url: 'http://t/c', depth: 1 }, 2)).toBe('full')
    expect(f.take()).toEqual({ url: 'http://t/a', depth: 0 })
    expect(f.take()).toEqual({ url: 'http://t/b', depth: 1 })
    expect(f.take()).toBeUndefined()
  })
})
