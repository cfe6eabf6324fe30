// The query room (src/query/): parse gives what parseQuery and cacheKeyOf give, keeps it (frozen) for the next
// request of the same plan, raw query and forwarded headers, and keeps nothing that was refused, by the parser or by
// the check passed in; peek never parses.
import { describe, expect, it } from 'vitest'
import { createQueries } from '../../src/query/index.ts'
import { parseQuery } from '../../src/schemas/query.ts'
import { cacheKeyOf } from '../../src/cache/key.ts'
import { AppError } from '../../src/errors.ts'

const MAX_TIMEOUT = 28_000
const RAW = 'url=https%3A%2F%2Fexample.com%2Fa&meta=false&screenshot'

function codeOf (fn: () => unknown): string | undefined {
  try {
    fn()
  } catch (err) {
    return err instanceof AppError ? err.code : String(err)
  }
  return undefined
}

describe('the query room', () => {
  it('parses as parseQuery and keys as cacheKeyOf, then answers the same query from its memo', () => {
    const queries = createQueries({ maxTimeout: MAX_TIMEOUT })
    expect(queries.peek('pro', RAW, {})).toBeUndefined()
    const parsed = queries.parse('pro', RAW, {})
    const options = parseQuery(RAW, { plan: 'pro', headers: {}, maxTimeout: MAX_TIMEOUT })
    expect(parsed.options).toEqual(options)
    expect(parsed.cacheKey).toBe(cacheKeyOf(options))
    expect(Object.isFrozen(parsed.options)).toBe(true)
    expect(queries.peek('pro', RAW, {})).toBe(parsed)
    expect(queries.parse('pro', RAW, {})).toBe(parsed)
  })

  it('a query differing only in its url comes from the template, with what parseQuery gives', () => {
    const queries = createQueries({ maxTimeout: MAX_TIMEOUT })
    queries.parse('pro', RAW, {})
    const other = RAW.replace('%2Fa', '%2Fb')
    const parsed = queries.parse('pro', other, {})
    const options = parseQuery(other, { plan: 'pro', headers: {}, maxTimeout: MAX_TIMEOUT })
    expect(parsed.options).toEqual(options)
    expect(Object.keys(parsed.options)).toEqual(Object.keys(options))
    expect(parsed.cacheKey).toBe(cacheKeyOf(options))
  })

  it('keeps plans and forwarded x-api-header-* values apart', () => {
    const queries = createQueries({ maxTimeout: MAX_TIMEOUT })
    const pro = queries.parse('pro', RAW, {})
    expect(queries.peek('free', RAW, {})).toBeUndefined()
    expect(queries.peek('pro', RAW, { 'x-api-header-cookie': 'a' })).toBeUndefined()
    const withCookie = queries.parse('pro', RAW, { 'x-api-header-cookie': 'a' })
    expect(withCookie.cacheKey).not.toBe(pro.cacheKey)
    expect(queries.peek('pro', RAW, { 'x-api-header-cookie': 'b' })).toBeUndefined()
  })

  it('throws what the parser and the check throw, and keeps neither', () => {
    const seen: string[] = []
    const queries = createQueries({
      maxTimeout: MAX_TIMEOUT,
      check: (options) => {
        seen.push(options.url)
        if (options.url.includes('refused')) throw new AppError('EINVALURL', { data: { url: 'refused by the check' } })
      }
    })
    expect(codeOf(() => queries.parse('pro', 'meta=false', {}))).toBe('EINVALURL')
    expect(queries.peek('pro', 'meta=false', {})).toBeUndefined()
    const refused = 'url=https%3A%2F%2Frefused.example%2F'
    expect(codeOf(() => queries.parse('pro', refused, {}))).toBe('EINVALURL')
    expect(codeOf(() => queries.parse('pro', refused, {}))).toBe('EINVALURL')
    expect(queries.peek('pro', refused, {})).toBeUndefined()
    // Checked on every attempt, since nothing refused is kept; a kept query is not checked again.
    queries.parse('pro', RAW, {})
    queries.parse('pro', RAW, {})
    expect(seen).toEqual(['https://refused.example/', 'https://refused.example/', 'https://example.com/a'])
  })

  it('parses very long queries every time, keeping none', () => {
    const queries = createQueries({ maxTimeout: MAX_TIMEOUT })
    const long = `${RAW}&data.x.selector=${'a'.repeat(5000)}`
    const parsed = queries.parse('pro', long, {})
    expect(parsed.cacheKey).toBe(cacheKeyOf(parseQuery(long, { plan: 'pro', headers: {}, maxTimeout: MAX_TIMEOUT })))
    expect(queries.peek('pro', long, {})).toBeUndefined()
    expect(queries.parse('pro', long, {})).not.toBe(parsed)
  })
})
