// The content endpoints' queries (docs/api.md §14): the GET / query each stands for, the refused parameters, and the
// path form's target (its query string kept, `https://` assumed without a scheme).
import { describe, expect, it } from 'vitest'
import { CONTENT_ACCEPTED, contentPathQuery, contentQuery, targetOfPath } from '../../src/schemas/content-query.ts'
import { parseQuery } from '../../src/schemas/query.ts'
import { cacheKeyOf } from '../../src/cache/key.ts'
import { AppError } from '../../src/errors.ts'

const ctx = { plan: 'pro' as const, headers: {}, maxTimeout: 28_000 }
const key = (raw: string): string => cacheKeyOf(parseQuery(raw, ctx))

function codeOf (fn: () => unknown): { code: string, data: unknown } | undefined {
  try { fn() } catch (err) { if (err instanceof AppError) return { code: err.code, data: err.data } }
  return undefined
}

describe('content query form', () => {
  it('is GET / with meta=false, data.content.attr and embed=content: the same options and cache key', () => {
    const raw = contentQuery('url=https%3A%2F%2Fexample.com%2Fa&prerender=true&ttl=1h', 'markdown')
    const options = parseQuery(raw, ctx)
    expect(options.meta).toBe(false)
    expect(options.embed).toBe('content')
    expect(options.prerender).toBe(true)
    expect(options.data).toEqual({ content: [expect.objectContaining({ attr: ['markdown'] })] })
    expect(key(raw)).toBe(key('url=https://example.com/a&ttl=1h&prerender=true&meta=false&data.content.attr=markdown&embed=content'))
  })

  it('reads mainContent and selector into the rule', () => {
    const raw = contentQuery('url=https://example.com&mainContent&selector=%5Bdata-x%5D%20p', 'text')
    expect(parseQuery(raw, ctx).data).toEqual({ content: [expect.objectContaining({ attr: ['text'], mainContent: true, selector: ['[data-x] p'] })] })
    const off = contentQuery('url=https://example.com&main_content=false', 'html')
    expect(parseQuery(off, ctx).data?.content?.[0]?.mainContent).not.toBe(true)
    expect(codeOf(() => contentQuery('url=https://example.com&mainContent=maybe', 'html'))).toMatchObject({ code: 'EINVALQUERY', data: { mainContent: expect.any(String) } })
    expect(codeOf(() => contentQuery('url=https://example.com&selector=', 'html'))).toMatchObject({ code: 'EINVALQUERY', data: { selector: expect.any(String) } })
    expect(codeOf(() => contentQuery('url=https://example.com&selector.0=p', 'html'))).toMatchObject({ code: 'EINVALQUERY', data: { selector: expect.any(String) } })
    expect(codeOf(() => contentQuery('url=https://example.com&main_content.x=1', 'html'))).toMatchObject({ code: 'EINVALQUERY', data: { mainContent: expect.any(String) } })
  })

  it.each([
    ['meta=false', 'meta'], ['meta.title=true', 'meta'], ['data.x.selector=h1', 'data'], ['data=%7B%7D', 'data'],
    ['embed=title', 'embed'], ['stream=title', 'embed'], ['filter=title', 'filter'], ['Filter=title', 'filter']
  ])('refuses %s with EINVALQUERY naming %s', (pair, name) => {
    expect(codeOf(() => contentQuery(`url=https://example.com&${pair}`, 'markdown'))).toMatchObject({ code: 'EINVALQUERY', data: { [name]: expect.any(String) } })
  })

  it('accepts what the parameter table has, but the refused ones, plus mainContent and selector', () => {
    for (const name of ['url', 'prerender', 'waitForSelector', 'click', 'headers', 'ttl', 'force', 'mainContent', 'selector']) {
      expect(CONTENT_ACCEPTED).toContain(name)
    }
    for (const name of ['meta', 'data', 'embed', 'filter', 'stream', 'path']) expect(CONTENT_ACCEPTED).not.toContain(name)
  })
})

describe('content path form', () => {
  it.each([
    ['example.com/post?id=3', 'https://example.com/post?id=3'],
    ['example.com:8080/a', 'https://example.com:8080/a'],
    ['http://example.com/a?b=1&c=%2F', 'http://example.com/a?b=1&c=%2F'],
    ['https:/example.com/merged', 'https://example.com/merged'],
    ['HTTPS://Example.com/', 'HTTPS://Example.com/'],
    ['https%3A%2F%2Fexample.com%2Fa%3Fb%3D1', 'https://example.com/a?b=1'],
    ['example.com/a%2Fb?c=%3D', 'example.com/a%2Fb?c=%3D'.replace(/^/, 'https://')],
    ['', 'https://']
  ])('%s -> %s', (rest, target) => {
    expect(targetOfPath(rest)).toBe(target)
  })

  it('keeps the target whole, its query string included, and takes no other parameters', () => {
    const options = parseQuery(contentPathQuery('example.com/post?id=3&meta=true&embed=title', 'markdown'), ctx)
    expect(options.url).toBe('https://example.com/post?id=3&meta=true&embed=title')
    expect(options.meta).toBe(false)
    expect(options.embed).toBe('content')
  })
})
