// The matcher of `insights.technologies` on pure inputs: pattern tags and version templates, the bounded
// repetitions and required literals, Set-Cookie splitting, requires/excludes/implies on a small hand-written set,
// and the bundled set on a WordPress-like page.
import { load } from 'cheerio'
import { describe, expect, it } from 'vitest'
import { boundRepetitions, compileExpression, matchPattern, MAX_BACKTRACKING_CHARS, MAX_VALUE_CHARS, parsePattern, requiredLiteral, resolveVersion, type Pattern } from '../../src/insights/patterns.ts'
import { bundledFingerprints, compileFingerprints } from '../../src/insights/fingerprints.ts'
import { pageSignals, parseSetCookie, MAX_HTML_CHARS } from '../../src/insights/signals.ts'
import { detectTechnologies } from '../../src/insights/detect.ts'
import { indexDom, selectorKeys } from '../../src/insights/dom-index.ts'

/** Patterns of the bundled set that RE2 cannot take (docs/bundled-data.md says how many). */
const BACKTRACKING_PATTERNS = 20

function signals (html: string, headers: Record<string, string> = {}, url = 'https://site.test/') {
  return pageSignals({ url, headers, html, $: load(html, { baseURI: url }) })
}

describe('patterns', () => {
  it('reads the confidence and version tags', () => {
    const p = parsePattern('jquery-([0-9.]+)\\.js\\;confidence:50\\;version:\\1')
    expect(p?.confidence).toBe(50)
    expect(matchPattern(p!, 'https://x/jquery-3.7.1.js')).toEqual({ version: '3.7.1' })
    expect(matchPattern(p!, 'https://x/app.js')).toBeNull()
    expect(parsePattern('')).toMatchObject({ regex: null, confidence: 100 })
    expect(parsePattern('([')).toBeNull()
  })

  it('matches case-insensitively', () => {
    expect(matchPattern(parsePattern('^nginx')!, 'NGINX/1.2')).not.toBeNull()
  })

  it('resolves version templates: groups, ternaries, literals, long groups dropped', () => {
    expect(resolveVersion('\\1', ['x', '2.1'])).toBe('2.1')
    expect(resolveVersion('\\1?UA:', ['x', 'UA-'])).toBe('UA')
    expect(resolveVersion('\\1?UA:', ['x', undefined])).toBe('')
    expect(resolveVersion('\\1?:legacy', ['x', undefined])).toBe('legacy')
    expect(resolveVersion('v\\1', ['x', '5'])).toBe('v5')
    expect(resolveVersion('\\1', ['x', 'a-very-long-group'])).toBe('')
    expect(resolveVersion('GA4', ['x'])).toBe('GA4')
  })

  it('bounds repetitions outside classes and escapes only', () => {
    expect(boundRepetitions('a+b*[+*]\\+c+?')).toBe('a{1,250}b{0,250}[+*]\\+c{1,250}?')
  })

  it('runs a pattern on RE2, or with its repetitions bounded when RE2 cannot take it, on a value cut to size', () => {
    const linear = parsePattern('<a[^>]+x', true)!
    expect(linear.engine).toBe('re2')
    expect(linear.maxInput).toBe(Number.POSITIVE_INFINITY)
    const lookahead = parsePattern('<(?!svg)[^>]+x', true)!
    expect(lookahead.engine).toBe('backtracking')
    expect(lookahead.regex?.source).toBe('<(?!svg)[^>]{1,250}x')
    expect(lookahead.maxInput).toBe(MAX_BACKTRACKING_CHARS)
    // A short value is cut before the pattern reads it.
    const short = parsePattern('x$')!
    expect(short.maxInput).toBe(MAX_VALUE_CHARS)
    expect(matchPattern(short, 'a'.repeat(MAX_VALUE_CHARS - 1) + 'x')).not.toBeNull()
    expect(matchPattern(short, 'a'.repeat(MAX_VALUE_CHARS) + 'x')).toBeNull()
    expect(compileExpression('^a.*b$').engine).toBe('re2')
  })

  it('finds the literal every match contains, or none when unsure', () => {
    expect(requiredLiteral('<link[^>]+s\\d+\\.wp\\.com')).toBe('.wp.com')
    expect(requiredLiteral('abc?def')).toBe('def')
    expect(requiredLiteral('foo(bar)?baz')).toBe('foo')
    expect(requiredLiteral('a|b')).toBeNull()
    expect(requiredLiteral('x\\x41yz')).toBeNull()
    expect(requiredLiteral('Wix\\.com')).toBe('wix.com')
    // A bounded pattern with a literal skips a text without it, and still matches one with it.
    const p = parsePattern('<div[^>]+id="Wix-Root', true)!
    expect(p.literal).toBe('id="wix-root')
    expect(matchPattern(p, '<div class="a" ID="wix-root">')).not.toBeNull()
  })
})

describe('signals', () => {
  it('splits joined Set-Cookie headers without breaking Expires dates', () => {
    expect(parseSetCookie('PHPSESSID=abc; path=/, wp-settings-1=x; Expires=Wed, 21 Oct 2026 07:28:00 GMT, _ga=GA1.1.1')).toEqual([
      { name: 'PHPSESSID', value: 'abc' }, { name: 'wp-settings-1', value: 'x' }, { name: '_ga', value: 'GA1.1.1' }
    ])
    expect(parseSetCookie(undefined)).toEqual([])
  })

  it('gathers meta, absolute script URLs, inline scripts and visible text, with the HTML cut to size', () => {
    const s = signals(`<meta name="Generator" content="Hugo 0.1"><script src="/js/a.js"></script><script>var x = 1</script><body>Hello <script>no</script>world</body>${'x'.repeat(MAX_HTML_CHARS)}`)
    expect(s.meta).toEqual([['generator', 'Hugo 0.1']])
    expect(s.scriptSrc).toEqual(['https://site.test/js/a.js'])
    expect(s.scripts).toBe('var x = 1\nno')
    expect(s.text).toContain('Hello')
    expect(s.text).not.toContain('no')
    expect(s.html.length).toBe(MAX_HTML_CHARS)
  })
})

describe('dom index', () => {
  it('lets a selector run only when its picked element could be on the page', () => {
    const index = indexDom(load('<div id="app" class="wp-block-group x"><a href="/wp-content/x.css"></a></div>'))
    expect(index.mayMatch(selectorKeys("a[href*='/wp-content/']")!)).toBe(true)
    expect(index.mayMatch(selectorKeys('#app > .missing')!)).toBe(false)
    expect(index.mayMatch(selectorKeys('div.wp-block-group')!)).toBe(true)
    expect(index.mayMatch(selectorKeys('span, div#app')!)).toBe(true)
    expect(index.mayMatch(selectorKeys("link[href*='/wp-content/']")!)).toBe(false)
    expect(selectorKeys('a[')).toBeNull()
  })
})

describe('detection on a small set', () => {
  const set = compileFingerprints({
    Cms: { cats: [1], website: 'https://cms.test', meta: { generator: '^Cms ([\\d.]+)$\\;version:\\1' }, implies: ['Lang\\;confidence:50', 'Db'] },
    Lang: { cats: [2], headers: { 'X-Powered-By': '^Lang/([\\d.]+)\\;version:\\1' } },
    Db: { cats: [3] },
    Theme: { cats: [4], requires: 'Cms', html: '<link[^>]+/themes/shiny/' },
    Orphan: { cats: [4], requires: 'Nothing', html: '<html' },
    Shop: { cats: [5], requiresCategory: 1, cookies: { cart_id: '' } },
    Old: { cats: [4], html: '<body' },
    New: { cats: [4], excludes: 'Old', scriptSrc: 'new-(\\d+)\\.js\\;version:\\1\\;confidence:50', dom: { 'div.new': { attributes: { 'data-v': '(\\d+)\\;version:\\1\\;confidence:50' } } } }
  }, { 1: { name: 'CMS', priority: 1 }, 2: { name: 'Languages', priority: 2 }, 3: { name: 'Databases', priority: 3 }, 4: { name: 'Widgets', priority: 9 }, 5: { name: 'Ecommerce', priority: 1 } })

  it('detects, chains requires, applies excludes and implies with the lower confidence', async () => {
    const page = signals('<html><head><meta name="generator" content="Cms 2.4"><link rel="stylesheet" href="/themes/shiny/a.css"><script src="/new-7.js"></script></head><body><div class="new" data-v="7"></div></body></html>',
      { 'x-powered-by': 'Lang/8.1', 'set-cookie': 'cart_id=1; Path=/' })
    const found = await detectTechnologies(set, page)
    expect(found).toEqual([
      { name: 'Cms', confidence: 100, version: '2.4', logo: null, url: 'https://cms.test', categories: ['CMS'] },
      { name: 'Shop', confidence: 100, version: null, logo: null, url: null, categories: ['Ecommerce'] },
      { name: 'Lang', confidence: 100, version: '8.1', logo: null, url: null, categories: ['Languages'] },
      { name: 'Db', confidence: 100, version: null, logo: null, url: null, categories: ['Databases'] },
      // Two patterns of 50 each: 100 in all.
      { name: 'New', confidence: 100, version: '7', logo: null, url: null, categories: ['Widgets'] },
      { name: 'Theme', confidence: 100, version: null, logo: null, url: null, categories: ['Widgets'] }
    ])
  })

  it('gives an implied technology the lower of the two confidences, and needs what requires names', async () => {
    const found = await detectTechnologies(set, signals('<html><head><meta name="generator" content="Cms 2.4"></head><body><link href="/themes/shiny/"></body></html>'))
    expect(found.find((t) => t.name === 'Lang')).toMatchObject({ confidence: 50, version: null })
    expect(found.map((t) => t.name)).not.toContain('Orphan')
    expect(found.map((t) => t.name)).not.toContain('Shop')
    // Without New, Old is not excluded.
    expect(found.map((t) => t.name)).toContain('Old')
  })

  it('finds nothing on a page with no signal', async () => {
    expect(await detectTechnologies(set, pageSignals({ url: 'https://site.test/', headers: {}, html: '' }))).toEqual([])
  })
})

describe('the bundled set', () => {
  const set = bundledFingerprints()

  it('loads thousands of technologies, with every pattern compiled', () => {
    expect(set.technologies.size).toBeGreaterThan(3000)
    expect(set.invalidPatterns).toBe(0)
    expect(set.jsChains).toContain('jQuery.fn.jquery')
  })

  // Every pattern of the set, where it reads.
  function everyPattern (): Array<[string, Pattern]> {
    const out: Array<[string, Pattern]> = []
    for (const fp of set.technologies.values()) {
      for (const kind of ['html', 'scripts', 'scriptSrc', 'text', 'css', 'url'] as const) for (const p of fp[kind]) out.push([`${fp.name} ${kind}`, p])
      for (const kind of ['headers', 'meta', 'js'] as const) for (const { key, pattern } of fp[kind]) out.push([`${fp.name} ${kind} ${key}`, pattern])
      for (const { pattern } of fp.cookies) out.push([`${fp.name} cookies`, pattern])
      for (const check of fp.dom) {
        for (const { key, pattern } of [...check.attributes, ...check.properties]) out.push([`${fp.name} dom ${key}`, pattern])
        if (check.text !== null) out.push([`${fp.name} dom text`, check.text])
        if (check.exists !== null) out.push([`${fp.name} dom exists`, check.exists])
      }
    }
    return out
  }

  it('runs every pattern on RE2 but the listed ones (docs/bundled-data.md), which take lookarounds', () => {
    const backtracking = everyPattern().filter(([, p]) => p.expression !== null && p.engine !== 're2')
    // The count docs/bundled-data.md gives; each one needs a lookaround, which RE2 does not have.
    expect(backtracking.length).toBe(BACKTRACKING_PATTERNS)
    for (const [where, p] of backtracking) expect(p.expression, where).toMatch(/\(\?<?[=!]/)
    for (const [, p] of everyPattern()) if (p.expression === null) expect(p.engine).toBeNull()
  })

  it('bounds the patterns RE2 cannot take: each reads a cut value with bounded repetitions, in time on hostile text', () => {
    const hostile = ['1.', 'a', '/', 'a/', '-', '.a', ' ', '<', 'x-'].map((unit) => unit.repeat(MAX_BACKTRACKING_CHARS))
    for (const [where, p] of everyPattern().filter(([, p]) => p.engine === 'backtracking')) {
      expect(p.regex?.source, where).not.toMatch(/(?<!\\)[+*]/)
      const started = performance.now()
      for (const text of hostile) matchPattern(p, text)
      // Generous: a busy machine; unbounded, some of these took seconds.
      expect(performance.now() - started, where).toBeLessThan(1000)
    }
  })

  it('recognizes a WordPress page served by nginx and PHP, with versions', async () => {
    const html = '<!doctype html><html><head><meta name="generator" content="WordPress 6.4.2">' +
      '<link rel="stylesheet" href="https://blog.test/wp-content/themes/t/style.css">' +
      '<script src="https://blog.test/wp-includes/js/jquery/jquery-3.7.1.min.js"></script></head><body><p>Hi</p></body></html>'
    const found = await detectTechnologies(set, signals(html, { server: 'nginx/1.25.3', 'x-powered-by': 'PHP/8.2.1' }, 'https://blog.test/'))
    const byName = Object.fromEntries(found.map((t) => [t.name, t]))
    expect(byName.WordPress).toMatchObject({ version: '6.4.2', confidence: 100, url: expect.stringContaining('wordpress.org') })
    expect(byName.WordPress?.categories).toContain('CMS')
    expect(byName.Nginx).toMatchObject({ version: '1.25.3' })
    expect(byName.PHP).toMatchObject({ version: '8.2.1' })
    expect(byName.MySQL).toBeDefined()
    expect(byName.jQuery).toMatchObject({ version: '3.7.1' })
    expect(found[0]?.name).toBe('WordPress')
  })

  it('reads JS globals when the page gave them, and only then', async () => {
    const html = '<!doctype html><html><head><title>App</title></head><body><div id="root"></div></body></html>'
    const plain = await detectTechnologies(set, signals(html))
    expect(plain.map((t) => t.name)).not.toContain('React')
    const rendered = await detectTechnologies(set, pageSignals({
      url: 'https://site.test/', headers: {}, html, $: load(html),
      globals: { js: { 'React.version': '18.3.1' }, properties: {}, cookies: [{ name: '_ga', value: 'GA1.1.2' }] }
    }))
    expect(rendered.find((t) => t.name === 'React')).toMatchObject({ version: '18.3.1' })
    expect(rendered.map((t) => t.name)).toContain('Google Analytics')
  })
})
