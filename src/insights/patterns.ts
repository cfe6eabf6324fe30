// Wappalyzer-format patterns (docs/bundled-data.md): a regular expression written as a string, matched
// case-insensitively, with tags appended after `\;`: `confidence:50` (the share of certainty one match gives, 100
// when absent) and `version:\1` (a template over the capture groups, with `\1?a:b` ternaries). The set is trusted
// data, but some of its expressions run over page text of any size (html, scripts, text, css), so there every
// unbounded `+` and `*` is compiled as `{1,250}` and `{0,250}` (the limit Wappalyzer's own engine put on the first
// of them), and those inputs are cut to a size (signals.ts): no pattern scans megabytes with an open-ended
// repetition. Patterns over short values (headers, cookies, meta, script URLs, JS globals) are compiled as written.

export interface Pattern {
  /** The expression, or null when the pattern is only a presence check (an empty string). */
  readonly regex: RegExp | null
  /** 0–100. */
  readonly confidence: number
  /** The version template, '' when the pattern gives none. */
  readonly version: string
  /** Lower-case ASCII text every match contains, so most patterns skip a page unrun. */
  readonly literal: string | null
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

/**
 * Compiles one pattern string; null when its expression is not valid JavaScript (such a pattern never matches).
 * `bounded`: the pattern reads page text of any size, so its repetitions are bounded.
 */
export function parsePattern (text: string, bounded = false): Pattern | null {
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
  if (expression === '') return { regex: null, confidence, version, literal: null }
  try {
    // `u` is not used: the set is written for the non-unicode dialect (`\/`, `\-` outside classes).
    const regex = new RegExp(bounded ? boundRepetitions(expression) : expression, 'i')
    return { regex, confidence, version, literal: requiredLiteral(expression) }
  } catch {
    return null
  }
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
  if (pattern.regex === null) return { version: resolveVersion(pattern.version, [value]) }
  const match = pattern.regex.exec(value)
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
