// `insights.technologies` (docs/api.md §3.4): the technologies of a page, matched against the fingerprint set
// (fingerprints.ts) on its signals (signals.ts). Each matching pattern adds its confidence to its technology (at most
// 100 in all) and may read a version; a technology that `requires` others, or a technology of some category, is
// matched once those are found; then `excludes` removes what a found technology rules out, and `implies` adds what
// it brings (with the lower of the two confidences). The result is sorted by category priority, then name.
// The matching runs in the page reader's worker (src/reader/), which its request's deadline ends; every pattern is
// bounded (patterns.ts), and so is every value it reads.
import type { CheerioAPI } from 'cheerio'
import type { DomCheck, Fingerprint, FingerprintSet, Keyed } from './fingerprints.ts'
import { matchPattern, MAX_VALUE_CHARS, type Pattern } from './patterns.ts'
import { indexDom, type DomIndex } from './dom-index.ts'
import type { PageSignals } from './signals.ts'

/** One technology of the answer. */
export interface Technology {
  name: string
  /** 0–100. */
  confidence: number
  version: string | null
  /** An absolute icon URL; null: the set's icons are not bundled and none is fetched from elsewhere. */
  logo: string | null
  /** The technology's website, from the set. */
  url: string | null
  categories: string[]
}

interface Found {
  confidence: number
  version: string
}

/** A version is kept when it is at most this long and its leading number is below 10000 (not a year or an id). */
const MAX_VERSION_LENGTH = 15

function betterVersion (current: string, candidate: string): string {
  if (candidate === '' || candidate.length <= current.length || candidate.length > MAX_VERSION_LENGTH) return current
  return (Number.parseInt(candidate, 10) || 0) < 10000 ? candidate : current
}

/** Selectors cheerio cannot run (a syntax it does not know): tried once per process. */
const badSelectors = new Set<string>()

function select ($: CheerioAPI, selector: string): ReturnType<CheerioAPI> | null {
  if (badSelectors.has(selector)) return null
  try {
    return $(selector)
  } catch {
    badSelectors.add(selector)
    return null
  }
}

class Matcher {
  private readonly signals: PageSignals
  private readonly hits: Found[] = []
  private index: DomIndex | undefined
  private scriptSrcLower: string | undefined

  constructor (signals: PageSignals) {
    this.signals = signals
  }

  private add (pattern: Pattern, value: string): boolean {
    const match = matchPattern(pattern, value)
    if (match !== null) this.hits.push({ confidence: pattern.confidence, version: match.version })
    return match !== null
  }

  private readonly lowered = new Map<string, string>()

  /** Patterns over one text; a pattern whose required literal is not in the text is not run. */
  private one (patterns: readonly Pattern[], value: string): void {
    if (value === '' || patterns.length === 0) return
    let lower = this.lowered.get(value)
    for (const pattern of patterns) {
      if (pattern.literal !== null) {
        if (lower === undefined) { lower = value.toLowerCase(); this.lowered.set(value, lower) }
        if (!lower.includes(pattern.literal)) continue
      }
      this.add(pattern, value)
    }
  }

  /** Patterns over a list (script URLs); a pattern whose literal is in none of them is not run. */
  private many (patterns: readonly Pattern[], values: readonly string[], joined: string): void {
    for (const pattern of patterns) {
      if (pattern.literal !== null && !joined.includes(pattern.literal)) continue
      values.some((value) => this.add(pattern, value))
    }
  }

  private keyed (checks: readonly Keyed[], lookup: (key: string) => readonly string[]): void {
    for (const { key, pattern } of checks) lookup(key).some((value) => this.add(pattern, value))
  }

  private dom ($: CheerioAPI, checks: readonly DomCheck[]): void {
    this.index ??= indexDom($)
    for (const check of checks) {
      if (check.keys === null || !this.index.mayMatch(check.keys)) continue
      const nodes = select($, check.selector)
      if (nodes === null || nodes.length === 0) continue
      if (check.exists !== null) this.add(check.exists, '')
      for (const { key, pattern } of check.attributes) {
        nodes.toArray().some((node) => {
          const value = $(node).attr(key)
          return value !== undefined && this.add(pattern, value)
        })
      }
      if (check.text !== null) {
        const text = check.text
        nodes.toArray().some((node) => this.add(text, $(node).text()))
      }
      const properties = this.signals.globals?.properties[check.selector]
      for (const { key, pattern } of check.properties) {
        const value = properties?.[key]
        if (value !== undefined) this.add(pattern, value)
      }
    }
  }

  /** The pattern hits of one technology on the page, or null when none matched. */
  run (fp: Fingerprint): Found | null {
    this.hits.length = 0
    const s = this.signals
    this.one(fp.url, s.url)
    this.one(fp.html, s.html)
    this.one(fp.scripts, s.scripts)
    this.one(fp.css, s.css)
    this.one(fp.text, s.text)
    if (fp.scriptSrc.length > 0) {
      this.scriptSrcLower ??= s.scriptSrc.join('\n').toLowerCase()
      this.many(fp.scriptSrc, s.scriptSrc, this.scriptSrcLower)
    }
    this.keyed(fp.headers, (key) => { const v = s.headers[key]; return v === undefined ? [] : [v] })
    this.keyed(fp.meta, (key) => s.meta.filter(([name]) => name === key).map(([, content]) => content))
    for (const { name, pattern } of fp.cookies) {
      s.cookies.some((cookie) => name.test(cookie.name.slice(0, MAX_VALUE_CHARS)) && this.add(pattern, cookie.value))
    }
    if (s.globals !== undefined) {
      const js = s.globals.js
      this.keyed(fp.js, (key) => Object.hasOwn(js, key) ? [js[key] ?? ''] : [])
    }
    if (s.$ !== undefined && fp.dom.length > 0) this.dom(s.$, fp.dom)
    if (this.hits.length === 0) return null
    let confidence = 0
    let version = ''
    for (const hit of this.hits) {
      confidence += hit.confidence
      version = betterVersion(version, hit.version)
    }
    return { confidence: Math.min(100, confidence), version }
  }
}

/** The technologies of a page. */
export function detectTechnologies (set: FingerprintSet, signals: PageSignals): Technology[] {
  const matcher = new Matcher(signals)
  const found = new Map<string, Found>()
  const pending: Fingerprint[] = []
  for (const fp of set.technologies.values()) {
    if (fp.requires.length > 0 || fp.requiresCategory.length > 0) { pending.push(fp); continue }
    const hit = matcher.run(fp)
    if (hit !== null) found.set(fp.name, hit)
  }
  // `requires` and `requiresCategory`: matched once what they need is found, until nothing more is.
  const inCategory = (id: number): boolean => [...found.keys()].some((name) => set.technologies.get(name)?.categories.includes(id) === true)
  for (let progress = true; progress && pending.length > 0;) {
    progress = false
    for (let i = pending.length - 1; i >= 0; i--) {
      const fp = pending[i]
      if (fp === undefined) continue
      const ready = fp.requires.every((name) => found.has(name)) && fp.requiresCategory.every(inCategory)
      if (!ready) continue
      pending.splice(i, 1)
      const hit = matcher.run(fp)
      if (hit !== null) { found.set(fp.name, hit); progress = true }
    }
  }
  for (const name of [...found.keys()]) {
    for (const excluded of set.technologies.get(name)?.excludes ?? []) found.delete(excluded)
  }
  const queue = [...found.keys()]
  for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
    const parent = found.get(name)
    if (parent === undefined) continue
    for (const implied of set.technologies.get(name)?.implies ?? []) {
      if (found.has(implied.name) || !set.technologies.has(implied.name)) continue
      found.set(implied.name, { confidence: Math.min(parent.confidence, implied.confidence), version: implied.version })
      queue.push(implied.name)
    }
  }
  return [...found.entries()].map(([name, hit]) => describe(set, name, hit)).sort(byPriority(set))
}

function describe (set: FingerprintSet, name: string, hit: Found): Technology {
  const fp = set.technologies.get(name)
  return {
    name,
    confidence: hit.confidence,
    version: hit.version === '' ? null : hit.version,
    logo: null,
    url: fp?.website ?? null,
    categories: (fp?.categories ?? []).flatMap((id) => set.categories.get(id)?.name ?? [])
  }
}

function byPriority (set: FingerprintSet): (a: Technology, b: Technology) => number {
  const priority = (name: string): number => Math.min(10, ...(set.technologies.get(name)?.categories ?? []).map((id) => set.categories.get(id)?.priority ?? 10))
  return (a, b) => priority(a.name) - priority(b.name) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
}
