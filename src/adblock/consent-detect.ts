// Whether a document may hold a consent platform that autoconsent (consent.ts) would answer, decided without
// starting autoconsent: most pages have none, and starting it (its ~800 rules decoded, each one's detection run) costs
// 6-13 ms of the renderer's CPU per document (docs/benchmarks.md). The answer is "maybe" whenever one of autoconsent's
// own detection selectors could match, so it never says "no" where autoconsent would have found its platform:
//
// - A selector naming ids or classes (`#onetrust-banner-sdk`, `.cmp-root .cmp-receptacle`) can only match when the
//   document has all of them: checked in Node against the ids and classes the adblock step reads anyway.
// - A selector naming none (`[data-cky-tag=...]`, a custom element) is checked in the page, in the same evaluation
//   (DETECT_EXPRESSION), together with the globals that the platforms detected by script answer to.
// - A site's own rule (its `urlPattern` matches the page) counts as found when the page can hold its selectors.
//
// The selectors come from the package's rules (rules/rules.json, the same rules as the compact file the script
// runs); those of the platforms autoconsent detects in code (its lib/cmps/*.ts) are listed here by hand, and a unit
// test holds the list against the package's own index of them (rules/rule-index.json).
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'

/** autoconsent's platforms detected in code (lib/cmps/*.ts, version 16.23): their detection selectors and globals. */
export const CODE_CMPS: ReadonlyArray<{ name: string, selectors: readonly string[], globals?: readonly string[] }> = [
  { name: 'Admiral', selectors: ['div > div[class*=Card] > div[class*=Frame] > div[class*=Pills] > button[class*=Pills__StyledPill]'] },
  { name: 'consentmanager.net', selectors: ['#cmpbox'], globals: ['__cmp'] },
  { name: 'Conversant', selectors: ['.cmp-root .cmp-receptacle'] },
  { name: 'Cybotcookiebot', selectors: ['#CybotCookiebotDialog'], globals: ['Cookiebot'] },
  { name: 'Evidon', selectors: ['#_evidon_banner'] },
  { name: 'Klaro', selectors: ['.klaro > .cookie-modal', '.klaro > .cookie-notice'] },
  { name: 'Onetrust', selectors: ['#onetrust-banner-sdk', '#onetrust-pc-sdk'] },
  // Runs only in the frames of Sourcepoint's own hosts; the consent script runs in the top frame.
  { name: 'Sourcepoint-frame', selectors: [] },
  { name: 'tiktok.com', selectors: ['tiktok-cookie-banner'] },
  { name: 'TrustArc-top', selectors: ['#truste-show-consent', '#truste-consent-track'] },
  { name: 'tumblr-com', selectors: ['#cmp-app-container'] },
  { name: 'Uniconsent', selectors: ['.unic .unic-box', '.unic .unic-bar', '.unic .unic-modal'] }
]

/** Globals that rules detect by script (their `eval` steps: EVAL_GDPR_LEGAL_COOKIE_DETECT_CMP). */
const RULE_GLOBALS = ['GDPR_LC']

/** One branch of a selector list: the ids and classes it needs; none means it is looked for in the page. */
interface Branch { ids: string[], classes: string[] }

interface SiteRule { pattern: RegExp, branches: Branch[] }

/** The ids and class names a document has (index.ts's DomFeatures). */
export interface DocumentNames { ids: readonly string[], classes: readonly string[] }

export interface ConsentDetector {
  /** Evaluated in the page: true when a selector without ids or classes matches, or a platform's global is set. */
  readonly expression: string
  /** Whether the document at `url` with `features` may hold a platform (`inPage`: what `expression` returned). */
  detects (url: string, features: DocumentNames, inPage: boolean): boolean
}

/** Splits a selector list at its top-level commas. */
function branchesOf (selector: string): string[] {
  const out: string[] = []
  let depth = 0
  let quote = ''
  let start = 0
  for (let i = 0; i < selector.length; i++) {
    const c = selector[i]
    if (quote !== '') { if (c === '\\') i++; else if (c === quote) quote = ''; continue }
    if (c === '"' || c === "'") quote = c
    else if (c === '(' || c === '[') depth++
    else if (c === ')' || c === ']') depth--
    else if (c === ',' && depth === 0) { out.push(selector.slice(start, i)); start = i + 1 }
  }
  out.push(selector.slice(start))
  return out.map(s => s.trim()).filter(s => s !== '')
}

/**
 * The ids and classes a selector branch needs, outside brackets and parentheses (what is inside them may be
 * optional, `:not(.x)`); a name with an escape is left out. Leaving one out only makes the check say "maybe" more.
 */
function branchOf (selector: string): Branch {
  let bare = selector.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '')
  for (let before = ''; before !== bare;) { before = bare; bare = bare.replace(/\([^()]*\)|\[[^[\]]*\]/g, ' ') }
  const ids: string[] = []
  const classes: string[] = []
  for (const m of bare.matchAll(/([#.])(-?[_a-zA-Z][_a-zA-Z0-9-]*)(?![\\])/g)) (m[1] === '#' ? ids : classes).push(m[2]!)
  return { ids, classes }
}

/** Every selector of a rule's detection steps (`exists`, `visible`, `waitFor...`, inside `any` too); shadow chains by their host. */
function detectSelectors (steps: unknown): string[] {
  const out: string[] = []
  const visit = (step: unknown): void => {
    if (Array.isArray(step)) { step.forEach(visit); return }
    if (step === null || typeof step !== 'object') return
    for (const [key, value] of Object.entries(step as Record<string, unknown>)) {
      if (key === 'any' || key === 'if' || key === 'then' || key === 'else') visit(value)
      else if (['exists', 'visible', 'waitFor', 'waitForVisible'].includes(key)) {
        const first = Array.isArray(value) ? value[0] : value
        if (typeof first === 'string' && !first.startsWith('xpath/')) out.push(first)
      }
    }
  }
  visit(steps)
  return out
}

function possible (branch: Branch, ids: ReadonlySet<string>, classes: ReadonlySet<string>): boolean {
  return branch.ids.every(id => ids.has(id)) && branch.classes.every(c => classes.has(c))
}

function keyed (branch: Branch): boolean {
  return branch.ids.length + branch.classes.length > 0
}

interface RuleLike { name: string, runContext?: { urlPattern?: string, main?: boolean }, detectCmp?: unknown }

/** The detector over autoconsent's rules (`rules`, the package's rules.json `autoconsent` list) and CODE_CMPS. */
export function consentDetector (rules: readonly RuleLike[]): ConsentDetector {
  const generic: Branch[] = CODE_CMPS.flatMap(c => c.selectors.flatMap(branchesOf).map(branchOf))
  const sites: SiteRule[] = []
  for (const rule of rules) {
    if (rule.runContext?.main === false) continue
    const branches = detectSelectors(rule.detectCmp).flatMap(branchesOf).map(branchOf)
    const pattern = rule.runContext?.urlPattern
    if (pattern === undefined || pattern === '') generic.push(...branches)
    else sites.push({ pattern: new RegExp(pattern), branches })
  }
  const inPageSelectors = [...new Set([
    ...CODE_CMPS.flatMap(c => c.selectors),
    ...rules.filter(r => !r.runContext?.urlPattern).flatMap(r => detectSelectors(r.detectCmp))
  ].flatMap(branchesOf).filter(s => !keyed(branchOf(s))))]
  const globals = [...CODE_CMPS.flatMap(c => c.globals ?? []), ...RULE_GLOBALS]
  const keyedGeneric = generic.filter(keyed)
  // Each selector on its own: one the page's engine cannot parse must not hide the others.
  const expression = `(() => {
  for (const g of ${JSON.stringify(globals)}) if (globalThis[g] !== undefined) return true;
  for (const s of ${JSON.stringify(inPageSelectors)}) { try { if (document.querySelector(s) !== null) return true } catch {} }
  return false;
})()`
  return {
    expression,
    detects (url, features, inPage) {
      if (inPage) return true
      const ids = new Set(features.ids)
      const classes = new Set(features.classes)
      if (keyedGeneric.some(b => possible(b, ids, classes))) return true
      for (const site of sites) {
        if (!site.pattern.test(url)) continue
        if (site.branches.length === 0 || site.branches.some(b => !keyed(b) || possible(b, ids, classes))) return true
      }
      return false
    }
  }
}

/** Reads the package's rules and builds the detector. */
export async function loadConsentDetector (): Promise<ConsentDetector> {
  const require = createRequire(import.meta.url)
  const text = await readFile(require.resolve('@duckduckgo/autoconsent/rules/rules.json'), 'utf8')
  const { autoconsent } = JSON.parse(text) as { autoconsent: RuleLike[] }
  return consentDetector(autoconsent)
}
