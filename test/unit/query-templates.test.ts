import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { parseQuery, type ParseContext } from '../../src/schemas/query.ts'
import { cacheKeyOf } from '../../src/cache/key.ts'
import { createQueryTemplates, splitUrl, type QueryTemplates } from '../../src/query/templates.ts'
import { contentQuery } from '../../src/schemas/content-query.ts'

const PRO: ParseContext = { plan: 'pro', headers: {}, maxTimeout: 28_000 }

/** What parseQuery and cacheKeyOf say of `raw`, or undefined when it is refused. */
function full (raw: string, ctx: ParseContext): { options: object, cacheKey: string } | undefined {
  try {
    const options = parseQuery(raw, ctx)
    return { options, cacheKey: cacheKeyOf(options) }
  } catch {
    return undefined
  }
}

/** The template's answer is parseQuery's, member order included, and its key cacheKeyOf's; none for a refused query. */
function expectSame (templates: QueryTemplates, raw: string, ctx: ParseContext): boolean {
  const got = templates(raw, ctx)
  const want = full(raw, ctx)
  if (got === undefined) return false
  expect(want, raw).toBeDefined()
  expect(got.options).toEqual(want!.options)
  expect(Object.keys(got.options)).toEqual(Object.keys(want!.options))
  expect(got.cacheKey).toBe(want!.cacheKey)
  expect(Object.isFrozen(got.options)).toBe(true)
  return true
}

const URLS = [
  'https%3A%2F%2Fexample.com%2F', 'https://example.com/a?b=c', 'http%3A%2F%2F127.0.0.1%3A4000%2Farticle%2F%3Fmd%3D5',
  '%20https%3A%2F%2FExample.COM%2Fa%20b%20', 'https://example.com/a+b', 'ftp%3A%2F%2Fx', 'http%3A%2F%2F', '', 'not+a+url',
  '%', '%E2%82', '%ud800', 'https%3A%2F%2Fexample.com%2F%E6%97%A5', 'https%3A%2F%2Fu%3Ap%40example.com%3A8080%2F%23frag'
]

describe('query templates', () => {
  it('split a query into its url and the rest only when no other key can name url', () => {
    expect(splitUrl('url=a&meta=false&data.x.selector=h1')).toEqual({ value: 'a', rest: 'meta=false&data.x.selector=h1' })
    expect(splitUrl('?meta=false&url=a=b&&embed=x')).toEqual({ value: 'a=b', rest: 'meta=false&embed=x' })
    for (const raw of ['meta=false', 'url', 'url=a&url=b', 'url=a&URL=b', 'url=a&u_rl=b', 'url=a&U-R-L.x=b', 'url=a&url.x=b',
      'url=a&u%72l=b', 'url=a&+url=b', 'url=a&me%74a=false', 'u%72l=a&meta=false']) {
      expect(splitUrl(raw), raw).toBeUndefined()
    }
  })

  it('give what parseQuery gives for the queries the service sees, each URL after the first from the template', () => {
    const templates = createQueryTemplates()
    const rests = [
      '', 'prerender=false', 'meta=false&screenshot&screenshot.fullPage=true&viewport.width=300', 'force&ttl=1d&staleTtl=1h',
      'headers.cookie=a&proxy=http%3A%2F%2Fu%3Ap%40h%3A1&filter=title,url', 'function=(%7B%20page%20%7D)%20%3D%3E%20page.url()&args.a=1',
      'data.items.selectorAll=.item&data.items.attr.href.selector=a&data.items.attr.href.attr=href&embed=items',
      'meta.url=false&meta.title=true', 'stream=screenshot&screenshot', 'waitUntil=load,networkidle0&timeout=5s',
      'meta=false&data.x=%5B%7B%22selector%22%3A%22h1%22%7D%5D'
    ]
    let used = 0
    for (const rest of rests) {
      for (const url of URLS) {
        for (const raw of [`url=${url}${rest === '' ? '' : '&'}${rest}`, `${rest}${rest === '' ? '' : '&'}url=${url}`]) {
          if (expectSame(templates, raw, PRO)) used++
          if (expectSame(templates, raw, { ...PRO, plan: 'free' })) used++
        }
      }
    }
    // The content endpoints' queries (`/markdown?url=...`) too.
    for (const url of URLS) if (expectSame(templates, contentQuery(`url=${url}&prerender=false`, 'markdown'), PRO)) used++
    expect(used).toBeGreaterThan(200)
  })

  it('keep forwarded x-api-header-* values apart, whatever their case', () => {
    const templates = createQueryTemplates()
    const a = { ...PRO, headers: { 'x-api-header-cookie': 'a' } }
    const b = { ...PRO, headers: { 'X-Api-Header-Cookie': 'b' } }
    expect(expectSame(templates, 'url=https%3A%2F%2Fexample.com%2F', a)).toBe(true)
    expect(expectSame(templates, 'url=https%3A%2F%2Fexample.com%2F', b)).toBe(true)
    expect(templates('url=https%3A%2F%2Fexample.com%2F', a)!.cacheKey).not.toBe(templates('url=https%3A%2F%2Fexample.com%2F', b)!.cacheKey)
  })

  it('agree with parseQuery on arbitrary queries with a url among literal keys', () => {
    const templates = createQueryTemplates()
    const KEYS = ['meta', 'meta.title', 'meta.url', 'data.x.selector', 'data.x.attr', 'data.x', 'embed', 'stream', 'filter', 'screenshot',
      'screenshot.type', 'pdf', 'palette', 'ping', 'ping.image', 'prerender', 'timeout', 'ttl', 'staleTtl', 'force', 'headers.cookie',
      'headers.user_agent', 'proxy', 'function', 'args.v', 'device', 'viewport.width', 'color_scheme', 'waitUntil', 'click', 'cacheKey',
      'path', 'urls', 'uri', 'href', 'link', 'x', '__proto__', 'constructor.prototype.x', '0', 'data.0']
    const VALUES = ['', 'true', 'false', '1', '0', '-1', '5s', 'h1', '.a', 'jpg', 'x', 'https%3A%2F%2Fexample.com%2F',
      '%5B%7B%22selector%22%3A%22h1%22%7D%5D', '%7B%7D', '(%7B%20page%20%7D)%20%3D%3E%201', 'http%3A%2F%2Fu%3Ap%40h%3A1', '%', 'a+b']
    const pair = fc.tuple(fc.constantFrom(...KEYS), fc.constantFrom(...VALUES), fc.boolean())
      .map(([k, v, bare]) => bare && v === '' ? k : `${k}=${v}`)
    const query = fc.tuple(fc.array(pair, { maxLength: 8 }), fc.constantFrom(...URLS), fc.nat(8))
      .map(([pairs, url, at]) => [...pairs.slice(0, at), `url=${url}`, ...pairs.slice(at)].join('&'))
    const context: fc.Arbitrary<ParseContext> = fc.record({
      plan: fc.constantFrom('free' as const, 'pro' as const),
      headers: fc.constantFrom({}, { 'x-api-header-cookie': 'c' }, { 'X-Api-Header-DNT': ['1', '2'] }, { 'x-other': 'y' }),
      maxTimeout: fc.constantFrom(28_000, 5000)
    })
    let used = 0
    fc.assert(fc.property(query, fc.constantFrom(...URLS), context, (raw, other, ctx) => {
      if (expectSame(templates, raw, ctx)) used++
      // The same rest with another URL: from the template made just now.
      if (expectSame(templates, raw.replace(/(^|&)url=[^&]*/, `$1url=${other}`), ctx)) used++
    }), { numRuns: 1500 })
    expect(used).toBeGreaterThan(100)
  })
})
