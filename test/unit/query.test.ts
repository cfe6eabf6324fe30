import { brotliCompressSync, gzipSync } from 'node:zlib'
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'
import { AppError } from '../../src/errors.ts'
import type { ErrorCode } from '../../src/errors.ts'
import { parseQuery } from '../../src/schemas/query.ts'
import { parseCssLength, parseDuration } from '../../src/schemas/readers.ts'
import type { ParseContext } from '../../src/schemas/query.ts'
import { META_FIELDS } from '../../src/schemas/options.ts'
import type { ExtractOptions } from '../../src/schemas/options.ts'
import { CODE_SCHEMES } from '../../src/schemas/code-schemes.ts'
import { cacheKeyOf } from '../../src/cache/key.ts'

const MAX_TIMEOUT = 28_000
const PRO: ParseContext = { plan: 'pro', headers: {}, maxTimeout: MAX_TIMEOUT }
const FREE: ParseContext = { plan: 'free', headers: {}, maxTimeout: MAX_TIMEOUT }
const BASE = 'url=https://example.com'

function parse (query: string, ctx: ParseContext = PRO): ExtractOptions {
  return parseQuery(query, ctx)
}

function q (extra: string, ctx: ParseContext = PRO): ExtractOptions {
  return parse(extra === '' ? BASE : `${BASE}&${extra}`, ctx)
}

function errorOf (query: string, ctx: ParseContext = PRO): AppError {
  try {
    parseQuery(query, ctx)
  } catch (err) {
    if (err instanceof AppError) return err
    throw new Error(`expected an AppError, got ${String(err)}`)
  }
  throw new Error(`expected ${query} to fail`)
}

function codeOf (extra: string, ctx: ParseContext = PRO): ErrorCode {
  return errorOf(extra === '' ? BASE : `${BASE}&${extra}`, ctx).code
}

function expectError (extra: string, code: ErrorCode, param?: string, ctx: ParseContext = PRO): AppError {
  const err = errorOf(extra === '' ? BASE : `${BASE}&${extra}`, ctx)
  expect(err.code).toBe(code)
  if (param !== undefined) {
    expect(Object.keys(err.data)).toEqual([param])
    expect(typeof err.data[param]).toBe('string')
    expect(String(err.data[param]).length).toBeGreaterThan(0)
  }
  return err
}

const enc = encodeURIComponent
const DEFAULT_MARGIN_PX = 13.2283 // 0.35cm

describe('defaults', () => {
  it('fills every parameter', () => {
    expect(q('')).toEqual({
      url: 'https://example.com/',
      meta: { fields: [...META_FIELDS] },
      screenshot: false,
      pdf: false,
      video: false,
      audio: false,
      iframe: false,
      insights: false,
      palette: false,
      ping: { image: true, logo: true, video: true, audio: true },
      device: 'Macbook Pro 13',
      viewport: { width: 1280, height: 800, deviceScaleFactor: 2, isMobile: false, hasTouch: false, isLandscape: false },
      colorScheme: 'no-preference',
      mediaType: 'screen',
      javascript: true,
      animations: false,
      adblock: true,
      headers: {},
      prerender: 'auto',
      waitUntil: ['auto'],
      timeout: MAX_TIMEOUT,
      click: [],
      actions: [],
      modules: [],
      scripts: [],
      styles: [],
      retry: 2,
      ttl: 86_400_000,
      staleTtl: false,
      force: false,
      args: {}
    })
  })

  it('leaves optional members out instead of setting undefined', () => {
    const options = q('')
    for (const key of ['data', 'filter', 'embed', 'function', 'waitForSelector', 'waitForTimeout', 'scroll', 'proxy', 'cacheKey', 'filename']) {
      expect(Object.hasOwn(options, key), key).toBe(false)
    }
  })

  it('accepts a leading ? and an empty query still needs url', () => {
    expect(parse(`?${BASE}`).url).toBe('https://example.com/')
    expect(errorOf('').code).toBe('EINVALURL')
    expect(errorOf('?').code).toBe('EINVALURL')
  })
})

describe('§2 names', () => {
  it('treats camelCase and snake_case alike in every segment', () => {
    expect(q('wait_for_selector=h1')).toEqual(q('waitForSelector=h1'))
    expect(q('screenshot.full_page=true').screenshot).toEqual(q('screenshot.fullPage=true').screenshot)
    expect(q('screenshot.omit_background=true&screenshot.type=webp')).toEqual(q('screenshot.omitBackground=true&screenshot.type=webp'))
    expect(q('viewport.device_scale_factor=1')).toEqual(q('viewport.deviceScaleFactor=1'))
    expect(q('insights.lighthouse.only_categories.0=performance')).toEqual(q('insights.lighthouse.onlyCategories.0=performance'))
    expect(q('color_scheme=dark').colorScheme).toBe('dark')
    expect(q('stale_ttl=1h').staleTtl).toBe(3_600_000)
    expect(q('cache_key=a').cacheKey).toBe('a')
    expect(q('pdf.page_ranges=1-2&pdf.print_background=false')).toEqual(q('pdf.pageRanges=1-2&pdf.printBackground=false'))
  })

  it('normalizes rule keys but keeps field names as written', () => {
    const snake = q('data.my_links.selector_all=a&data.my_links.attr=href')
    expect(snake.data).toEqual({ my_links: [{ selectorAll: ['a'], attr: ['href'], type: 'auto' }] })
    const camel = q('data.myLinks.selectorAll=a')
    expect(Object.keys(camel.data ?? {})).toEqual(['myLinks'])
  })

  it('keeps the field names of a nested attr as written', () => {
    const options = q('data.items.selector_all=.item&data.items.attr.item_title.selector=a&data.items.attr.item_title.attr=text')
    expect(options.data?.items?.[0]?.attr).toEqual({ item_title: [{ selector: ['a'], attr: ['text'], type: 'auto' }] })
  })

  it('lower-cases and kebab-cases header names', () => {
    for (const name of ['userAgent', 'user_agent', 'user-agent', 'User-Agent', 'USER_AGENT']) {
      expect(q(`headers.${name}=bot`).headers, name).toEqual({ 'user-agent': 'bot' })
    }
    expect(q('headers.XForwardedFor=1.2.3.4').headers).toEqual({ 'x-forwarded-for': '1.2.3.4' })
    expect(q('headers.acceptLanguage=fr').headers).toEqual({ 'accept-language': 'fr' })
  })
})

describe('§2 nesting and JSON', () => {
  it('builds objects from dot notation', () => {
    const pdf = q('pdf.margin.top=1cm').pdf
    expect(pdf && pdf.margin).toEqual({ top: 37.7953, right: 0, bottom: 0, left: 0 })
  })

  it('builds arrays from numeric segments', () => {
    expect(q('waitUntil.0=load&waitUntil.1=networkidle0').waitUntil).toEqual(['load', 'networkidle0'])
    expect(q('data.title.0.selector=h1&data.title.1.selector=h2').data).toEqual({
      title: [{ selector: ['h1'], attr: ['html'], type: 'auto' }, { selector: ['h2'], attr: ['html'], type: 'auto' }]
    })
    expect(q('click.1=b&click.0=a').click).toEqual(['a', 'b'])
    expect(q('click.010=b&click.2=a').click).toEqual(['a', 'b'])
  })

  it('reads JSON on object- and array-typed parameters', () => {
    expect(q(`data.title=${enc('[{"selector":"h1","attr":"text"}]')}`).data)
      .toEqual({ title: [{ selector: ['h1'], attr: ['text'], type: 'auto' }] })
    expect(q(`screenshot=${enc('{"type":"jpeg","full_page":true}')}`).screenshot)
      .toEqual(q('screenshot.type=jpeg&screenshot.fullPage=true').screenshot)
    expect(q(`viewport=${enc('{"width":500}')}`).viewport.width).toBe(500)
    expect(q(`click=${enc('["a","b"]')}`).click).toEqual(['a', 'b'])
    expect(q(`headers=${enc('{"userAgent":"x"}')}`).headers).toEqual({ 'user-agent': 'x' })
    expect(q(`meta=${enc('{"title":true}')}`).meta).toEqual({ fields: ['title'] })
    expect(q(`data=${enc('{"t":{"selector":"h1"}}')}`).data).toEqual({ t: [{ selector: ['h1'], attr: ['html'], type: 'auto' }] })
  })

  it('rejects invalid JSON: EINVALQUERY, or EINVALDATA under data', () => {
    expectError(`screenshot=${enc('{"type":')}`, 'EINVALQUERY', 'screenshot')
    expectError(`viewport=${enc('{width:1}')}`, 'EINVALQUERY', 'viewport')
    expectError(`data.title=${enc('[{"selector":')}`, 'EINVALDATA', 'data.title')
    expectError(`data=${enc('{bad')}`, 'EINVALDATA', 'data')
  })

  it('keeps a selector starting with [ as a selector', () => {
    expect(q(`click=${enc('[data-accept]')}`).click).toEqual(['[data-accept]'])
    expect(q(`data.name.selector=${enc('[itemprop=name]')}`).data?.name?.[0]?.selector).toEqual(['[itemprop=name]'])
  })

  it('lets the last leaf win', () => {
    expect(q('screenshot.type=jpeg&screenshot.type=webp').screenshot).toMatchObject({ type: 'webp' })
    expect(q('wait_for_selector=a&waitForSelector=b').waitForSelector).toBe('b')
    expect(q('waitForSelector=b&wait_for_selector=a').waitForSelector).toBe('a')
    expect(parse('url=https://a.com&url=https://b.com').url).toBe('https://b.com/')
    expect(q('click.0=a&click.0=b').click).toEqual(['b'])
    // A later JSON value replaces what was set under it before; later leaves go into it.
    expect(q(`screenshot.quality=10&screenshot=${enc('{"type":"jpeg"}')}`).screenshot).toMatchObject({ quality: 80 })
    expect(q(`screenshot=${enc('{"type":"jpeg"}')}&screenshot.quality=10`).screenshot).toMatchObject({ type: 'jpeg', quality: 10 })
  })

  it('builds an array from a repeated plain key on array-typed parameters', () => {
    expect(q('click=a&click=b').click).toEqual(['a', 'b'])
    expect(q('scripts=a()&scripts=b()').scripts).toEqual(['a()', 'b()'])
    expect(q('data.t.selector=h1&data.t.selector=h2').data?.t?.[0]?.selector).toEqual(['h1', 'h2'])
    // ...but not on scalar ones.
    expect(q('colorScheme=dark&colorScheme=light').colorScheme).toBe('light')
  })

  it('rejects too deep keys and JSON', () => {
    expectError(`${Array.from({ length: 40 }, () => 'a').join('.')}=1`, 'EINVALQUERY')
    expectError(`screenshot=${enc('{"a":'.repeat(40) + '1' + '}'.repeat(40))}`, 'EINVALQUERY', 'screenshot')
    expectError('click.100000=a', 'EINVALQUERY')
  })

  it('treats an empty segment as an error under a known parameter, else ignores it', () => {
    expectError('screenshot.=1', 'EINVALQUERY')
    expectError('pdf..format=A4', 'EINVALQUERY')
    expect(q('v..x=1')).toEqual(q(''))
  })
})

describe('§2 booleans', () => {
  it.each([
    ['true', true], ['TRUE', true], ['True', true], ['false', false], ['FALSE', false], ['fAlSe', false], ['', true]
  ])('video=%j is %s', (value, expected) => {
    expect(q(`video=${value}`).video).toBe(expected)
  })

  it('reads a key with no = as true', () => {
    expect(q('video').video).toBe(true)
    expect(q('screenshot&meta=false')).toMatchObject({ screenshot: { type: 'png' }, meta: false })
  })

  it.each(['yes', '1', '0', 'on', 'null', 'tru'])('rejects video=%j', (value) => {
    expectError(`video=${value}`, 'EINVALQUERY', 'video')
  })
})

describe('§2 sub-keys switch their parent on', () => {
  it.each([
    ['screenshot.type=jpeg', 'screenshot'],
    ['screenshot.optimizeForSpeed=true', 'screenshot'],
    ['pdf.format=Letter', 'pdf'],
    ['insights.technologies=false', 'insights'],
    ['iframe.maxWidth=400', 'iframe'],
    ['ping.image=false', 'ping']
  ] as const)('%s', (query, parent) => {
    expect(q(query)[parent]).not.toBe(false)
  })

  it('switches meta on from its sub-keys even after meta=false is absent', () => {
    expect(q('meta.title=true').meta).toEqual({ fields: ['title'] })
  })

  it('lets an explicit <parent>=false win, in any order', () => {
    expect(q('screenshot=false&screenshot.type=jpeg').screenshot).toBe(false)
    expect(q('screenshot.type=jpeg&screenshot=false').screenshot).toBe(false)
    expect(q('pdf.format=A3&pdf=false').pdf).toBe(false)
    expect(q('insights=false&insights.lighthouse=true').insights).toBe(false)
    expect(q('iframe=false&iframe.maxwidth=1').iframe).toBe(false)
    expect(q('meta=false&meta.title=true').meta).toBe(false)
    expect(q('ping=false&ping.image=true').ping).toEqual({ image: false, logo: false, video: false, audio: false })
  })

  it('ignores sub-keys of a parent that is off, even invalid ones', () => {
    expect(q('screenshot=false&screenshot.type=gif').screenshot).toBe(false)
  })

  it('reads mql-style leaf-only queries', () => {
    const options = q('screenshot.type=jpeg&meta=false')
    expect(options.meta).toBe(false)
    expect(options.screenshot).toEqual({
      type: 'jpeg', quality: 80, fullPage: false, omitBackground: false, overlay: {}, codeScheme: 'atom-dark'
    })
    const pdf = q('pdf.margin=1cm&pdf.scale=1&meta=false')
    expect(pdf.pdf).toMatchObject({ scale: 1, format: 'A4' })
    expect(pdf.mediaType).toBe('print')
  })
})

describe('§2 legacy top-level aliases', () => {
  it('reads screenshot aliases when screenshot is on', () => {
    expect(q('screenshot&fullPage=true').screenshot).toMatchObject({ fullPage: true })
    expect(q('screenshot&type=jpeg').screenshot).toMatchObject({ type: 'jpeg' })
    expect(q('screenshot&omitBackground=true').screenshot).toMatchObject({ omitBackground: true })
    expect(q('screenshot&element=main').screenshot).toMatchObject({ element: 'main', fullPage: false })
    expect(q('screenshot&overlay.browser=dark&overlay.background=red').screenshot)
      .toMatchObject({ overlay: { browser: 'dark', background: 'red' } })
    expect(q('screenshot&full_page').screenshot).toMatchObject({ fullPage: true })
  })

  it('reads pdf aliases when pdf is on', () => {
    const pdf = q('pdf&scale=1&margin=1in&format=letter&landscape=true&pageRanges=1-2').pdf
    expect(pdf).toEqual({
      format: 'Letter', scale: 1, margin: { top: 96, right: 96, bottom: 96, left: 96 }, landscape: true, printBackground: true, pageRanges: '1-2'
    })
  })

  it('lets the nested key win on conflict', () => {
    expect(q('type=jpeg&screenshot.type=webp').screenshot).toMatchObject({ type: 'webp' })
    expect(q('screenshot.type=webp&type=jpeg').screenshot).toMatchObject({ type: 'webp' })
    expect(q('overlay.browser=dark&screenshot.overlay.browser=light&overlay.background=red').screenshot)
      .toMatchObject({ overlay: { browser: 'light', background: 'red' } })
    expect(q('pdf.scale=2&scale=1').pdf).toMatchObject({ scale: 2 })
  })

  it('ignores the aliases otherwise, invalid values included', () => {
    expect(q('fullPage=true&type=gif&scale=99&margin=x&format=nope&element=a&overlay.background=bad')).toEqual(q(''))
  })

  it('does not let an alias switch its parent on', () => {
    expect(q('type=jpeg').screenshot).toBe(false)
    expect(q('format=A4').pdf).toBe(false)
  })
})

describe('§2 rejected parameters', () => {
  it.each(['path=/tmp/x', 'PATH=/x', 'Path', 'pdf.path=/x', 'pdf.PATH=/x', 'screenshot.path=x', 'Screenshot.Path=x', 'screen_shot.path=1'])('%s', (extra) => {
    expect(codeOf(extra)).toBe('EINVALQUERY')
  })

  it('rejects path inside a JSON value', () => {
    expectError(`pdf=${enc('{"path":"/tmp/a.pdf"}')}`, 'EINVALQUERY', 'pdf.path')
  })

  it('rejects queries over 32 KiB and accepts 32 KiB', () => {
    const filler = (n: number): string => `x=${'a'.repeat(n - BASE.length - 3)}`
    const atLimit = `${BASE}&${filler(32 * 1024)}`
    expect(Buffer.byteLength(atLimit)).toBe(32 * 1024)
    expect(() => parse(atLimit)).not.toThrow()
    expect(errorOf(`${atLimit}a`).code).toBe('EINVALQUERY')
    // Bytes, not characters.
    expect(errorOf(`${BASE}&x=${'é'.repeat(17_000)}`).code).toBe('EINVALQUERY')
  })
})

describe('§2 encoding', () => {
  it('decodes percent-escapes and + as space', () => {
    expect(q('waitForSelector=a+b%20c').waitForSelector).toBe('a b c')
    expect(q(`data.t%2Ex.selector=h1`).data).toEqual({ t: [{ attr: ['html'], type: 'auto' }] })
  })

  it.each(['%zz=1', 'a=%', 'a=%e', 'a=%C3%28', 'a=%ED%A0%80', 'v=%FF'])('rejects %s', (extra) => {
    expectError(extra, 'EINVALQUERY', 'query')
  })

  it('rejects ill-formed Unicode', () => {
    expectError('waitForSelector=\uD800', 'EINVALQUERY', 'query')
  })

  it('keeps unicode values', () => {
    expect(q(`waitForSelector=${enc('#日本語')}`).waitForSelector).toBe('#日本語')
  })
})

describe('§2 unknown parameters', () => {
  it('ignores them', () => {
    expect(q('v=42')).toEqual(q(''))
    expect(q('foo.bar.0=1&x')).toEqual(q(''))
  })

  it('hands them to function, as written', () => {
    const options = q('function=(args)%20%3D%3E%20args&v=42&my_arg=x&list.0=a&list.1=b&nested.a.b=c&Dup=1&dup=2')
    expect(options.args).toEqual({ v: '42', my_arg: 'x', list: ['a', 'b'], nested: { a: { b: 'c' } }, Dup: '1', dup: '2' })
  })

  it('keeps known names and aliases out of the arguments', () => {
    expect(q('function=()%3D%3E1&type=jpeg&url2=x').args).toEqual({ url2: 'x' })
  })
})

describe('§2 durations and CSS lengths', () => {
  it.each([
    ['500', 500], [500, 500], ['500ms', 500], ['10s', 10_000], ['1.5h', 5_400_000], ['2 days', 172_800_000],
    ['1d', 86_400_000], ['1 min', 60_000], [' 3s ', 3000]
  ] as const)('duration %j = %i ms', (value, expected) => {
    expect(parseDuration(value)).toBe(expected)
  })

  it('reads a plain number too large for a double as infinite', () => {
    expect(parseDuration('1e400')).toBe(Number.POSITIVE_INFINITY)
  })

  it.each(['', 'abc', '1 fortnight', '1e400ms', '1x', null, true])('duration %j is invalid', (value) => {
    expect(parseDuration(value)).toBeUndefined()
  })

  it.each([
    ['10', 10], ['10px', 10], ['1in', 96], ['2.54cm', 96], ['25.4mm', 96], [12, 12], ['0', 0], ['.5in', 48], ['1IN', 96]
  ] as const)('length %j = %f px', (value, expected) => {
    expect(parseCssLength(value)).toBe(expected)
  })

  it.each(['-1px', '1em', '1 pt', 'px', '', 'abc'])('length %j is invalid', (value) => {
    expect(parseCssLength(value)).toBeUndefined()
  })
})

describe('§1.4 check order', () => {
  it('gives ETTL, not EINVALTTL, for ttl=100 on free', () => {
    expectError('ttl=100', 'ETTL', 'ttl', FREE)
    expectError('ttl=100', 'EINVALTTL', 'ttl', PRO)
  })

  it('puts parsing (4) before plan gates (5)', () => {
    expectError('ttl=1d&path=x', 'EINVALQUERY', 'path', FREE)
    expectError('ttl=1d&%zz', 'EINVALQUERY', 'query', FREE)
    expectError(`ttl=1d&screenshot=${enc('{bad')}`, 'EINVALQUERY', 'screenshot', FREE)
    expectError(`ttl=1d&data.x=${enc('[bad')}`, 'EINVALDATA', 'data.x', FREE)
  })

  it('puts plan gates (5) before value validation (6)', () => {
    expect(errorOf('ttl=1d', FREE).code).toBe('ETTL') // no url at all
    expect(codeOf('device=toaster&headers.a=b', FREE)).toBe('EHEADERS')
    expect(codeOf('proxy=ftp://nope', FREE)).toBe('EPROXY')
    expect(codeOf('filename=../../etc', FREE)).toBe('EFILENAME')
    expect(codeOf('staleTtl=abc', FREE)).toBe('ESTTL')
    expect(codeOf(`cacheKey=${'x'.repeat(300)}`, FREE)).toBe('ECACHEKEY')
  })

  it('checks the gates in order: ttl, staleTtl, cacheKey, headers, proxy, filename', () => {
    const all = 'filename=a&proxy=http://p:1&headers.a=b&cacheKey=k&staleTtl=1&ttl=1d'
    expect(codeOf(all, FREE)).toBe('ETTL')
    expect(codeOf(all.replace('&ttl=1d', ''), FREE)).toBe('ESTTL')
    expect(codeOf('filename=a&proxy=http://p:1&headers.a=b&cacheKey=k', FREE)).toBe('ECACHEKEY')
    expect(codeOf('filename=a&proxy=http://p:1&headers.a=b', FREE)).toBe('EHEADERS')
    expect(codeOf('filename=a&proxy=http://p:1', FREE)).toBe('EPROXY')
    expect(codeOf('filename=a', FREE)).toBe('EFILENAME')
  })

  it('gates x-api-header-* request headers on free and merges them on pro', () => {
    const headers = { 'x-api-header-user-agent': 'from-header' }
    const err = errorOf(BASE, { ...FREE, headers })
    expect(err.code).toBe('EHEADERS')
    expect(err.status).toBe(403)
    expect(Object.keys(err.data)).toEqual(['x-api-header-user-agent'])
    expect(q('headers.user_agent=from-query', { ...PRO, headers }).headers).toEqual({ 'user-agent': 'from-header' })
  })

  it('lets force and the other free parameters through on free', () => {
    expect(q('force=true&screenshot&device=iphone 15&timeout=5s', FREE)).toMatchObject({ force: true, device: 'iPhone 15', timeout: 5000 })
  })

  it('gives gate errors 403 and validation errors 400', () => {
    for (const [extra, code] of [['ttl=1d', 'ETTL'], ['staleTtl=1', 'ESTTL'], ['cacheKey=a', 'ECACHEKEY'], ['headers.a=b', 'EHEADERS'], ['proxy=http://a:1', 'EPROXY'], ['filename=a', 'EFILENAME']] as const) {
      const err = errorOf(`${BASE}&${extra}`, FREE)
      expect(err.code).toBe(code)
      expect(err.status).toBe(403)
      expect(err.data[extra.split('=')[0]?.split('.')[0] ?? '']).toMatch(/pro plan/)
    }
    expect(errorOf(`${BASE}&video=maybe`).status).toBe(400)
  })

  it('checks url first among values', () => {
    expect(errorOf('device=toaster&ttl=1').code).toBe('EINVALURL')
    expect(errorOf('url=nope&device=toaster').code).toBe('EINVALURL')
  })
})

describe('§3.1 url', () => {
  it('normalizes the URL', () => {
    expect(parse('url=HTTPS://Example.COM:443/a/../b?q=1&x=1').url).toBe('https://example.com/b?q=1')
    expect(parse(`url=${enc('https://bücher.de/straße?x=1&y=2#frag')}`).url).toBe('https://xn--bcher-kva.de/stra%C3%9Fe?x=1&y=2#frag')
    expect(parse(`url=${enc('http://example.com:8080/#/route')}`).url).toBe('http://example.com:8080/#/route')
    expect(parse(`url=${enc('  https://example.com  ')}`).url).toBe('https://example.com/')
  })

  it.each([
    ['', 'missing'], ['url=', 'empty'], ['url', 'no value'], ['url=no', 'no protocol'], ['url=example.com', 'no protocol'],
    [`url=${enc('ftp://example.com/')}`, 'ftp'], [`url=${enc('file:///etc/passwd')}`, 'file'], [`url=${enc('javascript:alert(1)')}`, 'javascript'],
    [`url=${enc('http://')}`, 'hostless'], [`url=${enc('data:text/html,hi')}`, 'data'], ['url.a=1', 'object']
  ])('%s (%s) gives EINVALURL', (query) => {
    const err = errorOf(query)
    expect(err.code).toBe('EINVALURL')
    expect(Object.keys(err.data)).toEqual(['url'])
  })

  it('names the bad value in the message', () => {
    expect(errorOf('url=no').data.url).toBe('The URL `no` is not valid. It needs a protocol (http or https) and a hostname, and must be reachable.')
  })
})

describe('§3.1 meta', () => {
  const all = [...META_FIELDS]
  it.each([
    ['', all],
    ['meta=true', all],
    ['meta', all],
    ['meta=false', false],
    ['meta.title=true&meta.image=false', ['title']],
    ['meta.title=false', all.filter((f) => f !== 'title')],
    ['meta.title=false&meta.logo=false', all.filter((f) => f !== 'title' && f !== 'logo')],
    ['meta.logo.square=true', ['logo']],
    ['meta.logo.square=true&meta.title', ['title', 'logo']],
    ['meta.foo=true', all],
    ['meta.foo=true&meta.date=false', all.filter((f) => f !== 'date')],
    ['meta.Title=true', ['title']]
  ])('%s', (extra, fields) => {
    expect(q(extra).meta).toEqual(fields === false ? false : { fields })
  })

  it('normalizes an object that turns every field off to false', () => {
    expect(q(META_FIELDS.map((f) => `meta.${f}=false`).join('&')).meta).toBe(false)
  })

  it('rejects bad booleans', () => {
    expectError('meta=maybe', 'EINVALQUERY', 'meta')
    expectError('meta.title=yes', 'EINVALQUERY', 'meta.title')
  })
})

describe('§3.3 data', () => {
  it('reads a rule, with defaults', () => {
    expect(q('data.title.selector=h1').data).toEqual({ title: [{ selector: ['h1'], attr: ['html'], type: 'auto' }] })
  })

  it('reads every rule key', () => {
    const options = q(`data.price.selector=.price&data.price.attr=${enc('data-value')}&data.price.type=NUMBER&data.price.evaluate=${enc('() => 1')}`)
    expect(options.data).toEqual({ price: [{ selector: ['.price'], attr: ['data-value'], type: 'number', evaluate: '() => 1' }] })
  })

  it('reads fallbacks: rule arrays, selector arrays, attr arrays', () => {
    const json = enc(JSON.stringify([{ selector: ['h1', '.title'], attr: ['text', 'content'] }, { selector: 'title', attr: 'text' }]))
    expect(q(`data.title=${json}`).data).toEqual({
      title: [
        { selector: ['h1', '.title'], attr: ['text', 'content'], type: 'auto' },
        { selector: ['title'], attr: ['text'], type: 'auto' }
      ]
    })
  })

  it('canonicalizes attr keywords', () => {
    expect(q('data.x.attr=OUTERHTML').data?.x?.[0]?.attr).toEqual(['outerHTML'])
    expect(q('data.x.attr=Text').data?.x?.[0]?.attr).toEqual(['text'])
  })

  it('reads nested rules in attr', () => {
    const rule = {
      selectorAll: '.item',
      attr: { title: { selector: 'a', attr: 'text' }, href: { selector: 'a', attr: 'href', type: 'url' } }
    }
    expect(q(`data.items=${enc(JSON.stringify(rule))}`).data).toEqual({
      items: [{
        selectorAll: ['.item'],
        type: 'auto',
        attr: {
          title: [{ selector: ['a'], attr: ['text'], type: 'auto' }],
          href: [{ selector: ['a'], attr: ['href'], type: 'url' }]
        }
      }]
    })
  })

  it('accepts the official clients\' collection rules as they are', () => {
    const rules = {
      links: { selectorAll: 'a', attr: 'href', type: 'url' },
      images: { selectorAll: 'img', attr: 'src', type: 'image' },
      videos: { selectorAll: 'video', attr: 'src', type: 'video' },
      audios: { selectorAll: 'audio', attr: 'src', type: 'audio' },
      emails: { selectorAll: 'a[href^="mailto:"]', attr: 'href', type: 'email' }
    }
    const query = Object.entries(rules).map(([name, rule]) =>
      Object.entries(rule).map(([key, value]) => `data.${name}.${key}=${enc(value)}`).join('&')).join('&')
    const data = q(query).data ?? {}
    expect(Object.keys(data).sort()).toEqual(Object.keys(rules).sort())
    expect(data.emails).toEqual([{ selectorAll: ['a[href^="mailto:"]'], attr: ['href'], type: 'email' }])
  })

  it('keeps selectorAll when both selectors are given', () => {
    expect(q('data.x.selector=h1&data.x.selectorAll=h2').data).toEqual({ x: [{ selectorAll: ['h2'], attr: ['html'], type: 'auto' }] })
  })

  it('reads the whole document without a selector', () => {
    expect(q('data.body.attr=markdown').data).toEqual({ body: [{ attr: ['markdown'], type: 'auto' }] })
    expect(q('data.raw.attr=json&data.raw.type=object').data).toEqual({ raw: [{ attr: ['json'], type: 'object' }] })
    expect(q(`data.all=${enc('{}')}`).data).toEqual({ all: [{ attr: ['html'], type: 'auto' }] })
  })

  it.each([['data.foo=html', 'html'], ['data.bar=false', 'false'], ['data.x=', ''], ['data.x', ''], ['data.n=42', '42']])('rejects a primitive rule: %s', (extra, shown) => {
    const name = extra.split('=')[0] ?? ''
    const err = expectError(extra, 'EINVALDATA', name)
    expect(err.data[name]).toBe(`The \`${name}\` has an invalid value (\`${shown}\`). A rule must be an object (or array of objects) with extraction options.`)
  })

  it('rejects primitives inside a rule array, under the field', () => {
    expectError(`data.t=${enc('["h1"]')}`, 'EINVALDATA', 'data.t')
    expectError(`data.t=${enc('[]')}`, 'EINVALDATA', 'data.t')
    expectError(`data.t=${enc('[{"selector":"h1"},3]')}`, 'EINVALDATA', 'data.t')
  })

  it('rejects an unknown type', () => {
    const err = expectError('data.x.selector=h1&data.x.type=banana', 'EINVALDATA', 'data.x')
    expect(err.data['data.x']).toMatch(/banana/)
  })

  it('rejects other bad rules', () => {
    expectError('data=foo', 'EINVALDATA', 'data')
    expectError('data.x.selector=h1&data.x.0.selector=h2', 'EINVALDATA', 'data.x')
    expectError('data.x.selector=h1&data.x.attr=json', 'EINVALDATA', 'data.x')
    expectError(`data.x.attr=${enc('bad name')}`, 'EINVALDATA', 'data.x')
    expectError('data.x.attr=text&data.x.attr.y.selector=a', 'EINVALDATA', 'data.x')
    expectError(`data.x=${enc('{"selector":{"a":1}}')}`, 'EINVALDATA', 'data.x')
    expectError(`data.x.type=${enc('["url"]')}`, 'EINVALDATA', 'data.x')
    expectError('data.x.selector.a=h1', 'EINVALDATA', 'data.x')
    expectError(`data.x=${enc('{"selector":["h1",2]}')}`, 'EINVALDATA', 'data.x')
  })

  it('checks that evaluate parses, without running it', () => {
    expect(q(`data.x.evaluate=${enc('document.title')}`).data?.x?.[0]?.evaluate).toBe('document.title')
    expect(q(`data.x.evaluate=${enc('async () => { await 1; return 2 }')}`).data?.x?.[0]?.evaluate).toBeDefined()
    expect(q(`data.x.evaluate=${enc('globalThis.__pagecastRan = true')}`).data).toBeDefined()
    expect((globalThis as Record<string, unknown>).__pagecastRan).toBeUndefined()
    const err = expectError(`data.x.evaluate=${enc('() => {')}`, 'EINVALEVAL', 'data.x.evaluate')
    expect(err.data['data.x.evaluate']).toMatch(/does not parse/)
    expectError('data.x.evaluate=', 'EINVALEVAL', 'data.x.evaluate')
    expectError(`data.x.selector=a&data.x.attr.inner.evaluate=${enc('1 +')}`, 'EINVALEVAL', 'data.x.attr.inner.evaluate')
  })
})

describe('§3.1 filter, embed, stream', () => {
  it('filter: absent by default; split, trimmed, sorted, deduplicated', () => {
    expect(q('filter=').filter).toBeUndefined()
    expect(q(`filter=${enc('url, title,image.url,title,')}`).filter).toEqual(['image.url', 'title', 'url'])
    expectError('filter.0=a', 'EINVALQUERY', 'filter')
  })

  it('embed: kept as a dot path; drops filter', () => {
    expect(q('embed=screenshot.url').embed).toBe('screenshot.url')
    expect(q('embed=title&filter=url').filter).toBeUndefined()
    expect(q('embed=').embed).toBe('')
  })

  it('stream=<f> is embed=<f>.url, and embed wins', () => {
    expect(q('stream=screenshot').embed).toBe('screenshot.url')
    expect(q('stream=screenshot&embed=pdf.url').embed).toBe('pdf.url')
    expect(q('embed=pdf.url&stream=screenshot').embed).toBe('pdf.url')
  })
})

describe('§3.2 screenshot', () => {
  it('is off by default and has defaults when on', () => {
    expect(q('').screenshot).toBe(false)
    expect(q('screenshot=true').screenshot).toEqual({
      type: 'png', fullPage: false, omitBackground: false, overlay: {}, codeScheme: 'atom-dark'
    })
  })

  it.each([['png', 'png'], ['jpeg', 'jpeg'], ['jpg', 'jpeg'], ['JPG', 'jpeg'], ['webp', 'webp']])('type %s', (value, type) => {
    expect(q(`screenshot.type=${value}`).screenshot).toMatchObject({ type })
  })

  it('rejects other types', () => {
    expectError('screenshot.type=gif', 'EINVALQUERY', 'screenshot.type')
  })

  it('quality: 80 by default, only for jpeg and webp', () => {
    expect(q('screenshot.type=jpeg').screenshot).toMatchObject({ quality: 80 })
    expect(q('screenshot.type=webp&screenshot.quality=0').screenshot).toMatchObject({ quality: 0 })
    expect(q('screenshot.type=jpeg&screenshot.quality=100').screenshot).toMatchObject({ quality: 100 })
    expect(q('screenshot.quality=50').screenshot).not.toHaveProperty('quality')
    expect(q('screenshot.quality=50')).toEqual(q('screenshot'))
    for (const bad of ['101', '-1', '50.5', 'high', '']) expectError(`screenshot.type=jpeg&screenshot.quality=${bad}`, 'EINVALQUERY', 'screenshot.quality')
  })

  it('fullPage, element, omitBackground', () => {
    expect(q('screenshot.fullPage').screenshot).toMatchObject({ fullPage: true })
    expect(q('screenshot.fullPage=true&screenshot.element=%23main').screenshot).toMatchObject({ fullPage: false, element: '#main' })
    expect(q('screenshot.element=').screenshot).not.toHaveProperty('element')
    expect(q('screenshot.omitBackground=true').screenshot).toMatchObject({ omitBackground: true })
    expect(q('screenshot.type=jpeg&screenshot.omitBackground=true').screenshot).toMatchObject({ omitBackground: false })
    expectError('screenshot.fullPage=2', 'EINVALQUERY', 'screenshot.fullPage')
    expectError('screenshot.omitBackground=no', 'EINVALQUERY', 'screenshot.omitBackground')
  })

  it('overlay.browser', () => {
    expect(q('screenshot.overlay.browser=DARK').screenshot).toMatchObject({ overlay: { browser: 'dark' } })
    expect(q('screenshot.overlay.browser=light').screenshot).toMatchObject({ overlay: { browser: 'light' } })
    expectError('screenshot.overlay.browser=sepia', 'EINVALQUERY', 'screenshot.overlay.browser')
    expectError('screenshot.overlay=dark', 'EINVALQUERY', 'screenshot.overlay')
  })

  it.each([
    ['#FFF', '#fff'], ['#a1b2c3', '#a1b2c3'], ['#a1b2c3d4', '#a1b2c3d4'], ['Red', 'red'], ['transparent', 'transparent'],
    ['rgb(255, 0, 0)', 'rgb(255, 0, 0)'], ['rgba(0,0,0,0.5)', 'rgba(0,0,0,0.5)'], ['rgb(10% 20% 30% / 50%)', 'rgb(10% 20% 30% / 50%)'],
    ['linear-gradient(90deg, #ff0000 0%, rgba(0,0,255,0.5) 100%)', 'linear-gradient(90deg, #ff0000 0%, rgba(0,0,255,0.5) 100%)'],
    ['radial-gradient(circle at center, red, blue)', 'radial-gradient(circle at center, red, blue)'],
    ['https://cdn.example.com/bg.png', 'https://cdn.example.com/bg.png'], ['HTTP://Example.com/a b.jpg', 'http://example.com/a%20b.jpg']
  ])('overlay.background %s', (value, expected) => {
    expect(q(`screenshot.overlay.background=${enc(value)}`).screenshot).toMatchObject({ overlay: { background: expected } })
  })

  it.each([
    'notacolor', '#ggg', '#12345', 'rgb(300,0,0)', 'rgb(1,2)', 'rgba(0,0,0,2)', 'hsl(0, 100%, 50%)', 'url(https://x.com/a.png)',
    'linear-gradient(red, blue); background: url(x)', 'linear-gradient(red, blue', 'linear-gradient()', 'javascript:alert(1)',
    'ftp://example.com/a.png', 'https://', ''
  ])('overlay.background %j gives EINVALOVERLAYBG', (value) => {
    expectError(`screenshot.overlay.background=${enc(value)}`, 'EINVALOVERLAYBG', 'screenshot.overlay.background')
  })

  it('codeScheme: atom-dark by default, a prism-themes id or an http(s) CSS URL', () => {
    expect(q('screenshot.codeScheme=dracula').screenshot).toMatchObject({ codeScheme: 'dracula' })
    expect(q('screenshot.codeScheme=Prism-One-Dark.css').screenshot).toMatchObject({ codeScheme: 'one-dark' })
    expect(q(`screenshot.codeScheme=${enc('https://cdn.example.com/theme.css')}`).screenshot)
      .toMatchObject({ codeScheme: 'https://cdn.example.com/theme.css' })
    expect(q('screenshot.codeScheme=atom-dark')).toEqual(q('screenshot'))
    expect(CODE_SCHEMES).toContain('atom-dark')
    expectError('screenshot.codeScheme=neon-unicorn', 'EINVALQUERY', 'screenshot.codeScheme')
    expectError(`screenshot.codeScheme=${enc('/relative.css')}`, 'EINVALQUERY', 'screenshot.codeScheme')
  })

  it('rejects animated', () => {
    expectError('screenshot.animated=true', 'EINVALQUERY', 'screenshot.animated')
    expectError('screenshot.animated', 'EINVALQUERY', 'screenshot.animated')
    expect(q('screenshot.animated=false')).toEqual(q('screenshot'))
  })

  it('reads optimizeForSpeed for png only, kept only when true (one cache entry for the default, stated or not)', () => {
    expect(q('screenshot.optimizeForSpeed=true').screenshot).toMatchObject({ type: 'png', optimizeForSpeed: true })
    expect(q('screenshot.optimizeForSpeed').screenshot).toMatchObject({ optimizeForSpeed: true })
    expect(q('screenshot.optimizeForSpeed=false')).toEqual(q('screenshot'))
    expect(q('screenshot.type=jpeg&screenshot.optimizeForSpeed=true')).toEqual(q('screenshot.type=jpeg'))
    expect(cacheKeyOf(q('screenshot.optimizeForSpeed=true'))).not.toBe(cacheKeyOf(q('screenshot')))
    expectError('screenshot.optimizeForSpeed=fast', 'EINVALQUERY', 'screenshot.optimizeForSpeed')
  })

  it('rejects a bad switch', () => {
    expectError('screenshot=maybe', 'EINVALQUERY', 'screenshot')
    expectError(`screenshot=${enc('[1]')}`, 'EINVALQUERY', 'screenshot')
  })
})

describe('§3.2 pdf', () => {
  it('is off by default and has defaults when on', () => {
    expect(q('').pdf).toBe(false)
    expect(q('pdf').pdf).toEqual({
      format: 'A4',
      margin: { top: DEFAULT_MARGIN_PX, right: DEFAULT_MARGIN_PX, bottom: DEFAULT_MARGIN_PX, left: DEFAULT_MARGIN_PX },
      scale: 0.6,
      landscape: false,
      printBackground: true
    })
    expect(q('pdf').mediaType).toBe('print')
    expect(q('pdf&mediaType=screen').mediaType).toBe('screen')
  })

  it.each([['letter', 'Letter'], ['LEGAL', 'Legal'], ['Tabloid', 'Tabloid'], ['ledger', 'Ledger'], ['a0', 'A0'], ['A6', 'A6']])('format %s', (value, format) => {
    expect(q(`pdf.format=${value}`).pdf).toMatchObject({ format })
  })

  it('rejects other formats', () => {
    expectError('pdf.format=A7', 'EINVALQUERY', 'pdf.format')
  })

  it('width and height override format', () => {
    const pdf = q('pdf.format=Letter&pdf.width=8in&pdf.height=10in').pdf
    expect(pdf).toMatchObject({ width: 768, height: 960 })
    expect(pdf).not.toHaveProperty('format')
    expect(q('pdf.width=8in&pdf.height=10in')).toEqual(q('pdf.width=768&pdf.height=960px&pdf.format=Legal'))
    expect(q('pdf.width=100').pdf).toMatchObject({ width: 100, height: 1123.2 })
    expectError('pdf.width=0', 'EINVALQUERY', 'pdf.width')
    expectError('pdf.height=10em', 'EINVALQUERY', 'pdf.height')
  })

  it('margin: a string for all sides, an object with missing sides at 0', () => {
    expect(q('pdf.margin=1in').pdf).toMatchObject({ margin: { top: 96, right: 96, bottom: 96, left: 96 } })
    expect(q('pdf.margin.top=10mm&pdf.margin.left=5').pdf).toMatchObject({ margin: { top: 37.7953, right: 0, bottom: 0, left: 5 } })
    expect(q(`pdf.margin=${enc('{"bottom":"1cm"}')}`).pdf).toMatchObject({ margin: { top: 0, right: 0, bottom: 37.7953, left: 0 } })
    expect(q('pdf.margin=0.35cm')).toEqual(q('pdf'))
    expectError('pdf.margin=wide', 'EINVALQUERY', 'pdf.margin')
    expectError('pdf.margin.top=-1cm', 'EINVALQUERY', 'pdf.margin.top')
  })

  it('scale: 0.1 to 2', () => {
    expect(q('pdf.scale=0.1').pdf).toMatchObject({ scale: 0.1 })
    expect(q('pdf.scale=2').pdf).toMatchObject({ scale: 2 })
    for (const bad of ['0.05', '2.5', 'big', '0']) expectError(`pdf.scale=${bad}`, 'EINVALQUERY', 'pdf.scale')
  })

  it('landscape and printBackground', () => {
    expect(q('pdf.landscape').pdf).toMatchObject({ landscape: true })
    expect(q('pdf.printBackground=false').pdf).toMatchObject({ printBackground: false })
    expectError('pdf.landscape=sideways', 'EINVALQUERY', 'pdf.landscape')
  })

  it.each([['1-5, 8, 11-13', '1-5,8,11-13'], ['5-', '5-'], ['-3', '-3'], ['2', '2'], [' ', undefined]])('pageRanges %j', (value, expected) => {
    const pdf = q(`pdf.pageRanges=${enc(value)}`).pdf
    if (expected === undefined) expect(pdf).not.toHaveProperty('pageRanges')
    else expect(pdf).toMatchObject({ pageRanges: expected })
  })

  it.each(['abc', '0', '5-3', '1--2', '1,,2', '1-2-3', 'all'])('rejects pageRanges %j', (value) => {
    expectError(`pdf.pageRanges=${enc(value)}`, 'EINVALQUERY', 'pdf.pageRanges')
  })
})

describe('§3.4 detectors and code', () => {
  it.each(['video', 'audio', 'palette'] as const)('%s: false by default, a boolean', (name) => {
    expect(q('')[name]).toBe(false)
    expect(q(`${name}=true`)[name]).toBe(true)
    expectError(`${name}=sometimes`, 'EINVALQUERY', name)
  })

  it('iframe: off by default; params lower-cased', () => {
    expect(q('').iframe).toBe(false)
    expect(q('iframe').iframe).toEqual({})
    expect(q('iframe.maxWidth=400&iframe.maxwidth=500').iframe).toEqual({ maxwidth: '500' })
    expect(q('iframe.hide_media=true').iframe).toEqual({ hide_media: 'true' })
    expect(q(`iframe=${enc('{"maxWidth":400,"omit_script":true}')}`).iframe).toEqual({ maxwidth: '400', omit_script: 'true' })
    expectError('iframe=maybe', 'EINVALQUERY', 'iframe')
    expectError('iframe.a.b=1', 'EINVALQUERY', 'iframe.a')
  })

  it('insights: off by default; both parts on once on', () => {
    expect(q('').insights).toBe(false)
    expect(q('insights').insights).toEqual({ technologies: true, lighthouse: { output: 'json', preset: 'default', settings: {} } })
    expect(q('insights.technologies=false').insights).toEqual({ technologies: false, lighthouse: { output: 'json', preset: 'default', settings: {} } })
    expect(q('insights.lighthouse=false').insights).toEqual({ technologies: true, lighthouse: false })
    expect(q('insights.lighthouse.output=HTML&insights.lighthouse.preset=desktop&insights.lighthouse.only_categories.0=performance&insights.lighthouse.screenEmulation.disabled=true&insights.lighthouse.maxWaitForLoad=5000').insights).toEqual({
      technologies: true,
      lighthouse: { output: 'html', preset: 'desktop', settings: { onlyCategories: ['performance'], screenEmulation: { disabled: true }, maxWaitForLoad: 5000 } }
    })
    expectError('insights.lighthouse.preset=fast', 'EINVALQUERY', 'insights.lighthouse.preset')
    expectError('insights.lighthouse.output=pdf', 'EINVALQUERY', 'insights.lighthouse.output')
    expectError('insights.technologies=sure', 'EINVALQUERY', 'insights.technologies')
  })

  it('insights.lighthouse: refuses the settings that name a page for Lighthouse\'s browser to load (issue 20)', () => {
    for (const page of ['chrome://crash', 'file:///etc/passwd', 'view-source:https://example.com/', 'about:blank', 'https://example.com/']) {
      const err = expectError(`insights.lighthouse.blankPage=${encodeURIComponent(page)}`, 'EINVALQUERY', 'insights.lighthouse.blankPage')
      expect(String(err.data['insights.lighthouse.blankPage'])).toContain('page')
    }
    // However it is spelled or sent.
    expectError('insights.lighthouse.blank_page=chrome%3A%2F%2Fcrash', 'EINVALQUERY', 'insights.lighthouse.blankPage')
    expectError(`insights.lighthouse=${enc('{"blankPage":"chrome://crash"}')}`, 'EINVALQUERY', 'insights.lighthouse.blankPage')
  })

  it('ping: every kind on by default; ping=false or ping.<kind>=false', () => {
    expect(q('ping=false').ping).toEqual({ image: false, logo: false, video: false, audio: false })
    expect(q('ping.image=false').ping).toEqual({ image: false, logo: true, video: true, audio: true })
    expect(q('ping.logo=false&ping.audio=false&ping.other=false').ping).toEqual({ image: true, logo: false, video: true, audio: false })
    expect(q('ping=true')).toEqual(q(''))
    expectError('ping.image=nah', 'EINVALQUERY', 'ping.image')
  })
})

describe('§3.4 function', () => {
  const source = '({ page }) => page.title()'
  const encoded = (prefix: string, text: string): string =>
    `${prefix}#${(prefix === 'br' ? brotliCompressSync(text) : gzipSync(text)).toString('base64url')}`

  it('is absent by default, and keeps the source', () => {
    expect(q('')).not.toHaveProperty('function')
    expect(q(`function=${enc(source)}`).function).toEqual({ source, timeLimit: 28_000 })
    expect(q(`function=${enc('async function ({ page }) { return 1 }')}`).function).toBeDefined()
    expect(q(`function=${enc('x => x')}`).function).toBeDefined()
  })

  it.each(['br', 'gz'])('decodes %s# payloads', (prefix) => {
    expect(q(`function=${enc(encoded(prefix, source))}`).function?.source).toBe(source)
  })

  it('handles lz# with lz-string when it is installed, else explains', () => {
    const require = createRequire(import.meta.url)
    let lz: { compressToEncodedURIComponent: (s: string) => string } | undefined
    try {
      lz = require('lz-string') as typeof lz
    } catch {
      lz = undefined
    }
    if (lz === undefined) {
      const err = expectError(`function=${enc('lz#N4Ig')}`, 'EINVALFUNCTION', 'function')
      expect(err.data.function).toMatch(/lz-string/)
    } else {
      expect(q(`function=${enc(`lz#${lz.compressToEncodedURIComponent(source)}`)}`).function?.source).toBe(source)
    }
  })

  it('rejects bad payloads', () => {
    expectError(`function=${enc('br#not base64!')}`, 'EINVALFUNCTION', 'function')
    expectError(`function=${enc('gz#AAAA')}`, 'EINVALFUNCTION', 'function')
    expectError(`function=${enc('br#')}`, 'EINVALFUNCTION', 'function')
    expectError(`function=${enc(`gz#${gzipSync(Buffer.from([0xff, 0xfe, 0x00])).toString('base64url')}`)}`, 'EINVALFUNCTION', 'function')
  })

  it('caps the decoded size at 64 KiB', () => {
    const big = `() => ${JSON.stringify('a'.repeat(70 * 1024))}`
    const err = expectError(`function=${enc(encoded('br', big))}`, 'EINVALFUNCTION', 'function')
    expect(err.data.function).toMatch(/64 KiB/)
    const fits = `() => ${JSON.stringify('a'.repeat(60 * 1024))}`
    expect(q(`function=${enc(encoded('gz', fits))}`).function?.source).toBe(fits)
  })

  it('sets the time limit by plan: 5 s free, 28 s pro', () => {
    expect(q(`function=${enc(source)}`, FREE).function?.timeLimit).toBe(5000)
    expect(q(`function=${enc(source)}`, PRO).function?.timeLimit).toBe(28_000)
  })

  it('limits free sources to 1024 bytes', () => {
    const at = `() => ${JSON.stringify('a'.repeat(1024 - 8))}`
    expect(Buffer.byteLength(at)).toBe(1024)
    expect(q(`function=${enc(at)}`, FREE).function?.source).toBe(at)
    const over = `() => ${JSON.stringify('a'.repeat(1024 - 7))}`
    expectError(`function=${enc(over)}`, 'EINVALFUNCTION', 'function', FREE)
    expect(q(`function=${enc(over)}`, PRO).function?.source).toBe(over)
    expectError(`function=${enc(encoded('br', over))}`, 'EINVALFUNCTION', 'function', FREE)
  })

  it('rejects sources that do not parse as a function, without running them', () => {
    expectError(`function=${enc('() => {')}`, 'EINVALFUNCTION', 'function')
    expectError(`function=${enc('1 + 1')}`, 'EINVALFUNCTION', 'function')
    expectError(`function=${enc('document.title')}`, 'EINVALFUNCTION', 'function')
    expectError('function=', 'EINVALFUNCTION', 'function')
    expect(q(`function=${enc('(() => { globalThis.__pagecastFn = 1 })()')}`)).toBeDefined()
    expect((globalThis as Record<string, unknown>).__pagecastFn).toBeUndefined()
  })

  it('gives unknown parameters to function only', () => {
    expect(q('foo=1').args).toEqual({})
    expect(q(`function=${enc(source)}&foo=1`).args).toEqual({ foo: '1' })
  })
})

describe('§3.5 browser and emulation', () => {
  it('device: Macbook Pro 13 by default; any spelling; Playwright names', () => {
    expect(q('device=iphone-15-pro-max')).toMatchObject({
      device: 'iPhone 15 Pro Max',
      viewport: { width: 430, height: 739, deviceScaleFactor: 3, isMobile: true, hasTouch: true, isLandscape: false }
    })
    expect(q('device=ipad landscape').viewport).toMatchObject({ width: 1024, height: 768, isLandscape: true })
    expect(q('device=Pixel 7').device).toBe('Pixel 7')
    expect(q('device=macbook pro 13')).toEqual(q(''))
  })

  it('device: unknown names give EINVALQUERY with up to three suggestions', () => {
    const err = expectError('device=iphone 15 pro maxx', 'EINVALQUERY', 'device')
    expect(err.data.device).toMatch(/`iPhone 15 Pro Max`/)
    expect(String(err.data.device).match(/`[^`]+`/g)?.length).toBeLessThanOrEqual(4)
    expectError('device=', 'EINVALQUERY', 'device')
    expect(errorOf(`${BASE}&device=toaster`).data.device).toBe('The device `toaster` is unknown.')
  })

  it('viewport: merged over the device', () => {
    expect(q('device=iPhone X&viewport.width=500&viewport.isLandscape=true').viewport)
      .toEqual({ width: 500, height: 812, deviceScaleFactor: 3, isMobile: true, hasTouch: true, isLandscape: true })
    expect(q('viewport.deviceScaleFactor=1&viewport.is_mobile').viewport)
      .toEqual({ width: 1280, height: 800, deviceScaleFactor: 1, isMobile: true, hasTouch: false, isLandscape: false })
    expect(q('viewport.width=1280')).toEqual(q(''))
  })

  it.each([
    ['viewport.width=0', 'viewport.width'], ['viewport.width=8193', 'viewport.width'], ['viewport.height=1.5', 'viewport.height'],
    ['viewport.deviceScaleFactor=5', 'viewport.deviceScaleFactor'], ['viewport.deviceScaleFactor=0.05', 'viewport.deviceScaleFactor'],
    ['viewport.hasTouch=touchy', 'viewport.hasTouch'], ['viewport=big', 'viewport']
  ])('viewport: %s gives EINVALQUERY', (extra, param) => {
    expectError(extra, 'EINVALQUERY', param)
  })

  it('colorScheme', () => {
    expect(q('colorScheme=DARK').colorScheme).toBe('dark')
    expect(q('colorScheme=no-preference')).toEqual(q(''))
    expectError('colorScheme=blue', 'EINVALQUERY', 'colorScheme')
  })

  it('mediaType', () => {
    expect(q('mediaType=print').mediaType).toBe('print')
    expectError('mediaType=tv', 'EINVALQUERY', 'mediaType')
  })

  it.each([['javascript', true], ['animations', false], ['adblock', true]] as const)('%s defaults to %s', (name, fallback) => {
    expect(q('')[name]).toBe(fallback)
    expect(q(`${name}=${String(!fallback)}`)[name]).toBe(!fallback)
    expectError(`${name}=nope`, 'EINVALQUERY', name)
  })

  it('headers: forwarded with hop-by-hop, host and content-length dropped', () => {
    expect(q('headers.cookie=a%3D1&headers.connection=close&headers.host=evil&headers.content_length=5&headers.transfer-encoding=chunked&headers.x_custom=1').headers)
      .toEqual({ cookie: 'a=1', 'x-custom': '1' })
  })

  it('headers: x-api-header-* merged in and winning', () => {
    const headers = { 'x-api-header-accept-language': 'fr', 'X-Api-Header-Cookie': ['a=1', 'b=2'], 'x-api-header-connection': 'close', other: 'x' }
    expect(q('headers.acceptLanguage=en&headers.dnt=1', { ...PRO, headers }).headers)
      .toEqual({ 'accept-language': 'fr', cookie: 'a=1, b=2', dnt: '1' })
  })

  it('headers: rejects bad names and values', () => {
    expectError('headers.a%0Db=1', 'EINVALQUERY')
    expectError('headers.x=a%0D%0Ab', 'EINVALQUERY', 'headers.x')
    expectError('headers=plain', 'EINVALQUERY', 'headers')
    expectError(`headers.x=${enc('日本')}`, 'EINVALQUERY', 'headers.x')
  })
})

describe('§3.6 loading and interaction', () => {
  it('prerender: auto by default, true, false, auto', () => {
    expect(q('prerender').prerender).toBe(true)
    expect(q('prerender=false').prerender).toBe(false)
    expect(q('prerender=AUTO')).toEqual(q(''))
    expectError('prerender=sometimes', 'EINVALQUERY', 'prerender')
  })

  it('waitUntil: auto by default; a set of events', () => {
    expect(q('waitUntil=load').waitUntil).toEqual(['load'])
    expect(q('waitUntil=networkidle2&waitUntil=LOAD&waitUntil=load').waitUntil).toEqual(['load', 'networkidle2'])
    expect(q('waitUntil=networkidle').waitUntil).toEqual(['networkidle0'])
    expect(q('waitUntil=auto')).toEqual(q(''))
    expectError('waitUntil=commit', 'EINVALQUERY', 'waitUntil')
    expectError('waitUntil=auto&waitUntil=load', 'EINVALQUERY', 'waitUntil')
  })

  it('waitForSelector and scroll', () => {
    expect(q('waitForSelector=%23app').waitForSelector).toBe('#app')
    expect(q('waitForSelector=')).toEqual(q(''))
    expect(q('scroll=footer').scroll).toBe('footer')
  })

  it('waitForTimeout: a duration, at most timeout', () => {
    expect(q('waitForTimeout=2s').waitForTimeout).toBe(2000)
    expect(q('waitForTimeout=0').waitForTimeout).toBe(0)
    expect(q('waitForTimeout=1m&timeout=10s').waitForTimeout).toBe(10_000)
    expectError('waitForTimeout=-1s', 'EINVALQUERY', 'waitForTimeout')
    expectError('waitForTimeout=soon', 'EINVALQUERY', 'waitForTimeout')
  })

  it('timeout: MAX_TIMEOUT by default and as ceiling; > 0', () => {
    expect(q('timeout=10s').timeout).toBe(10_000)
    expect(q('timeout=1500').timeout).toBe(1500)
    expect(q('timeout=1h').timeout).toBe(MAX_TIMEOUT)
    expect(q('timeout=99999999999999999999999').timeout).toBe(MAX_TIMEOUT)
    expect(q(`timeout=${'9'.repeat(400)}`).timeout).toBe(MAX_TIMEOUT)
    expectError(`ttl=${'9'.repeat(400)}`, 'EINVALTTL', 'ttl')
    expect(q('timeout=28s')).toEqual(q(''))
    expect(q('', { ...PRO, maxTimeout: 5000 }).timeout).toBe(5000)
    for (const bad of ['0', '-1', '-5s', 'soon', '']) expectError(`timeout=${bad}`, 'EINVALQUERY', 'timeout')
  })

  it('click, modules, scripts, styles: lists', () => {
    expect(q('click=%23a').click).toEqual(['#a'])
    expect(q('modules=https://cdn.example.com/m.js').modules).toEqual(['https://cdn.example.com/m.js'])
    expect(q(`scripts=${enc('[1,2].forEach(f)')}`).scripts).toEqual(['[1,2].forEach(f)'])
    expect(q(`styles=${enc('body { color: red }')}&styles=${enc('{ }')}`).styles).toEqual(['body { color: red }', '{ }'])
    expect(q('click=')).toEqual(q(''))
    expectError(`click=${enc('[1]')}`, 'EINVALQUERY', 'click')
    expectError('click.a=1', 'EINVALQUERY', 'click')
  })

  it('retry: integer 0-5, 2 by default', () => {
    expect(q('retry=0').retry).toBe(0)
    expect(q('retry=5').retry).toBe(5)
    for (const bad of ['6', '-1', '1.5', 'x']) expectError(`retry=${bad}`, 'EINVALQUERY', 'retry')
  })

  it('proxy: http, https or socks5, as a string or {url}', () => {
    expect(q(`proxy=${enc('http://user:pass@proxy.example:8080')}`).proxy).toBe('http://user:pass@proxy.example:8080/')
    expect(q(`proxy=${enc('socks5://proxy.example:1080')}`).proxy).toBe('socks5://proxy.example:1080')
    expect(q(`proxy.url=${enc('https://proxy.example')}&proxy.countryCode=us`).proxy).toBe('https://proxy.example/')
    expect(q(`proxy=${enc('{"url":"http://p.example:3128"}')}`).proxy).toBe('http://p.example:3128/')
    for (const bad of ['ftp://proxy.example', 'not a url', '', 'socks4://p.example:1080', 'http://']) {
      expectError(`proxy=${enc(bad)}`, 'EINVALPROXY', 'proxy')
    }
  })
})

describe('§3.7 cache and delivery', () => {
  it('ttl: 24h by default; min, max, durations', () => {
    expect(q('ttl=min').ttl).toBe(60_000)
    expect(q('ttl=MAX').ttl).toBe(31 * 86_400_000)
    expect(q('ttl=1d')).toEqual(q(''))
    expect(q('ttl=2h').ttl).toBe(7_200_000)
    expect(q('ttl=60000').ttl).toBe(60_000)
    for (const bad of ['59s', '32d', 'forever', '100', '-1d', '']) expectError(`ttl=${bad}`, 'EINVALTTL', 'ttl')
  })

  it('staleTtl: false by default; true is 0; lower than ttl', () => {
    expect(q('staleTtl=true').staleTtl).toBe(0)
    expect(q('staleTtl').staleTtl).toBe(0)
    expect(q('staleTtl=false')).toEqual(q(''))
    expect(q('ttl=1d&staleTtl=12h').staleTtl).toBe(43_200_000)
    expectError('ttl=1h&staleTtl=1h', 'EINVALSTTL', 'staleTtl')
    expectError('ttl=min&staleTtl=1m', 'EINVALSTTL', 'staleTtl')
    expect(q('ttl=min&staleTtl=0').staleTtl).toBe(0)
    for (const bad of ['soon', '-1s', '2d']) expectError(`staleTtl=${bad}`, 'EINVALSTTL', 'staleTtl')
  })

  it('force', () => {
    expect(q('force').force).toBe(true)
    expect(q('force=false')).toEqual(q(''))
    expectError('force=please', 'EINVALQUERY', 'force')
  })

  it('cacheKey: up to 256 characters', () => {
    expect(q('cacheKey=v2').cacheKey).toBe('v2')
    expect(q(`cacheKey=${'é'.repeat(256)}`).cacheKey).toHaveLength(256)
    expectError(`cacheKey=${'a'.repeat(257)}`, 'EINVALQUERY', 'cacheKey')
    expectError('cacheKey.a=1', 'EINVALQUERY', 'cacheKey')
  })

  it('filename: the extension follows the file', () => {
    expect(q('filename=shot&screenshot').filename).toEqual({ screenshot: 'shot.png' })
    expect(q('filename=shot&screenshot.type=jpeg').filename).toEqual({ screenshot: 'shot.jpg' })
    expect(q('filename=shot.JPEG&screenshot.type=jpg').filename).toEqual({ screenshot: 'shot.JPEG' })
    expect(q('filename=shot.png&screenshot.type=webp').filename).toEqual({ screenshot: 'shot.png.webp' })
    expect(q('filename=report&pdf').filename).toEqual({ pdf: 'report.pdf' })
    expect(q('filename=both&pdf&screenshot').filename).toEqual({ screenshot: 'both.png', pdf: 'both.pdf' })
    expect(q('filename=report.pdf&pdf').filename).toEqual({ pdf: 'report.pdf' })
    expect(q('filename=unused')).not.toHaveProperty('filename')
  })

  it.each(['', 'a b', '../etc', 'a/b', '.hidden', 'x'.repeat(101), 'ü.png'])('rejects filename %j', (value) => {
    expectError(`filename=${enc(value)}&screenshot`, 'EINVALQUERY', 'filename')
  })

  it('rejects a filename that its extension pushes over 100 characters', () => {
    expectError(`filename=${'x'.repeat(100)}&pdf`, 'EINVALQUERY', 'filename')
    expect(q(`filename=${'x'.repeat(96)}&pdf`).filename).toEqual({ pdf: `${'x'.repeat(96)}.pdf` })
  })
})

describe('equivalence', () => {
  const STATED_DEFAULTS = [
    'meta=true', 'screenshot=false', 'pdf=false', 'video=false', 'audio=false', 'iframe=false', 'insights=false',
    'palette=false', 'ping=true', `device=${enc('Macbook Pro 13')}`, 'color_scheme=no-preference', 'media_type=screen',
    'javascript=true', 'animations=false', 'adblock=true', 'prerender=auto', 'wait_until=auto', 'timeout=28s',
    'retry=2', 'force=false', 'ttl=24h', 'stale_ttl=false', 'viewport.width=1280', 'viewport.is_mobile=false'
  ]

  it('stating every default changes nothing', () => {
    expect(q(STATED_DEFAULTS.join('&'))).toEqual(q(''))
  })

  it('order does not matter', () => {
    const parts = ['screenshot.type=jpeg', 'device=iphone x', 'waitForSelector=h1', 'data.t.selector=h1', 'meta=false', 'ttl=1h']
    const forward = q(parts.join('&'))
    expect(q([...parts].reverse().join('&'))).toEqual(forward)
    expect(parse([...parts.slice(3), BASE, ...parts.slice(0, 3)].join('&'))).toEqual(forward)
  })

  it('spelling does not matter', () => {
    const variants = [
      'screenshot.type=jpg&screenshot.full_page=TRUE&wait_until=load&color_scheme=dark',
      'screenshot.type=JPEG&screenshot.fullPage&waitUntil=load&colorScheme=dark',
      `screenshot=${enc('{"type":"jpeg","fullPage":true,"quality":80}')}&waitUntil.0=load&ColorScheme=DARK`,
      'screenshot&type=jpeg&fullPage=true&wait_until=LOAD&colorScheme=Dark&v=42'
    ]
    const first = q(variants[0] ?? '')
    for (const variant of variants) expect(q(variant), variant).toEqual(first)
  })

  it('screenshot spellings all mean the default screenshot', () => {
    const expected = q('screenshot')
    for (const variant of ['screenshot=true', 'screenshot=TRUE', 'screenshot=', 'screenshot.type=png', 'screenshot.type=png&screenshot.quality=10',
      `screenshot=${enc('{}')}`, 'screenshot.codeScheme=atom-dark&screenshot.overlay.x=1']) {
      expect(q(variant), variant).toEqual(expected)
    }
  })
})

describe('prototype safety', () => {
  const protoKeys = (): string[] => Object.getOwnPropertyNames(Object.prototype).sort()

  it('never touches Object.prototype', () => {
    const before = protoKeys()
    const queries = [
      '__proto__.polluted=1', 'constructor.prototype.polluted=1', '__proto__=x', 'prototype.polluted=1',
      `screenshot=${enc('{"__proto__":{"polluted":1}}')}`, `screenshot.__proto__.polluted=1`,
      `function=${enc('() => 1')}&__proto__.polluted=1&constructor.prototype.polluted=1&a.__proto__.polluted=1`,
      `insights.lighthouse=${enc('{"settings":{"__proto__":{"polluted":1}}}')}`
    ]
    for (const extra of queries) {
      try {
        q(extra)
      } catch (err) {
        expect(err).toBeInstanceOf(AppError)
      }
    }
    expect(protoKeys()).toEqual(before)
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })

  it('rejects reserved names where names are user-chosen', () => {
    expectError('data.__proto__.selector=h1', 'EINVALDATA', 'data.__proto__')
    expectError(`data=${enc('{"__proto__":{"selector":"h1"}}')}`, 'EINVALDATA', 'data.__proto__')
    expectError('data.constructor.selector=h1', 'EINVALDATA', 'data.constructor')
    expectError(`data.x.attr=${enc('{"prototype":{"selector":"a"}}')}`, 'EINVALDATA', 'data.x')
    expectError('headers.constructor=1', 'EINVALQUERY', 'headers.constructor')
    expectError('headers.__proto__=1', 'EINVALQUERY', 'headers.__proto__')
    expectError('iframe.constructor=1', 'EINVALQUERY', 'iframe.constructor')
    expectError('insights.lighthouse.__proto__.x=1', 'EINVALQUERY', 'insights.lighthouse.__proto__')
  })

  it('drops reserved names from function arguments', () => {
    expect(q(`function=${enc('() => 1')}&__proto__=1&a.constructor=2&b=3`).args).toEqual({ a: {}, b: '3' })
  })
})

describe('pdf margins that leave no room (found by the fuzzer: Chromium failed the print, a 500)', () => {
  it('refuses margins as tall or wide as the page, in its orientation, and keeps the rest', () => {
    expectError('pdf.margin.top=1280', 'EINVALQUERY', 'pdf.margin')
    expectError('pdf.margin.left=600&pdf.margin.right=200', 'EINVALQUERY', 'pdf.margin')
    expectError('pdf.width=200&pdf.height=100&pdf.margin.top=60&pdf.margin.bottom=40', 'EINVALQUERY', 'pdf.margin')
    expect(q('pdf.margin.top=1100').pdf).not.toBe(false)
    expect(q('pdf.margin.left=1000&pdf.landscape=true').pdf).not.toBe(false)
    expectError('pdf.margin.left=1000&pdf.landscape=false', 'EINVALQUERY', 'pdf.margin')
  })
})
