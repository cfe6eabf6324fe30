import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { AppError } from '../../src/errors.ts'
import { parseQuery } from '../../src/schemas/query.ts'
import type { ParseContext } from '../../src/schemas/query.ts'

const MAX_TIMEOUT = 28_000

function protoSnapshot (): string[] {
  return [Object.prototype, Array.prototype, Function.prototype, String.prototype]
    .flatMap((proto, i) => Object.getOwnPropertyNames(proto).map((name) => `${i}:${name}`))
    .sort()
}

function safeEncode (text: string): string {
  try {
    return encodeURIComponent(text)
  } catch {
    return text // lone surrogates: send them raw
  }
}

// Known names in both spellings, sub-keys, aliases, reserved names, numeric segments.
const KNOWN_SEGMENTS = [
  'url', 'meta', 'data', 'filter', 'embed', 'stream', 'screenshot', 'pdf', 'video', 'audio', 'iframe', 'insights', 'palette',
  'ping', 'function', 'device', 'viewport', 'colorScheme', 'color_scheme', 'mediaType', 'media_type', 'javascript',
  'animations', 'adblock', 'headers', 'prerender', 'waitUntil', 'wait_until', 'waitForSelector', 'wait_for_selector',
  'waitForTimeout', 'wait_for_timeout', 'timeout', 'click', 'scroll', 'modules', 'scripts', 'styles', 'retry', 'proxy', 'ttl',
  'staleTtl', 'stale_ttl', 'force', 'cacheKey', 'cache_key', 'filename', 'path', 'PATH', 'type', 'fullPage', 'full_page',
  'element', 'overlay', 'omitBackground', 'omit_background', 'scale', 'margin', 'format', 'landscape', 'pageRanges',
  'page_ranges', 'quality', 'codeScheme', 'code_scheme', 'animated', 'browser', 'background', 'width', 'height',
  'deviceScaleFactor', 'device_scale_factor', 'isMobile', 'is_mobile', 'top', 'left', 'printBackground', 'technologies',
  'lighthouse', 'output', 'preset', 'selector', 'selectorAll', 'selector_all', 'attr', 'evaluate', 'title', 'logo', 'image',
  'userAgent', 'user_agent', '__proto__', 'constructor', 'prototype', '0', '1', '00', '9999', '10000', '99999999999999999999'
]

const segment = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...KNOWN_SEGMENTS) },
  { weight: 2, arbitrary: fc.stringMatching(/^[a-zA-Z_]{1,10}$/) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 6 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 4 }) }
)

const key = fc.oneof(
  { weight: 8, arbitrary: fc.array(segment, { minLength: 1, maxLength: 5 }).map((segments) => segments.join('.')) },
  { weight: 1, arbitrary: fc.array(segment, { minLength: 28, maxLength: 40 }).map((segments) => segments.join('.')) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('__proto__.polluted', 'constructor.prototype.polluted', '__proto__', 'data.__proto__.selector',
      'headers.__proto__', 'screenshot.__proto__.polluted', 'a.__proto__.polluted', 'insights.lighthouse.constructor.prototype.x')
  }
)

const VALUES = [
  'true', 'false', 'TRUE', '', 'jpg', 'png', 'A4', 'letter', '1-5, 8', '5-', '0', '-1', '1e400', '99999999999999999999999',
  'NaN', 'Infinity', '1.5h', '2 days', '10s', 'min', 'max', 'https://example.com/a?b=c#d', 'http://', 'ftp://x', 'socks5://p:1',
  '{', '[', '{}', '[]', '[1,2', '{"__proto__":{"polluted":1}}', '{"constructor":{"prototype":{"polluted":1}}}',
  '[{"selector":"h1","attr":"text"}]', '{"type":"jpeg","fullPage":true}', '[data-x]', 'iphone 15', 'toaster',
  '() => 1', '({ page }) => page.title()', 'br#AAAA', 'gz#H4sI', 'lz#N4Ig', '#fff', 'rgb(1,2,3)', 'linear-gradient(red, blue)',
  'x'.repeat(300), '日本語', '\u0000', '\r\n'
]

const value = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...VALUES) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 12 }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((json) => JSON.stringify(json)) },
  { weight: 1, arbitrary: fc.bigInt().map(String) },
  { weight: 1, arbitrary: fc.double().map(String) }
)

const BROKEN = ['%', '%z', '%zz=1', 'a=%E2%82', 'a=%C0%AF', 'a=%ud800', 'v=%FF', '%E2%82%AC=%', '=', '&&', '=x']

const pair = fc.oneof(
  { weight: 6, arbitrary: fc.tuple(key, value).map(([k, v]) => `${safeEncode(k)}=${safeEncode(v)}`) },
  { weight: 2, arbitrary: fc.tuple(key, value).map(([k, v]) => `${k}=${v}`) },
  { weight: 1, arbitrary: key.map(safeEncode) },
  { weight: 1, arbitrary: fc.constantFrom(...BROKEN) }
)

const query = fc.tuple(fc.boolean(), fc.array(pair, { maxLength: 12 })).map(([withUrl, pairs]) =>
  [...(withUrl ? ['url=https%3A%2F%2Fexample.com%2F'] : []), ...pairs].join('&'))

const context: fc.Arbitrary<ParseContext> = fc.record({
  plan: fc.constantFrom('free' as const, 'pro' as const),
  headers: fc.oneof(
    fc.constant({}),
    fc.dictionary(fc.constantFrom('x-api-header-user-agent', 'X-Api-Header-DNT', 'x-api-header-', 'x-api-header-a_b', 'x-other'),
      fc.oneof(fc.string({ maxLength: 8 }), fc.array(fc.string({ maxLength: 4 }), { maxLength: 2 })))
  ),
  maxTimeout: fc.constantFrom(MAX_TIMEOUT, 1, 5000)
})

describe('parseQuery on arbitrary input', () => {
  it('returns options or throws a 4xx AppError, and never pollutes prototypes', () => {
    const before = protoSnapshot()
    fc.assert(fc.property(fc.oneof({ weight: 9, arbitrary: query }, { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 60 }) }), context, (raw, ctx) => {
      try {
        const options = parseQuery(raw, ctx)
        expect(typeof options.url).toBe('string')
        expect(options.timeout).toBeGreaterThan(0)
        expect(options.timeout).toBeLessThanOrEqual(ctx.maxTimeout)
      } catch (err) {
        if (!(err instanceof AppError)) throw err
        expect(err.status).toBeGreaterThanOrEqual(400)
        expect(err.status).toBeLessThan(500)
        expect(Object.keys(err.data).length).toBeGreaterThan(0)
      }
      expect(protoSnapshot()).toEqual(before)
      expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    }), { numRuns: 5000 })
  })

  it('survives very long and very repetitive queries', () => {
    fc.assert(fc.property(fc.constantFrom('click=a', 'data.x.selector=h1', 'a.b.c=1', 'waitUntil=load', 'x', '%41=1'), fc.integer({ min: 1, max: 6000 }), (part, times) => {
      const raw = `url=https://example.com&${Array.from({ length: times }, () => part).join('&')}`
      try {
        parseQuery(raw, { plan: 'pro', headers: {}, maxTimeout: MAX_TIMEOUT })
      } catch (err) {
        if (!(err instanceof AppError)) throw err
        expect(err.status).toBe(400)
      }
    }), { numRuns: 30 })
  })
})

// ---------------------------------------------------------------------------------------------
// Order and spelling.

interface Param {
  /** Canonical camelCase segments. */
  path: string[]
  /** Segments that are user-chosen names: never respelled. */
  fixed?: number[]
  values: fc.Arbitrary<string>
}

const bools = fc.constantFrom('true', 'false', 'TRUE', '', 'nope')
const CATALOG: Param[] = [
  { path: ['screenshot'], values: bools },
  { path: ['screenshot', 'type'], values: fc.constantFrom('png', 'jpeg', 'jpg', 'webp', 'gif') },
  { path: ['screenshot', 'quality'], values: fc.constantFrom('0', '50', '100', '101') },
  { path: ['screenshot', 'fullPage'], values: bools },
  { path: ['screenshot', 'omitBackground'], values: bools },
  { path: ['screenshot', 'overlay', 'browser'], values: fc.constantFrom('light', 'dark', 'sepia') },
  { path: ['screenshot', 'overlay', 'background'], values: fc.constantFrom('#fff', 'red', 'nope', 'https://example.com/bg.png') },
  { path: ['screenshot', 'codeScheme'], values: fc.constantFrom('dracula', 'atom-dark', 'neon') },
  { path: ['fullPage'], values: bools },
  { path: ['type'], values: fc.constantFrom('png', 'jpeg', 'nope') },
  { path: ['omitBackground'], values: bools },
  { path: ['pdf'], values: bools },
  { path: ['pdf', 'format'], values: fc.constantFrom('A4', 'letter', 'A9') },
  { path: ['pdf', 'margin', 'top'], values: fc.constantFrom('1cm', '0', '10px', 'wide') },
  { path: ['pdf', 'pageRanges'], values: fc.constantFrom('1-5, 8', '5-', 'x') },
  { path: ['pdf', 'printBackground'], values: bools },
  { path: ['scale'], values: fc.constantFrom('1', '0.5', '9') },
  { path: ['pageRanges'], values: fc.constantFrom('2-3', 'bad') },
  { path: ['meta'], values: bools },
  { path: ['meta', 'title'], values: bools },
  { path: ['meta', 'logo', 'square'], values: bools },
  { path: ['ping', 'image'], values: bools },
  { path: ['insights', 'technologies'], values: bools },
  { path: ['insights', 'lighthouse', 'onlyCategories', '0'], values: fc.constantFrom('performance', 'seo') },
  { path: ['insights', 'lighthouse', 'preset'], values: fc.constantFrom('desktop', 'nope') },
  { path: ['iframe', 'maxWidth'], fixed: [1], values: fc.constantFrom('400', '') },
  { path: ['data', 'my_field', 'selectorAll'], fixed: [1], values: fc.constantFrom('a', '[href]', '') },
  { path: ['data', 'my_field', 'attr'], fixed: [1], values: fc.constantFrom('href', 'text', 'bad name') },
  { path: ['data', 'otherField', 'type'], fixed: [1], values: fc.constantFrom('url', 'banana') },
  { path: ['headers', 'userAgent'], values: fc.constantFrom('bot', 'a\r\nb') },
  { path: ['headers', 'acceptLanguage'], values: fc.constantFrom('fr') },
  { path: ['device'], values: fc.constantFrom('iphone 15', 'Macbook Pro 16', 'toaster') },
  { path: ['viewport', 'deviceScaleFactor'], values: fc.constantFrom('1', '3', '9') },
  { path: ['viewport', 'isMobile'], values: bools },
  { path: ['colorScheme'], values: fc.constantFrom('dark', 'light', 'blue') },
  { path: ['mediaType'], values: fc.constantFrom('print', 'screen', 'tv') },
  { path: ['waitForSelector'], values: fc.constantFrom('#app', '') },
  { path: ['waitForTimeout'], values: fc.constantFrom('1s', '500', '-1') },
  { path: ['waitUntil', '0'], values: fc.constantFrom('load', 'networkidle2', 'nope') },
  { path: ['timeout'], values: fc.constantFrom('10s', '1h', '0') },
  { path: ['retry'], values: fc.constantFrom('0', '5', '6') },
  { path: ['prerender'], values: fc.constantFrom('auto', 'true', 'false', 'x') },
  { path: ['ttl'], values: fc.constantFrom('1d', '1h', 'min', '1s') },
  { path: ['staleTtl'], values: fc.constantFrom('true', '10m', 'false', '40d') },
  { path: ['cacheKey'], values: fc.constantFrom('k1', '') },
  { path: ['filename'], values: fc.constantFrom('shot', 'bad name') },
  { path: ['embed'], values: fc.constantFrom('screenshot.url', 'title') },
  { path: ['stream'], values: fc.constantFrom('screenshot', 'pdf') },
  { path: ['filter'], values: fc.constantFrom('url,title', 'image.url') },
  { path: ['video'], values: bools },
  { path: ['palette'], values: bools },
  { path: ['javascript'], values: bools },
  { path: ['force'], values: bools }
]

function snake (segment: string): string {
  return segment.replace(/[A-Z]/g, (char) => `_${char.toLowerCase()}`)
}

function keyOf (param: Param, spelling: boolean[]): string {
  return param.path.map((seg, i) => (param.fixed?.includes(i) === true || spelling[i] !== true ? seg : snake(seg))).join('.')
}

type Outcome = { ok: true, options: unknown } | { ok: false, code: string, data: unknown }

function outcome (raw: string, ctx: ParseContext): Outcome {
  try {
    return { ok: true, options: parseQuery(raw, ctx) }
  } catch (err) {
    if (!(err instanceof AppError)) throw err
    return { ok: false, code: err.code, data: err.data }
  }
}

const selection = fc.tuple(
  fc.subarray(CATALOG.map((_, i) => i), { minLength: 1 }),
  fc.array(fc.integer(), { minLength: CATALOG.length, maxLength: CATALOG.length }),
  fc.array(fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }), { minLength: CATALOG.length, maxLength: CATALOG.length })
).chain(([indices, order, spellings]) => fc.tuple(
  fc.constant(indices),
  fc.constant(order),
  fc.constant(spellings),
  fc.tuple(...indices.map((i) => (CATALOG[i] as Param).values))
))

describe('parseQuery is independent of order and spelling', () => {
  it('gives the same outcome for any order and camel/snake spelling', () => {
    fc.assert(fc.property(selection, fc.constantFrom<ParseContext['plan']>('pro', 'free'), ([indices, order, spellings, values], plan) => {
      const ctx: ParseContext = { plan, headers: {}, maxTimeout: MAX_TIMEOUT }
      const parts = indices.map((index, j) => ({ index, value: values[j] ?? '' }))
      const canonical = ['url=https%3A%2F%2Fexample.com', ...parts.map(({ index, value }) =>
        `${keyOf(CATALOG[index] as Param, [])}=${encodeURIComponent(value)}`)].join('&')
      const shuffled = [...parts, { index: -1, value: '' }]
        .sort((a, b) => (order[a.index + 1] ?? 0) - (order[b.index + 1] ?? 0))
        .map(({ index, value }) => index === -1
          ? 'url=https%3A%2F%2Fexample.com'
          : `${keyOf(CATALOG[index] as Param, spellings[index] ?? [])}=${encodeURIComponent(value)}`)
        .join('&')
      expect(outcome(shuffled, ctx)).toEqual(outcome(canonical, ctx))
    }), { numRuns: 3000 })
  })

  it('gives deep-equal options for a stated default and its absence', () => {
    const defaults = ['screenshot.type=png', 'pdf.format=A4', 'ping=true', 'insights.technologies=true', 'retry=2', 'timeout=28s', 'ttl=1d',
      'prerender=auto', 'wait_until=auto', 'color_scheme=no-preference', 'adblock=true', 'javascript=true', 'force=false',
      'device=macbook-pro-13', 'stale_ttl=false', 'v=42']
    fc.assert(fc.property(fc.subarray(defaults), fc.subarray(['screenshot', 'pdf', 'video', 'meta=false']), (stated, features) => {
      const ctx: ParseContext = { plan: 'pro', headers: {}, maxTimeout: MAX_TIMEOUT }
      const base = ['url=https://example.com', ...features]
      const plain = parseQuery(base.join('&'), ctx)
      // A default of a sub-key switches its parent on, so compare with the parent switched on too.
      const parents = stated.filter((part) => /^(screenshot|pdf|insights)\./.test(part)).map((part) => part.split('.')[0] ?? '')
      const expected = parseQuery([...base, ...parents].join('&'), ctx)
      expect(parseQuery([...base, ...stated].join('&'), ctx)).toEqual(parents.length === 0 ? plain : expected)
    }), { numRuns: 300 })
  })
})
