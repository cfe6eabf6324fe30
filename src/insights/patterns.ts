// Wappalyzer-format patterns (docs/bundled-data.md): a regular expression written as a string, matched
// case-insensitively, with tags appended after `\;`: `confidence:50` (the share of certainty one match gives, 100
// when absent) and `version:\1` (a template over the capture groups, with `\1?a:b` ternaries).
//
// The set is trusted data, but what its patterns read is the page's, and many of them backtrack badly (a 60 KB script
// URL kept one busy for 40 s, issue 20). So every pattern is bounded twice: it runs on RE2, the linear-time engine
// (src/util/re2.ts), compiled the first time it runs; and the value it reads is cut first, to MAX_VALUE_CHARS
// for the short ones (script URLs, URL, headers, cookies, meta, JS globals, attributes, DOM properties) while page
// text (html, scripts, css, text) is cut by signals.ts. The few patterns RE2 cannot take (lookarounds; counted in
// docs/bundled-data.md, listed by test/unit/technologies.test.ts) run on JavaScript's engine with every `+` and `*`
// bounded (`{1,250}`, `{0,250}`, the limit Wappalyzer's own engine put on the first of them) and read at most
// MAX_BACKTRACKING_CHARS; so do all of them when the re2 addon is missing (server.ts warns at start).
import { loadRe2 } from '../util/re2.ts'

/** Characters of a short value (script URL, header, cookie, meta, JS global, attribute) that a pattern reads. */
export const MAX_VALUE_CHARS = 512
/** Characters of page text that a pattern on the backtracking engine reads. */
export const MAX_BACKTRACKING_CHARS = 32 * 1024

export type Engine = 're2' | 'backtracking'

export interface Pattern {
  /** The expression as written, or null when the pattern is only a presence check (an empty string). */
  readonly expression: string | null
  /** The compiled expression (compiled on first use), or null for a presence check. */
  readonly regex: RegExp | null
  /** The engine the expression runs on (compiled on first use); null for a presence check. */
  readonly engine: Engine | null
  /** 0–100. */
  readonly confidence: number
  /** The version template, '' when the pattern gives none. */
  readonly version: string
  /** Lower-case ASCII text every match contains, so most patterns skip a page unrun. */
  readonly literal: string | null
  /** Characters of a value it reads: longer values are cut before it runs. */
  readonly maxInput: number
}

/** A repetition longer than this is not followed by `+` and `*`. */
export const MAX_REPETITION = 250

/**
 * The expression with its unbounded repetitions bounded: `+` becomes `{1,250}` and `*` becomes `{0,250}` outside
 * character classes and escapes. A lazy `+?` stays lazy (`{1,250}?`).
 */
export function boundRepetitions (source: string): string {
  let out = ''
  let inClass = false
  for (let i = 0; i < source.length; i++) {
    const c = source[i] ?? ''
    if (c === '\\') {
      out += c + (source[i + 1] ?? '')
      i++
    } else if (inClass) {
      if (c === ']') inClass = false
      out += c
    } else if (c === '[') {
      inClass = true
      out += c
    } else if (c === '+') {
      out += `{1,${MAX_REPETITION}}`
    } else if (c === '*') {
      out += `{0,${MAX_REPETITION}}`
    } else {
      out += c
    }
  }
  return out
}

/** An expression on RE2 when it takes it, else on JavaScript's engine with its repetitions bounded. */
export function compileExpression (expression: string, flags = 'i'): { regex: RegExp, engine: Engine } {
  const RE2 = loadRe2()
  if (RE2 !== undefined) {
    try {
      return { regex: new RE2(expression, flags), engine: 're2' }
    } catch {}
  }
  // `u` is not used: the set is written for the non-unicode dialect (`\/`, `\-` outside classes).
  return { regex: new RegExp(boundRepetitions(expression), flags), engine: 'backtracking' }
}

class CompiledPattern implements Pattern {
  readonly expression: string | null
  readonly confidence: number
  readonly version: string
  readonly literal: string | null
  readonly #maxInput: number
  #compiled: { regex: RegExp, engine: Engine } | undefined

  constructor (expression: string | null, confidence: number, version: string, maxInput: number) {
    this.expression = expression
    this.confidence = confidence
    this.version = version
    this.literal = expression === null ? null : requiredLiteral(expression)
    this.#maxInput = maxInput
  }

  #compile (): { regex: RegExp, engine: Engine } | undefined {
    if (this.expression === null) return undefined
    this.#compiled ??= compileExpression(this.expression)
    return this.#compiled
  }

  get regex (): RegExp | null { return this.#compile()?.regex ?? null }
  get engine (): Engine | null { return this.#compile()?.engine ?? null }
  get maxInput (): number {
    return this.engine === 'backtracking' ? Math.min(this.#maxInput, MAX_BACKTRACKING_CHARS) : this.#maxInput
  }
}

/**
 * Compiles one pattern string; null when its expression is not valid JavaScript (such a pattern never matches).
 * `long`: the pattern reads page text (cut by signals.ts); else a short value, cut to MAX_VALUE_CHARS.
 */
export function parsePattern (text: string, long = false): Pattern | null {
  const [expression = '', ...tags] = text.split('\\;')
  let confidence = 100
  let version = ''
  for (const tag of tags) {
    const colon = tag.indexOf(':')
    if (colon < 0) continue
    const key = tag.slice(0, colon)
    const value = tag.slice(colon + 1)
    if (key === 'confidence') {
      const parsed = Number.parseInt(value, 10)
      if (Number.isFinite(parsed)) confidence = Math.max(0, Math.min(100, parsed))
    } else if (key === 'version') {
      version = value
    }
  }
  const maxInput = long ? Number.POSITIVE_INFINITY : MAX_VALUE_CHARS
  if (expression === '') return new CompiledPattern(null, confidence, version, maxInput)
  try {
    // The syntax check only (V8 compiles on first use): the set is written for JavaScript's dialect.
    void new RegExp(expression, 'i')
  } catch {
    return null
  }
  return new CompiledPattern(expression, confidence, version, maxInput)
}

const CLASS_ESCAPES = new Set(['d', 'D', 'w', 'W', 's', 'S', 'b', 'B'])

/**
 * The longest run of plain characters (at least 3, ASCII) that every match of the expression contains, lower-cased;
 * null when there is none or the expression is not read simply enough to say (an alternation at the top level, an
 * escape such as `\x41`). Only the top level is read: groups, classes and optional characters end a run.
 */
export function requiredLiteral (source: string): string | null {
  let best = ''
  let run = ''
  let depth = 0
  const end = (): void => {
    if (run.length > best.length) best = run
    run = ''
  }
  for (let i = 0; i < source.length; i++) {
    const c = source[i] ?? ''
    let literal: string | undefined
    if (c === '\\') {
      const next = source[i + 1] ?? ''
      i++
      if (/[A-Za-z0-9]/.test(next)) {
        if (!CLASS_ESCAPES.has(next)) return null
        end()
        continue
      }
      literal = next
    } else if (c === '(') {
      depth++
      end()
    } else if (c === ')') {
      depth = Math.max(0, depth - 1)
      end()
    } else if (c === '|') {
      if (depth === 0) return null
    } else if (c === '[') {
      end()
      for (i++; i < source.length && source[i] !== ']'; i++) if (source[i] === '\\') i++
    } else if (depth === 0) {
      if ('?*{'.includes(c)) {
        run = run.slice(0, -1)
        end()
        if (c === '{') while (i < source.length && source[i] !== '}') i++
      } else if ('+.^$'.includes(c)) {
        end()
      } else {
        literal = c
      }
    }
    if (literal !== undefined && depth === 0) {
      // A character a quantifier makes optional is not required.
      const next = source[i + 1] ?? ''
      if (next !== '' && '?*{'.includes(next)) end()
      else if (/^[\x20-\x7e]$/.test(literal)) run += literal.toLowerCase()
      else end()
    }
  }
  end()
  return best.length >= 3 ? best : null
}

/** What one pattern gives for a value: null when it does not match, else the version it reads ('' for none). */
export function matchPattern (pattern: Pattern, value: string): { version: string } | null {
  const regex = pattern.regex
  if (regex === null) return { version: resolveVersion(pattern.version, [value]) }
  const max = pattern.maxInput
  const match = regex.exec(value.length > max ? value.slice(0, max) : value)
  if (match === null) return null
  return { version: resolveVersion(pattern.version, [...match]) }
}

/** Capture groups longer than this are not versions (Wappalyzer's rule: a long group is page text). */
const MAX_GROUP_LENGTH = 10

/**
 * The version a template gives for a match: `\N` is the Nth group ('' when it did not take part), `\N?a:b` is `a`
 * when the group has a value and `b` otherwise, and anything else is literal (`foo\1`).
 */
export function resolveVersion (template: string, groups: ReadonlyArray<string | undefined>): string {
  if (template === '') return ''
  const group = (n: number): string => {
    const value = groups[n] ?? ''
    return value.length > MAX_GROUP_LENGTH ? '' : value
  }
  const ternary = /\\(\d+)\?([^:]*):(.*)$/.exec(template)
  let resolved = template
  if (ternary !== null) {
    const [whole, index = '0', then = '', otherwise = ''] = ternary
    resolved = template.slice(0, ternary.index) + (group(Number(index)) === '' ? otherwise : then) + template.slice(ternary.index + whole.length)
  }
  return resolved.replace(/\\(\d+)/g, (_all, index: string) => group(Number(index))).trim()
}
