// The crawl's rules, pure (src/crawl/url.ts, rules.ts, admit.ts): URL identity, the request's names and bounds, and
// admit()'s verdict for each rule, with robots.txt given as a parsed view.
import { describe, expect, it } from 'vitest'
import { admit, canonicalUrl, compileRules, parseRobots, relationTo, RuleError, rulesFromRequest, seenKey, startDirectory } from '../../src/crawl/index.ts'
import type { CrawlRules } from '../../src/crawl/index.ts'

const START = 'http://site.test:8080/blog/'
const rules = (body: Record<string, unknown> = {}): CrawlRules => rulesFromRequest({ url: START, ...body })
const compiled = (body: Record<string, unknown> = {}): ReturnType<typeof compileRules> => compileRules(rules(body))
const robots = parseRobots('http://site.test:8080/robots.txt', 'User-agent: pagecast\nDisallow: /blog/secret\n\nUser-agent: *\nDisallow: /\n')

describe('canonicalUrl and seenKey', () => {
  it('drops the fragment, credentials and the default port, lower-cases the host, resolves against a base', () => {
    expect(canonicalUrl('HTTP://User:pw@Site.TEST:80/a/b?x=1#frag')).toBe('http://site.test/a/b?x=1')
    expect(canonicalUrl('https://site.test:443/')).toBe('https://site.test/')
    expect(canonicalUrl('../c#x', { base: 'http://site.test/a/b/' })).toBe('http://site.test/a/c')
    expect(canonicalUrl('/a?x=1&y=2', { base: 'http://site.test/', ignoreQuery: true })).toBe('http://site.test/a')
  })

  it('refuses what is not http(s), and overlong URLs', () => {
    for (const bad of ['mailto:a@b.c', 'javascript:void(0)', 'ftp://site.test/', 'data:text/html,x', 'not a url']) expect(canonicalUrl(bad)).toBeUndefined()
    expect(canonicalUrl(`http://site.test/${'a'.repeat(9000)}`)).toBeUndefined()
  })

  it('a trailing slash makes no difference to the key; the scheme, www and index files only with deduplicateSimilarURLs', () => {
    const exact = { deduplicateSimilarURLs: false }
    const similar = { deduplicateSimilarURLs: true }
    expect(seenKey('http://site.test/a/', exact)).toBe(seenKey('http://site.test/a', exact))
    expect(seenKey('http://site.test/', exact)).toBe('http://site.test/')
    expect(seenKey('https://site.test/a', exact)).not.toBe(seenKey('http://site.test/a', exact))
    expect(seenKey('http://www.site.test/a', exact)).not.toBe(seenKey('http://site.test/a', exact))
    expect(seenKey('https://www.site.test/a/index.html', similar)).toBe(seenKey('http://site.test/a/', similar))
    expect(seenKey('http://site.test/index.php', similar)).toBe(seenKey('http://site.test/', similar))
    // The query still counts (ignoreQueryParameters removes it before the key).
    expect(seenKey('http://site.test/a?x=1', similar)).not.toBe(seenKey('http://site.test/a', similar))
    // Another port is another server, whatever the rules.
    expect(seenKey('http://site.test:81/a', similar)).not.toBe(seenKey('http://site.test:82/a', similar))
  })

  it('relations: same host (www and scheme aside), subdomain of the registrable domain, or external (another port too)', () => {
    const start = new URL('http://site.test:8080/')
    expect(relationTo(start, new URL('http://www.site.test:8080/x'))).toBe('same')
    expect(relationTo(new URL('http://example.com/'), new URL('https://example.com/x'))).toBe('same')
    expect(relationTo(start, new URL('http://blog.site.test:8080/'))).toBe('subdomain')
    expect(relationTo(start, new URL('http://site.test:9090/'))).toBe('external')
    expect(relationTo(start, new URL('http://othersite.test:8080/'))).toBe('external')
    expect(relationTo(start, new URL('http://notsite.test:8080/'))).toBe('external')
    expect(relationTo(new URL('http://127.0.0.1:1/'), new URL('http://127.0.0.2:1/'))).toBe('external')
    expect(startDirectory(new URL('http://a.test/blog/post'))).toBe('/blog/')
    expect(startDirectory(new URL('http://a.test'))).toBe('/')
  })
})

describe('rulesFromRequest', () => {
  it('takes v2 names with Firecrawl defaults', () => {
    expect(rules()).toEqual({
      start: START,
      includePaths: [],
      excludePaths: [],
      regexOnFullURL: false,
      maxDiscoveryDepth: undefined,
      limit: 10_000,
      crawlEntireDomain: false,
      allowSubdomains: false,
      allowExternalLinks: false,
      sitemap: 'include',
      ignoreQueryParameters: false,
      deduplicateSimilarURLs: true,
      ignoreRobotsTxt: false
    })
  })

  it('maps v1 names: maxDepth, ignoreSitemap, allowBackwardLinks', () => {
    expect(rules({ maxDepth: 2, ignoreSitemap: true, allowBackwardLinks: true })).toMatchObject({ maxDiscoveryDepth: 2, sitemap: 'skip', crawlEntireDomain: true })
    expect(rules({ maxDiscoveryDepth: 1, maxDepth: 5, sitemap: 'only', ignoreSitemap: true })).toMatchObject({ maxDiscoveryDepth: 1, sitemap: 'only' })
  })

  it('refuses bad values with a RuleError naming the field', () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ url: undefined }, 'url'],
      [{ url: 'ftp://x.test/' }, 'url'],
      [{ limit: 0 }, 'limit'],
      [{ limit: 10_001 }, 'limit'],
      [{ limit: 1.5 }, 'limit'],
      [{ maxDiscoveryDepth: -1 }, 'maxDiscoveryDepth'],
      [{ sitemap: 'sometimes' }, 'sitemap'],
      [{ allowSubdomains: 'yes' }, 'allowSubdomains'],
      [{ includePaths: '^/a' }, 'includePaths'],
      [{ includePaths: Array(101).fill('a') }, 'includePaths'],
      [{ excludePaths: ['(?=x)'] }, 'excludePaths[0]'],
      [{ excludePaths: ['ok', '(a)\\1'] }, 'excludePaths[1]'],
      [{ includePaths: ['('] }, 'includePaths[0]']
    ]
    for (const [body, field] of cases) {
      let thrown: unknown
      try { rulesFromRequest({ url: START, ...body }) } catch (err) { thrown = err }
      expect(thrown, JSON.stringify(body)).toBeInstanceOf(RuleError)
      expect((thrown as RuleError).field).toBe(field)
    }
    expect(rulesFromRequest({ url: START, limit: 50 }, { maxLimit: 50 }).limit).toBe(50)
    expect(() => rulesFromRequest({ url: START, limit: 51 }, { maxLimit: 50 })).toThrow(RuleError)
  })

  it('runs patterns on RE2: a pattern that backtracks for ever in RegExp is linear here', () => {
    const c = compiled({ includePaths: ['(a+)+$'] })
    const path = `/blog/${'a'.repeat(8000)}!`
    const t0 = performance.now()
    expect(admit(`http://site.test:8080${path}`, 1, c)).toEqual({ ok: false, reason: 'not-included' })
    // RegExp would take longer than the age of the universe; RE2 is linear. A wide margin for a loaded machine.
    expect(performance.now() - t0).toBeLessThan(5000)
  })
})

describe('admit', () => {
  const at = (path: string): string => `http://site.test:8080${path}`

  it('admits the start URL and links under its directory, canonical', () => {
    expect(admit(START, 0, compiled(), robots)).toEqual({ ok: true, url: START })
    expect(admit('post-1#comments', 1, compiled(), robots, START)).toEqual({ ok: true, url: at('/blog/post-1') })
  })

  it('each rule gives its reason, in order', () => {
    expect(admit('mailto:a@b.c', 1, compiled())).toEqual({ ok: false, reason: 'invalid' })
    expect(admit('http://other.test/blog/x', 1, compiled())).toEqual({ ok: false, reason: 'external' })
    expect(admit('http://site.test:9999/blog/x', 1, compiled())).toEqual({ ok: false, reason: 'external' })
    expect(admit('http://blog.site.test:8080/blog/x', 1, compiled())).toEqual({ ok: false, reason: 'subdomain' })
    expect(admit(at('/about'), 1, compiled())).toEqual({ ok: false, reason: 'outside' })
    expect(admit(at('/blog/x'), 3, compiled({ maxDiscoveryDepth: 2 }))).toEqual({ ok: false, reason: 'depth' })
    expect(admit(at('/blog/x'), 2, compiled({ maxDiscoveryDepth: 2 }))).toMatchObject({ ok: true })
    expect(admit(at('/blog/tag/x'), 1, compiled({ excludePaths: ['^/blog/tag/'] }))).toEqual({ ok: false, reason: 'excluded' })
    expect(admit(at('/blog/x'), 1, compiled({ includePaths: ['^/blog/\\d+$'] }))).toEqual({ ok: false, reason: 'not-included' })
    expect(admit(at('/blog/42'), 1, compiled({ includePaths: ['^/blog/\\d+$'] }))).toMatchObject({ ok: true })
    expect(admit(at('/blog/secret/1'), 1, compiled(), robots)).toEqual({ ok: false, reason: 'robots' })
    // A URL refused by a rule is not reported as robots-blocked, even where robots.txt refuses it too.
    expect(admit(at('/blog/secret/1'), 1, compiled({ excludePaths: ['secret'] }), robots)).toEqual({ ok: false, reason: 'excluded' })
  })

  it('exclude wins over include; patterns test the path, or the whole URL with regexOnFullURL', () => {
    const both = compiled({ includePaths: ['^/blog/'], excludePaths: ['draft'] })
    expect(admit(at('/blog/draft-1'), 1, both)).toEqual({ ok: false, reason: 'excluded' })
    expect(admit(at('/blog/x?draft=1'), 1, both)).toMatchObject({ ok: true })
    expect(admit(at('/blog/x?draft=1'), 1, compiled({ excludePaths: ['draft'], regexOnFullURL: true }))).toEqual({ ok: false, reason: 'excluded' })
    expect(admit(at('/blog/x'), 1, compiled({ includePaths: ['^http://site\\.test:8080/blog/'], regexOnFullURL: true }))).toMatchObject({ ok: true })
  })

  it('the start URL is bound by robots.txt only', () => {
    const c = compiled({ includePaths: ['^/nothing$'], excludePaths: ['blog'], maxDiscoveryDepth: 0 })
    expect(admit(START, 0, c, robots)).toEqual({ ok: true, url: START })
    const blocked = compileRules(rulesFromRequest({ url: at('/blog/secret/') }))
    expect(admit(at('/blog/secret/'), 0, blocked, robots)).toEqual({ ok: false, reason: 'robots' })
  })

  it('crawlEntireDomain, allowSubdomains, allowExternalLinks open the site checks', () => {
    expect(admit(at('/about'), 1, compiled({ crawlEntireDomain: true }))).toMatchObject({ ok: true })
    expect(admit('http://blog.site.test:8080/', 1, compiled({ allowSubdomains: true }))).toMatchObject({ ok: true })
    expect(admit('http://other.test/', 1, compiled({ allowSubdomains: true }))).toEqual({ ok: false, reason: 'external' })
    expect(admit('http://other.test/', 1, compiled({ allowExternalLinks: true }))).toMatchObject({ ok: true })
    // Subdomains and other sites are not bound to the start URL's directory.
    expect(admit('http://blog.site.test:8080/x', 1, compiled({ allowSubdomains: true }))).toMatchObject({ ok: true })
  })

  it('ignoreQueryParameters drops the query; ignoreRobotsTxt drops robots.txt', () => {
    expect(admit(at('/blog/x?utm=1'), 1, compiled({ ignoreQueryParameters: true }))).toEqual({ ok: true, url: at('/blog/x') })
    expect(admit(at('/blog/x?utm=1'), 1, compiled())).toEqual({ ok: true, url: at('/blog/x?utm=1') })
    expect(admit(at('/blog/secret/1'), 1, compiled({ ignoreRobotsTxt: true }), robots)).toMatchObject({ ok: true })
  })
})
