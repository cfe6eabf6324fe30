// The consent-platform detector (src/adblock/consent-detect.ts) against autoconsent's own rules: it must say "maybe"
// wherever one of the rules' detection selectors could match (so no platform autoconsent knows is skipped), and "no"
// on a document that has none of their names.
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { beforeAll, describe, expect, it } from 'vitest'
import { CODE_CMPS, loadConsentDetector, type ConsentDetector } from '../../src/adblock/consent-detect.ts'

interface Rule { name: string, runContext?: { urlPattern?: string, main?: boolean }, detectCmp?: Array<Record<string, unknown>> }

const require = createRequire(import.meta.url)
let detector: ConsentDetector
let rules: Rule[]

beforeAll(async () => {
  detector = await loadConsentDetector()
  rules = (JSON.parse(await readFile(require.resolve('@duckduckgo/autoconsent/rules/rules.json'), 'utf8')) as { autoconsent: Rule[] }).autoconsent
})

const PLAIN = { ids: ['main', 'header', 'content'], classes: ['article', 'nav', 'footer', 'cookie'] }

/** The names a simple selector such as `#a .b > div.c` needs. */
function namesOf (selector: string): { ids: string[], classes: string[] } {
  const bare = selector.replace(/"[^"]*"|'[^']*'/g, '').replace(/\([^()]*\)|\[[^[\]]*\]/g, ' ')
  return {
    ids: [...bare.matchAll(/#(-?[_a-zA-Z][_a-zA-Z0-9-]*)/g)].map(m => m[1]!),
    classes: [...bare.matchAll(/\.(-?[_a-zA-Z][_a-zA-Z0-9-]*)/g)].map(m => m[1]!)
  }
}

describe('consentDetector', () => {
  it('lists every platform autoconsent detects in code (its rule index), so an upgrade that adds one fails here', async () => {
    const index = JSON.parse(await readFile(require.resolve('@duckduckgo/autoconsent/rules/rules.json').replace(/rules\.json$/, 'rule-index.json'), 'utf8')) as Array<{ name: string, section: string }>
    expect(CODE_CMPS.map(c => c.name).sort()).toEqual(index.filter(e => e.section === 'code').map(e => e.name).sort())
  })

  it('says no on a page without any platform\'s names', () => {
    expect(detector.detects('https://example.com/', PLAIN, false)).toBe(false)
    expect(detector.detects('https://example.com/', { ids: [], classes: [] }, false)).toBe(false)
  })

  it('says yes when the in-page check found a selector without names or a platform\'s global', () => {
    expect(detector.detects('https://example.com/', PLAIN, true)).toBe(true)
    expect(detector.expression).toContain('"Cookiebot"')
    expect(detector.expression).toContain('tiktok-cookie-banner')
  })

  it('says yes for every generic rule whose first detection selector\'s names the document has', () => {
    let checked = 0
    for (const rule of rules) {
      if (rule.runContext?.urlPattern !== undefined || rule.runContext?.main === false) continue
      const first = rule.detectCmp?.[0]?.exists
      const selector = Array.isArray(first) ? first[0] : first
      if (typeof selector !== 'string' || selector.includes(',') || selector.startsWith('xpath/')) continue
      const names = namesOf(selector)
      if (names.ids.length + names.classes.length === 0) {
        expect(detector.expression, rule.name).toContain(JSON.stringify(selector).slice(1, -1))
      } else {
        expect(detector.detects('https://example.com/', names, false), rule.name).toBe(true)
      }
      checked++
    }
    expect(checked).toBeGreaterThan(150)
  })

  it('counts a site\'s own rule only on its site', () => {
    // ah.nl's rule detects `#cookie-overlay`, an id many pages have: it counts only on ah.nl.
    expect(rules.find(r => r.name === 'ah.nl')?.detectCmp?.[0]?.exists).toBe('#cookie-overlay')
    const overlay = { ids: ['cookie-overlay'], classes: [] }
    expect(detector.detects('https://example.com/', overlay, false)).toBe(false)
    expect(detector.detects('https://www.ah.nl/producten', overlay, false)).toBe(true)
    expect(detector.detects('https://www.ah.nl/producten', PLAIN, false)).toBe(false)
    // abc.net.au's detects by an attribute, which only the page can check: on its site, autoconsent always starts.
    expect(detector.detects('https://www.abc.net.au/news', PLAIN, false)).toBe(true)
  })

  it('knows the platforms of the banner fixtures by their roots', () => {
    for (const root of [['onetrust-banner-sdk'], ['CybotCookiebotDialog'], ['truste-consent-track'], ['cmpbox']]) {
      expect(detector.detects('https://example.com/', { ids: root, classes: [] }, false), root[0]).toBe(true)
    }
  })
})
