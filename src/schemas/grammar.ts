// The query grammar (docs/api.md §2): reads a raw query string into a tree of nodes keyed by canonical
// segment names (Maps, so no key can reach a prototype). A shape per position, declared with the
// parameter table, tells how a segment is spelled canonically (known names: camelCase/snake_case and
// letter case do not matter; user-chosen names: kept as written, or lower-cased, kebab-cased or
// camelized), whether a value starting with `{` or `[` is JSON, and whether a repeated plain key builds
// an array. Each node keeps its own value apart from its children, so `screenshot=false` can win over
// `screenshot.type=jpeg`. Nothing here knows a parameter by name: the root shape comes from the table.
import { MAX_QUERY_BYTES } from './options.ts'
import { fail, show } from './messages.ts'
import type { ParamDoc } from './param-doc.ts'

// ---------------------------------------------------------------------------------------------
// Limits of the grammar itself.

/** Dot segments in one key. */
const MAX_KEY_DEPTH = 32
/** Nesting of a JSON value (and of the rules and settings read from it). */
export const MAX_JSON_DEPTH = 32
/** Largest array index accepted in a numeric segment. */
const MAX_INDEX = 9999
/** Names that must never be used as object keys. */
export const FORBIDDEN_NAMES = new Set(['__proto__', 'constructor', 'prototype'])

// ---------------------------------------------------------------------------------------------
// The tree.

export type Prim = string | number | boolean | null

export interface Node {
  /** The value given at this exact path: a primitive, or the mark of a JSON object/array. */
  self?: { kind: 'value', value: Prim } | { kind: 'struct', array: boolean }
  kids: Map<string, Node>
  /** Highest numeric child index, for repeated plain keys that push. */
  maxIndex: number
}

export function newNode (): Node {
  return { kids: new Map(), maxIndex: -1 }
}

function childNode (node: Node, seg: string): Node {
  let kid = node.kids.get(seg)
  if (kid === undefined) {
    kid = newNode()
    node.kids.set(seg, kid)
  }
  return kid
}

function noteIndex (node: Node, seg: string): void {
  if (/^\d+$/.test(seg)) node.maxIndex = Math.max(node.maxIndex, Number(seg))
}

// ---------------------------------------------------------------------------------------------
// The shapes of positions.

/** How a user-chosen name is written canonically. */
export type NameCase = 'as-written' | 'lower' | 'kebab' | 'camel'

export interface ShapeSpec {
  /** Known child names, written canonically (matched loosely). */
  readonly keys?: Readonly<Record<string, ShapeSpec>>
  /** User-named children: how a name is written canonically, the placeholder the docs show, and their shape. */
  readonly map?: { readonly name: NameCase, readonly label: string, readonly child: ShapeSpec }
  /** Numeric segments (array items). */
  readonly items?: ShapeSpec
  /** How a value starting with `{` or `[` is read: JSON (errors are errors), or JSON only if it is an array. */
  readonly json?: 'strict' | 'list'
  /** A repeated plain value appends an item instead of replacing. */
  readonly push?: boolean
  /** JSON errors here are EINVALDATA. */
  readonly data?: boolean
  /** A name that is known only to be refused (`path`, docs/api.md §2). */
  readonly rejected?: true
  /** Documented sub-parameter; positions without it are accepted but left out of the reference. */
  readonly doc?: ParamDoc
}

/** A shape being built, for the cyclic ones (rules nest through `attr`, Lighthouse settings through themselves). */
export type MutableShape = { -readonly [K in keyof ShapeSpec]: ShapeSpec[K] }

const ANY: ShapeSpec = Object.freeze({})

/** The loose form of a known name: case, `_` and `-` do not matter. */
export function loose (name: string): string {
  // Most names come spelled as the table spells them, lower case: nothing to rewrite, nothing to allocate.
  return LOOSE_AS_IT_IS.test(name) ? name : name.toLowerCase().replace(/[_-]/g, '')
}

const LOOSE_AS_IT_IS = /^[a-z0-9.]*$/

const looseKeys = new WeakMap<ShapeSpec, ReadonlyMap<string, { name: string, shape: ShapeSpec }>>()

/** The known child of `shape` spelled `raw` in any of its loose forms. */
export function knownKey (shape: ShapeSpec, raw: string): { name: string, shape: ShapeSpec } | undefined {
  if (shape.keys === undefined) return undefined
  let map = looseKeys.get(shape)
  if (map === undefined) {
    const built = new Map<string, { name: string, shape: ShapeSpec }>()
    for (const [name, kid] of Object.entries(shape.keys)) built.set(loose(name), { name, shape: kid })
    looseKeys.set(shape, built)
    map = built
  }
  return map.get(loose(raw))
}

const isUpper = (char: string | undefined): boolean => char !== undefined && char >= 'A' && char <= 'Z'
const isLower = (char: string | undefined): boolean => char !== undefined && char >= 'a' && char <= 'z'
const isLowerOrDigit = (char: string | undefined): boolean => isLower(char) || (char !== undefined && char >= '0' && char <= '9')

/** `userAgent`, `user_agent`, `User-Agent`, `XForwardedFor` -> `user-agent`, `x-forwarded-for` (linear time). */
export function kebabHeaderName (name: string): string {
  let out = ''
  for (let i = 0; i < name.length; i++) {
    const char = name[i] ?? ''
    if (char === '_') {
      out += '-'
      continue
    }
    if (isUpper(char)) {
      const prev = name[i - 1]
      // A word starts here: after a lower-case letter or digit, or at the last capital of an acronym.
      if (isLowerOrDigit(prev) || (isUpper(prev) && isLower(name[i + 1]))) out += '-'
      out += char.toLowerCase()
      continue
    }
    out += char.toLowerCase()
  }
  return out
}

/** `only_categories` -> `onlyCategories` (linear time). */
function camelize (name: string): string {
  let out = ''
  let upperNext = false
  for (const char of name) {
    if (char === '_' || char === '-') {
      upperNext = true
      continue
    }
    out += upperNext ? char.toUpperCase() : char
    upperNext = false
  }
  return out
}

function mapName (name: NameCase, raw: string): string {
  switch (name) {
    case 'as-written': return raw
    case 'lower': return raw.toLowerCase()
    case 'kebab': return kebabHeaderName(raw)
    case 'camel': return camelize(raw)
  }
}

function childFor (shape: ShapeSpec, raw: string): { seg: string, shape: ShapeSpec } | { index: number, shape: ShapeSpec } {
  if (shape.items !== undefined && /^\d+$/.test(raw)) {
    const stripped = raw.replace(/^0+(?=\d)/, '')
    return { index: stripped.length > 6 ? Number.POSITIVE_INFINITY : Number(stripped), shape: shape.items }
  }
  const known = knownKey(shape, raw)
  if (known !== undefined) return { seg: known.name, shape: known.shape }
  // Reserved names stay as they are, so that the user-named positions can reject them.
  if (shape.map !== undefined) return { seg: FORBIDDEN_NAMES.has(raw) ? raw : mapName(shape.map.name, raw), shape: shape.map.child }
  return { seg: raw, shape: ANY }
}

// ---------------------------------------------------------------------------------------------
// Reading the raw query into the tree (docs/api.md §1.4 step 4).

const NEEDS_DECODING = /[%+]/

function decodeComponent (text: string, whole: string): string {
  // A component without escapes or `+` decodes to itself (most names and many values).
  if (!NEEDS_DECODING.test(text)) {
    if (!text.isWellFormed()) fail('EINVALQUERY', 'query', `The query has invalid Unicode in \`${show(whole)}\`.`)
    return text
  }
  let decoded: string
  try {
    decoded = decodeURIComponent(text.replace(/\+/g, ' '))
  } catch {
    fail('EINVALQUERY', 'query', `The query has an invalid percent-escape or invalid UTF-8 in \`${show(whole)}\`.`)
  }
  if (!decoded.isWellFormed()) {
    fail('EINVALQUERY', 'query', `The query has invalid Unicode in \`${show(whole)}\`.`)
  }
  return decoded
}

function parseJson (text: string, param: string, shape: ShapeSpec): unknown {
  try {
    return JSON.parse(text)
  } catch (err) {
    const reason = err instanceof Error ? err.message : 'invalid JSON'
    fail(shape.data === true ? 'EINVALDATA' : 'EINVALQUERY', param,
      `The \`${param}\` holds invalid JSON (\`${show(text)}\`): ${reason}.`)
  }
}

/** Puts a parsed JSON value at `node`, replacing what was there; `param` names the parameter it was given for. */
function insertJson (node: Node, shape: ShapeSpec, value: unknown, param: string, depth: number): void {
  if (depth > MAX_JSON_DEPTH) {
    fail(shape.data === true ? 'EINVALDATA' : 'EINVALQUERY', param, `The \`${param}\` JSON value is nested too deeply.`)
  }
  node.kids = new Map()
  node.maxIndex = -1
  if (value !== null && typeof value === 'object') {
    const array = Array.isArray(value)
    node.self = { kind: 'struct', array }
    const entries: Array<[string, unknown]> = array
      ? (value as unknown[]).map((item, i) => [String(i), item])
      : Object.entries(value as Record<string, unknown>)
    for (const [key, item] of entries) {
      const child = childFor(shape, key)
      if ('index' in child) {
        if (child.index > MAX_INDEX) fail(shape.data === true ? 'EINVALDATA' : 'EINVALQUERY', param, `The \`${param}\` array is too long.`)
        const seg = String(child.index)
        insertJson(childNode(node, seg), child.shape, item, param, depth + 1)
        noteIndex(node, seg)
      } else {
        insertJson(childNode(node, child.seg), child.shape, item, param, depth + 1)
      }
    }
    return
  }
  const prim = value as Prim
  if (shape.push === true) {
    node.self = undefined
    node.kids.set('0', { self: { kind: 'value', value: prim }, kids: new Map(), maxIndex: -1 })
    node.maxIndex = 0
    return
  }
  node.self = { kind: 'value', value: prim }
}

function insertValue (node: Node, shape: ShapeSpec, raw: string, param: string): void {
  const first = raw[0]
  if (shape.json !== undefined && (first === '{' || first === '[')) {
    if (shape.json === 'strict') {
      insertJson(node, shape, parseJson(raw, param, shape), param, 0)
      return
    }
    // A string-or-list parameter: `[` opens a JSON array if it parses as one; otherwise the value is
    // a plain string (a CSS selector such as `[itemprop=name]`, or inline code).
    if (first === '[') {
      let parsed: unknown
      try {
        parsed = JSON.parse(raw)
      } catch {
        parsed = undefined
      }
      if (Array.isArray(parsed)) {
        insertJson(node, shape, parsed, param, 0)
        return
      }
    }
  }
  if (shape.push === true) {
    if (node.maxIndex + 1 > MAX_INDEX) fail('EINVALQUERY', param, `The \`${param}\` array is too long.`)
    const seg = String(node.maxIndex + 1)
    node.kids.set(seg, { self: { kind: 'value', value: raw }, kids: new Map(), maxIndex: -1 })
    node.maxIndex += 1
    return
  }
  node.self = { kind: 'value', value: raw }
}

/** The refused names (`path`, `screenshot.path`, `pdf.path`): at the root first, then under each root key in order. */
function rejectedOf (root: ShapeSpec): Array<{ parent?: string, name: string }> {
  const out: Array<{ parent?: string, name: string }> = []
  const keys = Object.entries(root.keys ?? {})
  for (const [name, shape] of keys) if (shape.rejected === true) out.push({ name })
  for (const [parent, shape] of keys) {
    for (const [name, kid] of Object.entries(shape.keys ?? {})) if (kid.rejected === true) out.push({ parent, name })
  }
  return out
}

const rejectedCache = new WeakMap<ShapeSpec, Array<{ parent?: string, name: string }>>()

/** Reads `rawQuery` (with or without its `?`) into a tree shaped by `rootShape`. Throws only AppError. */
export function readTree (rawQuery: string, rootShape: ShapeSpec): Node {
  const query = rawQuery.startsWith('?') ? rawQuery.slice(1) : rawQuery
  if (Buffer.byteLength(query, 'utf8') > MAX_QUERY_BYTES) {
    fail('EINVALQUERY', 'query', `The query is longer than ${MAX_QUERY_BYTES / 1024} KiB.`)
  }
  const root = newNode()
  if (query === '') return root
  for (const pair of query.split('&')) {
    if (pair === '') continue
    const eq = pair.indexOf('=')
    const key = decodeComponent(eq === -1 ? pair : pair.slice(0, eq), pair)
    const value = eq === -1 ? '' : decodeComponent(pair.slice(eq + 1), pair)
    if (key === '') continue
    const segments = key.split('.')
    const rootName = knownKey(rootShape, segments[0] ?? '')?.name
    if (segments.length > MAX_KEY_DEPTH) {
      fail('EINVALQUERY', show(key), `The key \`${show(key)}\` has more than ${MAX_KEY_DEPTH} dot segments.`)
    }
    if (segments.some((seg) => seg === '')) {
      // An empty segment (`a..b`, `screenshot.`): an error under a known parameter, else ignored.
      if (rootName !== undefined) fail('EINVALQUERY', show(key), `The key \`${show(key)}\` has an empty segment.`)
      continue
    }
    let node = root
    let shape = rootShape
    const names: string[] = []
    for (const raw of segments) {
      const child = childFor(shape, raw)
      let seg: string
      if ('index' in child) {
        if (child.index > MAX_INDEX) fail('EINVALQUERY', show(key), `The array index in \`${show(key)}\` is larger than ${MAX_INDEX}.`)
        seg = String(child.index)
        noteIndex(node, seg)
      } else {
        seg = child.seg
      }
      names.push(seg)
      node = childNode(node, seg)
      shape = child.shape
    }
    insertValue(node, shape, value, names.join('.'))
  }
  let rejected = rejectedCache.get(rootShape)
  if (rejected === undefined) {
    rejected = rejectedOf(rootShape)
    rejectedCache.set(rootShape, rejected)
  }
  for (const { parent, name } of rejected) {
    const param = parent === undefined ? name : `${parent}.${name}`
    const node = parent === undefined ? root : root.kids.get(parent)
    if (node?.kids.has(name) === true) {
      fail('EINVALQUERY', param, `The \`${param}\` parameter is not supported: generated files are stored by the service.`)
    }
  }
  return root
}
