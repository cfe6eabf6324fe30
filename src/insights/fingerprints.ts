// The fingerprint set of `insights.technologies` (docs/api.md §3.4), in Wappalyzer's format: read from
// data/wappalyzer/ (bundled, see its README; never downloaded) and compiled once per process, the first time it is
// asked for. What the format checks and pagecast reads: `html`, `scripts` (inline script text), `scriptSrc`,
// `text`, `css` (inline styles), `url`, `headers`, `cookies`, `meta`, `dom` (selectors with `exists`,
// `attributes`, `text`; `properties` in the rendered page) and `js` (globals, in the rendered page), plus
// `implies`, `excludes`, `requires` and `requiresCategory`. Not read: `dns`, `xhr`, `robots`, `probe` and
// `certIssuer`, which would need requests of their own.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { compileExpression, parsePattern, type Pattern } from './patterns.ts'
import { selectorKeys, type CompoundKey } from './dom-index.ts'

/** Where the bundled set lives (the image copies data/ beside src/). */
export const BUNDLED_DIR = path.resolve(import.meta.dirname, '../../data/wappalyzer')

/** A named check and its pattern: a header, cookie, meta tag, JS global, attribute or DOM property. */
export interface Keyed {
  readonly key: string
  readonly pattern: Pattern
}

export interface CookieCheck {
  /** Matches the cookie name (`*` in the set is a wildcard). */
  readonly name: RegExp
  readonly pattern: Pattern
}

export interface DomCheck {
  readonly selector: string
  /** What the picked element of each alternative needs (dom-index.ts); null when the selector does not parse. */
  readonly keys: readonly CompoundKey[] | null
  /** Present when the element's presence alone is a match. */
  readonly exists: Pattern | null
  readonly attributes: readonly Keyed[]
  /** Live DOM properties: matched in the rendered page only. */
  readonly properties: readonly Keyed[]
  readonly text: Pattern | null
}

export interface Relation {
  readonly name: string
  readonly confidence: number
  readonly version: string
}

export interface Fingerprint {
  readonly name: string
  readonly website: string | null
  readonly categories: readonly number[]
  readonly html: readonly Pattern[]
  readonly scripts: readonly Pattern[]
  readonly scriptSrc: readonly Pattern[]
  readonly text: readonly Pattern[]
  readonly css: readonly Pattern[]
  readonly url: readonly Pattern[]
  readonly headers: readonly Keyed[]
  readonly cookies: readonly CookieCheck[]
  readonly meta: readonly Keyed[]
  readonly js: readonly Keyed[]
  readonly dom: readonly DomCheck[]
  readonly implies: readonly Relation[]
  readonly excludes: readonly string[]
  readonly requires: readonly string[]
  readonly requiresCategory: readonly number[]
}

export interface Category {
  readonly name: string
  readonly priority: number
}

export interface FingerprintSet {
  readonly technologies: ReadonlyMap<string, Fingerprint>
  readonly categories: ReadonlyMap<number, Category>
  /** Every JS global chain some technology reads, for the rendered page to evaluate once. */
  readonly jsChains: readonly string[]
  /** Every DOM selector with `properties`, for the rendered page. */
  readonly propertySelectors: readonly DomCheck[]
  /** Patterns left out because their expression is not valid JavaScript. */
  readonly invalidPatterns: number
}

type Raw = Record<string, unknown>

function list (value: unknown): string[] {
  if (typeof value === 'string') return [value]
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []
}

function record (value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : {}
}

/** A cookie name of the set as a regex (on RE2, patterns.ts): backslash escapes dropped, `*` any run of characters. */
function cookieName (name: string): RegExp {
  const literal = name.replace(/\\(.)/g, '$1')
  return compileExpression(`^${literal.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`).regex
}

/** A relation (`implies` and the like): a name with optional tags. */
function relation (text: string): Relation {
  const [name = '', ...tags] = text.split('\\;')
  const tag = (key: string): string | undefined => tags.find((t) => t.startsWith(`${key}:`))?.slice(key.length + 1)
  const confidence = Number.parseInt(tag('confidence') ?? '100', 10)
  return { name: name.trim(), confidence: Number.isFinite(confidence) ? confidence : 100, version: tag('version') ?? '' }
}

class Compiler {
  invalid = 0

  /** `long`: the patterns read page text (parsePattern). */
  patterns (value: unknown, long = false): Pattern[] {
    return list(value).flatMap((text) => this.one(text, long) ?? [])
  }

  one (text: string, long = false): Pattern | null {
    const pattern = parsePattern(text, long)
    if (pattern === null) this.invalid++
    return pattern
  }

  keyed (value: unknown, lowerKeys: boolean): Keyed[] {
    return Object.entries(record(value)).flatMap(([key, text]) => {
      const pattern = this.one(typeof text === 'string' ? text : '')
      return pattern === null ? [] : [{ key: lowerKeys ? key.toLowerCase() : key, pattern }]
    })
  }

  dom (value: unknown): DomCheck[] {
    if (typeof value === 'string' || Array.isArray(value)) {
      const exists = this.one('')
      return list(value).map((selector) => ({ selector, keys: selectorKeys(selector), exists, attributes: [], properties: [], text: null }))
    }
    return Object.entries(record(value)).map(([selector, raw]) => {
      const spec = record(raw)
      return {
        selector,
        keys: selectorKeys(selector),
        exists: 'exists' in spec ? this.one(typeof spec.exists === 'string' ? spec.exists : '') : null,
        attributes: this.keyed(spec.attributes, true),
        properties: this.keyed(spec.properties, false),
        text: typeof spec.text === 'string' ? this.one(spec.text, true) : null
      }
    })
  }

  technology (name: string, raw: Raw): Fingerprint {
    return {
      name,
      website: typeof raw.website === 'string' && raw.website !== '' ? raw.website : null,
      categories: Array.isArray(raw.cats) ? raw.cats.filter((c): c is number => typeof c === 'number') : [],
      html: this.patterns(raw.html, true),
      scripts: this.patterns(raw.scripts, true),
      scriptSrc: this.patterns(raw.scriptSrc),
      text: this.patterns(raw.text, true),
      css: this.patterns(raw.css, true),
      url: this.patterns(raw.url),
      headers: this.keyed(raw.headers, true),
      cookies: Object.entries(record(raw.cookies)).flatMap(([key, text]) => {
        const pattern = this.one(typeof text === 'string' ? text : '')
        return pattern === null ? [] : [{ name: cookieName(key), pattern }]
      }),
      meta: this.keyed(raw.meta, true),
      js: this.keyed(raw.js, false),
      dom: this.dom(raw.dom),
      implies: list(raw.implies).map(relation),
      excludes: list(raw.excludes).map((text) => relation(text).name),
      requires: list(raw.requires).map((text) => relation(text).name),
      requiresCategory: (Array.isArray(raw.requiresCategory) ? raw.requiresCategory : [raw.requiresCategory])
        .map(Number).filter((id) => Number.isInteger(id))
    }
  }
}

/** Compiles a set from its two JSON documents (technologies by name, categories by id). */
export function compileFingerprints (technologies: Record<string, unknown>, categories: Record<string, unknown>): FingerprintSet {
  const compiler = new Compiler()
  const compiled = new Map<string, Fingerprint>()
  for (const [name, raw] of Object.entries(technologies)) compiled.set(name, compiler.technology(name, record(raw)))
  const cats = new Map<number, Category>()
  for (const [id, raw] of Object.entries(categories)) {
    const { name, priority } = record(raw)
    if (typeof name === 'string') cats.set(Number(id), { name, priority: typeof priority === 'number' ? priority : 10 })
  }
  const fingerprints = [...compiled.values()]
  return {
    technologies: compiled,
    categories: cats,
    jsChains: [...new Set(fingerprints.flatMap((f) => f.js.map((check) => check.key)))],
    propertySelectors: fingerprints.flatMap((f) => f.dom.filter((check) => check.properties.length > 0)),
    invalidPatterns: compiler.invalid
  }
}

/** Reads and compiles the set in a folder (technologies.json and categories.json). */
export function loadFingerprints (dir: string = BUNDLED_DIR): FingerprintSet {
  const read = (name: string): Record<string, unknown> => record(JSON.parse(readFileSync(path.join(dir, name), 'utf8')))
  return compileFingerprints(read('technologies.json'), read('categories.json'))
}

let bundled: FingerprintSet | undefined

/** The bundled set, compiled on first use and kept for the process. */
export function bundledFingerprints (): FingerprintSet {
  bundled ??= loadFingerprints()
  return bundled
}
