import { describe, expect, it } from 'vitest'
import { judge, parseEntry, secondsLeft, serializeEntry, type CacheEntry } from '../../src/cache/entries.ts'
import { cacheKeyOf, canonicalJson } from '../../src/cache/key.ts'
import { parseQuery } from '../../src/schemas/query.ts'

function entry (createdAt: number, ttl: number): CacheEntry {
  return { meta: { createdAt, ttl, fetchMode: 'fetch', fetchTime: 12, files: {}, status: 'MISS' }, body: '{"status":"success"}' }
}

describe('judge', () => {
  const DAY = 86_400_000
  it('is a HIT while fresh and a miss once expired without staleTtl', () => {
    expect(judge(entry(0, DAY), false, DAY - 1).kind).toBe('hit')
    expect(judge(entry(0, DAY), false, DAY).kind).toBe('miss')
  })

  it('with ttl=1d&staleTtl=12h serves fresh for 12 h, then stale, until retention (2 x ttl) ends', () => {
    const stale = DAY / 2
    expect(judge(entry(0, DAY), stale, DAY / 2 - 1).kind).toBe('hit')
    expect(judge(entry(0, DAY), stale, DAY / 2 + 1).kind).toBe('stale')
    expect(judge(entry(0, DAY), stale, DAY + 1000).kind).toBe('stale')
    expect(judge(entry(0, DAY), stale, 2 * DAY).kind).toBe('miss')
  })

  it('with staleTtl=0 serves an expired copy as stale', () => {
    expect(judge(entry(0, DAY), 0, DAY - 1).kind).toBe('hit')
    expect(judge(entry(0, DAY), 0, DAY + 1).kind).toBe('stale')
  })
})

describe('entries', () => {
  it('round-trip through their serialized form', () => {
    const e = entry(123, 456)
    expect(parseEntry(serializeEntry(e))).toEqual(e)
    expect(parseEntry('garbage')).toBeUndefined()
    expect(parseEntry('{"x":1}\n{}')).toBeUndefined()
  })

  it('give whole seconds of ttl left', () => {
    expect(secondsLeft(entry(0, 10_000).meta, 2_500)).toBe(7)
    expect(secondsLeft(entry(0, 10_000).meta, 20_000)).toBe(0)
  })
})

describe('cacheKeyOf', () => {
  const base = { url: 'https://example.com/', meta: { fields: ['title'] }, ttl: 1000, headers: {} as Record<string, string> }
  it('ignores member order, and the presentation and control options', () => {
    const a = cacheKeyOf({ ...base, embed: 'title', filter: ['title'], force: true, staleTtl: 5, timeout: 100, retry: 1 })
    const b = cacheKeyOf({ ttl: 1000, headers: {}, meta: { fields: ['title'] }, url: 'https://example.com/' })
    expect(a).toBe(b)
    expect(a).toMatch(/^[0-9a-f]{64}$/)
  })

  it('changes with what changes the output, ttl and cacheKey included', () => {
    const k = cacheKeyOf(base)
    expect(cacheKeyOf({ ...base, ttl: 2000 })).not.toBe(k)
    expect(cacheKeyOf({ ...base, cacheKey: 'v2' })).not.toBe(k)
    expect(cacheKeyOf({ ...base, url: 'https://example.com/?a=1' })).not.toBe(k)
    expect(cacheKeyOf({ ...base, headers: { cookie: 'a' } })).not.toBe(cacheKeyOf({ ...base, headers: { cookie: 'b' } }))
  })

  it('is built on JSON with keys sorted at every depth and undefined members dropped', () => {
    expect(canonicalJson({ b: 1, a: [2, { d: 1, c: undefined }] })).toBe('{"a":[2,{"d":1}],"b":1}')
  })

  it('writes numeric-looking keys, non-ASCII keys and what JSON leaves out as the sorted-entries form did', () => {
    const odd = { b: 1, 10: 2, 9: 3, 'é': [undefined, null, 'a"\u2028', -0, NaN, 1e21, true], Z: {}, c: undefined }
    expect(canonicalJson(odd)).toBe('{"10":2,"9":3,"Z":{},"b":1,"é":[null,null,"a\\"\u2028",0,null,1e+21,true]}')
  })

  it('stays the same for the same query across versions (entries already stored keep being found)', () => {
    // Keys written by the implementation before the one-pass writer (main at 5e03f07), for the same parsed queries.
    const ctx = { plan: 'pro' as const, headers: { 'x-api-header-foo': 'bar' }, maxTimeout: 30_000 }
    const known: Record<string, string> = {
      'url=https://example.com/': '5391656a1a156eba85171caefcee9cbe4eb08cf822b05093f5f2b7323e05f21f',
      'url=https://example.com/&prerender=false&meta=false&data.content.attr=markdown&embed=content': 'b0005feff78d42c8d109d6e8b3953e2957d6ae8aac7b98ad9067089ddcd6a892',
      [`url=https://example.com/?q=1&headers.Authorization=x&proxy=http://u:p@h:1&function=${encodeURIComponent('({ page }) => page.url()')}` +
        '&args.a=1&data.x.selectorAll=.a&data.x.attr.t.selector=a&data.x.attr.t.attr=href&viewport.width=300&screenshot']: '27d9e8efd35579510e338b48da45f9cf89260fbac4480cc04c955b1c982ef6cb'
    }
    for (const [query, key] of Object.entries(known)) expect(cacheKeyOf(parseQuery(query, ctx))).toBe(key)
  })

  it('keeps unknown parameters out unless function is set', () => {
    expect(cacheKeyOf({ ...base, args: { v: '42' } })).toBe(cacheKeyOf({ ...base, args: {} }))
    expect(cacheKeyOf({ ...base, function: { source: 'x' }, args: { v: '42' } }))
      .not.toBe(cacheKeyOf({ ...base, function: { source: 'x' }, args: {} }))
  })
})
