// The query grammar (API.md §2) and every parameter of §3, parsed into one typed, normalized
// ExtractOptions. parseQuery follows the check order of §1.4 for its part:
//   (4) parsing of the raw query          -> EINVALQUERY (EINVALDATA for bad JSON under `data`)
//   (5) plan gates on the free listener   -> ETTL, ESTTL, ECACHEKEY, EHEADERS, EPROXY, EFILENAME
//   (6) value validation                  -> EINVALURL, EINVALTTL, ..., EINVALQUERY for the rest
// It throws nothing but AppError. The literal address checks of §10 (EFORBIDDENURL) need the server's
// ALLOW_PRIVATE_HOSTS and are left to the caller, on `url` and `proxy`, before the cache lookup.
//
// The query is first read into a tree of nodes keyed by canonical segment names (Maps, so no key can
// reach a prototype). A schema of "shapes" tells, per position, how a segment is spelled canonically
// (known names: camelCase/snake_case and letter case do not matter; user-chosen names: kept as
// written, or lower-cased/kebab-cased for `iframe.*`/`headers.*`), whether a value starting with `{`
// or `[` is JSON, and whether a repeated plain key builds an array. Each node keeps its own value
// apart from its children, so `screenshot=false` can win over `screenshot.type=jpeg`.
import { createRequire } from 'node:module'
import { Script } from 'node:vm'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import ms from 'ms'
import { AppError } from '../errors.ts'
import type { ErrorCode } from '../errors.ts'
import { DEFAULT_DEVICE, resolveDevice, suggestDevices } from '../browser/devices.ts'
import { DEFAULT_CODE_SCHEME, resolveCodeScheme } from './code-schemes.ts'
import {
  ATTR_KEYWORDS, COLOR_SCHEMES, DEFAULT_PDF_MARGIN, DEFAULT_PDF_SCALE, DEFAULT_RETRY, DEFAULT_SCREENSHOT_QUALITY,
  DEFAULT_TTL, LIGHTHOUSE_OUTPUTS, LIGHTHOUSE_PRESETS, MAX_FREE_FUNCTION_BYTES, MAX_FUNCTION_BYTES, MAX_QUERY_BYTES,
  MAX_TTL, META_FIELDS, MIN_TTL, PAPER_FORMATS, PAPER_SIZES_IN, PING_KINDS, RULE_TYPES, WAIT_UNTIL
} from './options.ts'
import type {
  ColorScheme, ExtractOptions, FunctionArg, InsightsOptions, LighthouseOptions, MetaField, PaperFormat, PdfMargin,
  PdfOptions, PingOptions, Rule, RuleType, ScreenshotOptions, ScreenshotType, Viewport, WaitUntil
} from './options.ts'

export interface ParseContext {
  plan: 'free' | 'pro'
  /** The request's headers (Node's IncomingHttpHeaders or any record). */
  headers: Record<string, string | string[] | undefined>
  /** MAX_TIMEOUT in ms: the ceiling of `timeout`, and its default. */
  maxTimeout: number
}

// ---------------------------------------------------------------------------------------------
// Limits of the grammar itself.

/** Dot segments in one key. */
const MAX_KEY_DEPTH = 32
/** Nesting of a JSON value. */
const MAX_JSON_DEPTH = 32
/** Largest array index accepted in a numeric segment. */
const MAX_INDEX = 9999
/** Names that must never be used as object keys. */
const FORBIDDEN_NAMES = new Set(['__proto__', 'constructor', 'prototype'])

// ---------------------------------------------------------------------------------------------
// The tree.

type Prim = string | number | boolean | null

interface Node {
  /** The value given at this exact path: a primitive, or the mark of a JSON object/array. */
  self?: { kind: 'value', value: Prim } | { kind: 'struct', array: boolean }
  kids: Map<string, Node>
  /** Highest numeric child index, for repeated plain keys that push. */
  maxIndex: number
}

function newNode (): Node {
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
// The schema of positions.

interface Shape {
  /** Known child names, by their loose form. */
  keys?: ReadonlyMap<string, { name: string, shape: Shape }>
  /** User-named children: how a name is written canonically, and their shape. */
  map?: { name: (raw: string) => string, child: Shape }
  /** Numeric segments (array items). */
  items?: Shape
  /** How a value starting with `{` or `[` is read: JSON (errors are errors), or JSON only if it is an array. */
  json?: 'strict' | 'list'
  /** A repeated plain value appends an item instead of replacing. */
  push?: boolean
  /** JSON errors here are EINVALDATA. */
  data?: boolean
}

const ANY: Shape = Object.freeze({})

/** The loose form of a known name: case, `_` and `-` do not matter. */
function loose (name: string): string {
  return name.toLowerCase().replace(/[_-]/g, '')
}

function keysOf (entries: Record<string, Shape>): ReadonlyMap<string, { name: string, shape: Shape }> {
  const map = new Map<string, { name: string, shape: Shape }>()
  for (const [name, shape] of Object.entries(entries)) map.set(loose(name), { name, shape })
  return map
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

const SHAPES = deepFreeze(buildShapes())

/** Freezes the schema (it is cyclic: rules nest through `attr`, settings through themselves). */
function deepFreeze<T> (value: T, seen = new Set<unknown>()): T {
  if (value === null || typeof value !== 'object' || seen.has(value)) return value
  seen.add(value)
  if (value instanceof Map) for (const entry of value.values()) deepFreeze(entry, seen)
  else for (const entry of Object.values(value)) deepFreeze(entry, seen)
  return Object.freeze(value)
}

function buildShapes (): { root: Shape } {
  const LEAF: Shape = ANY
  const LIST: Shape = { items: LEAF, push: true, json: 'list' }
  const DATA_LIST: Shape = { items: LEAF, push: true, json: 'list', data: true }
  // Rules nest through `attr`: build the cycle, then fill in the keys.
  const rule: Shape = { json: 'strict', data: true }
  const ruleOrList: Shape = { items: rule, json: 'strict', data: true }
  const attr: Shape = { items: LEAF, push: true, json: 'strict', data: true, map: { name: (raw) => raw, child: ruleOrList } }
  rule.keys = keysOf({ selector: DATA_LIST, selectorAll: DATA_LIST, attr, type: LEAF, evaluate: LEAF })
  ruleOrList.keys = rule.keys

  const overlay: Shape = { keys: keysOf({ browser: LEAF, background: LEAF }), json: 'strict' }
  const margin: Shape = { keys: keysOf({ top: LEAF, right: LEAF, bottom: LEAF, left: LEAF }), json: 'strict' }
  const screenshotKeys = {
    type: LEAF, quality: LEAF, fullPage: LEAF, element: LEAF, omitBackground: LEAF, overlay, codeScheme: LEAF,
    animated: LEAF, optimizeForSpeed: LEAF, path: LEAF
  }
  const pdfKeys = {
    format: LEAF, width: LEAF, height: LEAF, margin, scale: LEAF, landscape: LEAF, printBackground: LEAF,
    pageRanges: LEAF, path: LEAF
  }
  // Lighthouse settings: camelCase names and numeric segments, nested freely.
  const settingsMap: { name: (raw: string) => string, child: Shape } = { name: camelize, child: ANY }
  const settingsValue: Shape = { map: settingsMap }
  settingsValue.items = settingsValue
  settingsMap.child = settingsValue
  const lighthouse: Shape = { keys: keysOf({ output: LEAF, preset: LEAF }), map: { name: camelize, child: settingsValue }, json: 'strict' }
  const metaKeys: Record<string, Shape> = {}
  for (const field of META_FIELDS) metaKeys[field] = ANY
  const pingKeys: Record<string, Shape> = {}
  for (const kind of PING_KINDS) pingKeys[kind] = LEAF

  const root: Shape = {
    keys: keysOf({
      url: LEAF,
      meta: { keys: keysOf(metaKeys), json: 'strict' },
      data: { map: { name: (raw) => raw, child: ruleOrList }, json: 'strict', data: true },
      filter: LEAF,
      embed: LEAF,
      stream: LEAF,
      screenshot: { keys: keysOf(screenshotKeys), json: 'strict' },
      pdf: { keys: keysOf(pdfKeys), json: 'strict' },
      video: LEAF,
      audio: LEAF,
      iframe: { map: { name: (raw) => raw.toLowerCase(), child: LEAF }, json: 'strict' },
      insights: { keys: keysOf({ technologies: LEAF, lighthouse }), json: 'strict' },
      palette: LEAF,
      ping: { keys: keysOf(pingKeys), json: 'strict' },
      function: LEAF,
      device: LEAF,
      viewport: {
        keys: keysOf({ width: LEAF, height: LEAF, deviceScaleFactor: LEAF, isMobile: LEAF, hasTouch: LEAF, isLandscape: LEAF }),
        json: 'strict'
      },
      colorScheme: LEAF,
      mediaType: LEAF,
      javascript: LEAF,
      animations: LEAF,
      adblock: LEAF,
      headers: { map: { name: kebabHeaderName, child: LEAF }, json: 'strict' },
      prerender: LEAF,
      waitUntil: LIST,
      waitForSelector: LEAF,
      waitForTimeout: LEAF,
      timeout: LEAF,
      click: LIST,
      scroll: LEAF,
      modules: LIST,
      scripts: LIST,
      styles: LIST,
      retry: LEAF,
      proxy: { keys: keysOf({ url: LEAF }), json: 'strict' },
      ttl: LEAF,
      staleTtl: LEAF,
      force: LEAF,
      cacheKey: LEAF,
      filename: LEAF,
      path: LEAF,
      // Legacy top-level aliases (§2), read only when their parent is on.
      fullPage: LEAF,
      element: LEAF,
      overlay,
      omitBackground: LEAF,
      type: LEAF,
      scale: LEAF,
      margin,
      format: LEAF,
      landscape: LEAF,
      pageRanges: LEAF
    })
  }
  return { root }
}

const SCREENSHOT_ALIASES = ['fullPage', 'element', 'overlay', 'omitBackground', 'type'] as const
const PDF_ALIASES = ['scale', 'margin', 'format', 'landscape', 'pageRanges'] as const
const KNOWN_ROOT = new Set([...(SHAPES.root.keys?.values() ?? [])].map((entry) => entry.name))

function childFor (shape: Shape, raw: string): { seg: string, shape: Shape } | { index: number, shape: Shape } {
  if (shape.items !== undefined && /^\d+$/.test(raw)) {
    const stripped = raw.replace(/^0+(?=\d)/, '')
    return { index: stripped.length > 6 ? Number.POSITIVE_INFINITY : Number(stripped), shape: shape.items }
  }
  const known = shape.keys?.get(loose(raw))
  if (known !== undefined) return { seg: known.name, shape: known.shape }
  // Reserved names stay as they are, so that the user-named positions can reject them.
  if (shape.map !== undefined) return { seg: FORBIDDEN_NAMES.has(raw) ? raw : shape.map.name(raw), shape: shape.map.child }
  return { seg: raw, shape: ANY }
}

// ---------------------------------------------------------------------------------------------
// Messages and errors.

function show (value: unknown): string {
  let text: string
  if (typeof value === 'string') text = value
  else {
    try {
      text = JSON.stringify(value) ?? String(value)
    } catch {
      text = String(value)
    }
  }
  return text.length > 100 ? `${text.slice(0, 100)}…` : text
}

function fail (code: ErrorCode, param: string, detail: string): never {
  throw new AppError(code, { data: { [param]: detail } })
}

function invalid (code: ErrorCode, param: string, value: unknown, hint: string): never {
  fail(code, param, `The \`${param}\` has an invalid value (\`${show(value)}\`). ${hint}`)
}

// ---------------------------------------------------------------------------------------------
// Step 4: reading the raw query into the tree.

function decodeComponent (text: string, whole: string): string {
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

function parseJson (text: string, param: string, shape: Shape): unknown {
  try {
    return JSON.parse(text)
  } catch (err) {
    const reason = err instanceof Error ? err.message : 'invalid JSON'
    fail(shape.data === true ? 'EINVALDATA' : 'EINVALQUERY', param,
      `The \`${param}\` holds invalid JSON (\`${show(text)}\`): ${reason}.`)
  }
}

/** Puts a parsed JSON value at `node`, replacing what was there; `param` names the parameter it was given for. */
function insertJson (node: Node, shape: Shape, value: unknown, param: string, depth: number): void {
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

function insertValue (node: Node, shape: Shape, raw: string, param: string): void {
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

function readTree (rawQuery: string): Node {
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
    const rootName = SHAPES.root.keys?.get(loose(segments[0] ?? ''))?.name
    if (segments.length > MAX_KEY_DEPTH) {
      fail('EINVALQUERY', show(key), `The key \`${show(key)}\` has more than ${MAX_KEY_DEPTH} dot segments.`)
    }
    if (segments.some((seg) => seg === '')) {
      // An empty segment (`a..b`, `screenshot.`): an error under a known parameter, else ignored.
      if (rootName !== undefined) fail('EINVALQUERY', show(key), `The key \`${show(key)}\` has an empty segment.`)
      continue
    }
    let node = root
    let shape = SHAPES.root
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
  const rejected: Array<[Node | undefined, string]> = [[root, 'path'], [root.kids.get('screenshot'), 'screenshot.path'], [root.kids.get('pdf'), 'pdf.path']]
  for (const [parent, param] of rejected) {
    if (parent?.kids.has('path') === true) {
      fail('EINVALQUERY', param, `The \`${param}\` parameter is not supported: generated files are stored by the service.`)
    }
  }
  return root
}

// ---------------------------------------------------------------------------------------------
// Step 5: plan gates.

const API_HEADER_PREFIX = 'x-api-header-'

function apiHeaders (headers: ParseContext['headers']): Array<[string, string]> {
  const out: Array<[string, string]> = []
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase()
    if (!lower.startsWith(API_HEADER_PREFIX) || value === undefined) continue
    out.push([lower.slice(API_HEADER_PREFIX.length), Array.isArray(value) ? value.join(', ') : value])
  }
  return out
}

function checkPlanGates (root: Node, ctx: ParseContext): void {
  if (ctx.plan !== 'free') return
  const gates: Array<[string, ErrorCode]> = [
    ['ttl', 'ETTL'], ['staleTtl', 'ESTTL'], ['cacheKey', 'ECACHEKEY'], ['headers', 'EHEADERS'], ['proxy', 'EPROXY'], ['filename', 'EFILENAME']
  ]
  for (const [param, code] of gates) {
    if (param === 'headers') {
      const fromHeader = apiHeaders(ctx.headers)[0]
      if (fromHeader !== undefined) {
        fail('EHEADERS', `${API_HEADER_PREFIX}${fromHeader[0]}`, 'Forwarding headers with `x-api-header-*` needs the pro plan.')
      }
    }
    if (root.kids.has(param)) fail(code, param, `The \`${param}\` parameter needs the pro plan.`)
  }
}

// ---------------------------------------------------------------------------------------------
// Step 6: value readers.

function hasKids (node: Node): boolean {
  return node.kids.size > 0
}

/** Children in a fixed order (by name), so that the first error never depends on the query's order. */
function sortedKids (node: Node | undefined): Array<[string, Node]> {
  if (node === undefined) return []
  return [...node.kids].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
}

/** The single value at a scalar position (undefined when not given). */
function scalar (node: Node | undefined, param: string, code: ErrorCode = 'EINVALQUERY', key: string = param): Prim | undefined {
  if (node === undefined) return undefined
  if (hasKids(node) || node.self?.kind === 'struct') {
    fail(code, key, `The \`${param}\` takes a single value, not an object or a list.`)
  }
  return node.self?.value
}

function toBool (value: Prim | undefined, param: string, fallback: boolean): boolean {
  if (value === undefined) return fallback
  if (typeof value === 'boolean') return value
  if (typeof value === 'string') {
    const lower = value.trim().toLowerCase()
    if (lower === '' || lower === 'true') return true
    if (lower === 'false') return false
  }
  invalid('EINVALQUERY', param, value, 'It must be `true` or `false`.')
}

function bool (node: Node | undefined, param: string, fallback: boolean): boolean {
  return toBool(scalar(node, param), param, fallback)
}

function str (node: Node | undefined, param: string, code: ErrorCode = 'EINVALQUERY'): string | undefined {
  const value = scalar(node, param, code)
  if (value === undefined) return undefined
  if (typeof value !== 'string') invalid(code, param, value, 'It must be a string.')
  return value
}

/** A string that means "not given" when empty. */
function optionalString (node: Node | undefined, param: string): string | undefined {
  const value = str(node, param)?.trim()
  return value === '' ? undefined : value
}

function enumValue<T extends string> (node: Node | undefined, param: string, values: readonly T[], fallback: T, aliases: Record<string, T> = {}): T {
  const value = scalar(node, param)
  if (value === undefined) return fallback
  if (typeof value === 'string') {
    const lower = value.trim().toLowerCase()
    const alias = Object.hasOwn(aliases, lower) ? aliases[lower] : undefined
    if (alias !== undefined) return alias
    const found = values.find((candidate) => candidate.toLowerCase() === lower)
    if (found !== undefined) return found
  }
  invalid('EINVALQUERY', param, value, `It must be one of: ${values.join(', ')}.`)
}

const NUMBER_RE = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?$/i

function toNumber (value: Prim | undefined): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined
  if (typeof value === 'string' && NUMBER_RE.test(value.trim())) {
    const n = Number(value.trim())
    return Number.isFinite(n) ? n : undefined
  }
  return undefined
}

function numberIn (node: Node | undefined, param: string, min: number, max: number, fallback: number, integer: boolean): number {
  const value = scalar(node, param)
  if (value === undefined) return fallback
  const n = toNumber(value)
  if (n === undefined || n < min || n > max || (integer && !Number.isInteger(n))) {
    invalid('EINVALQUERY', param, value, `It must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max}.`)
  }
  return n
}

/** Milliseconds from a number or an `ms`-style string (`500ms`, `10s`, `1.5h`, `2 days`). */
export function parseDuration (value: Prim | undefined): number | undefined {
  if (typeof value === 'number') return Number.isNaN(value) ? undefined : value
  if (typeof value !== 'string') return undefined
  const text = value.trim()
  if (text === '') return undefined
  // A plain number too large for a double counts as infinitely long (so `timeout` is lowered, `ttl` rejected).
  if (NUMBER_RE.test(text)) return Number(text)
  const parsed = ms(text as ms.StringValue) as number | undefined
  return typeof parsed === 'number' && Number.isFinite(parsed) ? parsed : undefined
}

const PX_PER_UNIT: Record<string, number> = { px: 1, in: 96, cm: 96 / 2.54, mm: 96 / 25.4 }

/** CSS pixels from a CSS length (`px`, `in`, `cm`, `mm`; a bare number is px), rounded to 1/10000 px. */
export function parseCssLength (value: Prim | undefined): number | undefined {
  let n: number | undefined
  if (typeof value === 'number') n = value
  else if (typeof value === 'string') {
    const match = /^(\d+(?:\.\d*)?|\.\d+)\s*(px|in|cm|mm)?$/i.exec(value.trim())
    if (match !== null) n = Number(match[1]) * (PX_PER_UNIT[(match[2] ?? 'px').toLowerCase()] ?? 1)
  }
  if (n === undefined || !Number.isFinite(n) || n < 0) return undefined
  return Math.round(n * 10_000) / 10_000
}

/** The items of a string-or-list position: sorted numeric children, or the single value. */
function listItems (node: Node | undefined, param: string, code: ErrorCode, errorKey: string = param): Prim[] {
  if (node === undefined) return []
  const out: Prim[] = []
  if (node.self?.kind === 'value') out.push(node.self.value)
  const keys = [...node.kids.keys()]
  if (keys.some((key) => !/^\d+$/.test(key))) {
    fail(code, errorKey, `The \`${param}\` must be a string or a list of strings.`)
  }
  keys.sort((a, b) => Number(a) - Number(b))
  for (const key of keys) {
    const kid = node.kids.get(key)
    if (kid === undefined) continue
    const value = scalar(kid, `${param}.${key}`, code, errorKey)
    if (value !== undefined) out.push(value)
  }
  return out
}

function stringList (node: Node | undefined, param: string, code: ErrorCode = 'EINVALQUERY', errorKey: string = param): string[] {
  const out: string[] = []
  for (const item of listItems(node, param, code, errorKey)) {
    if (typeof item !== 'string') fail(code, errorKey, `The \`${param}\` has an invalid value (\`${show(item)}\`). Every item must be a string.`)
    const trimmed = item.trim()
    if (trimmed !== '') out.push(trimmed)
  }
  return out
}

/** The on/off state of a boolean-or-object parameter (`screenshot`, `pdf`, `meta`, ...). */
function switchState (node: Node | undefined, param: string, code: ErrorCode = 'EINVALQUERY'): 'absent' | 'on' | 'off' {
  if (node === undefined) return 'absent'
  const self = node.self
  if (self?.kind === 'value') {
    if (toBool(self.value, param, true)) return 'on'
    return 'off'
  }
  if (self?.kind === 'struct' && self.array) {
    fail(code, param, `The \`${param}\` must be a boolean or an object, not a list.`)
  }
  return 'on'
}

/** An object-only position (`viewport`, `overlay`): a plain value there is an error. */
function objectNode (node: Node | undefined, param: string): Node | undefined {
  if (node === undefined) return undefined
  if (node.self?.kind === 'value' || (node.self?.kind === 'struct' && node.self.array)) {
    invalid('EINVALQUERY', param, node.self.kind === 'value' ? node.self.value : '[…]', 'It must be an object.')
  }
  return node
}

/** Overlays `over` on `base`, leaf by leaf (for the legacy aliases: the nested key wins). */
function mergeNodes (base: Node | undefined, over: Node | undefined): Node | undefined {
  if (base === undefined) return over
  if (over === undefined) return base
  const merged = newNode()
  merged.self = over.self ?? base.self
  for (const [key, kid] of base.kids) merged.kids.set(key, kid)
  for (const [key, kid] of over.kids) {
    const both = mergeNodes(merged.kids.get(key), kid)
    if (both !== undefined) merged.kids.set(key, both)
  }
  merged.maxIndex = Math.max(base.maxIndex, over.maxIndex)
  return merged
}

function withAliases (root: Node, parentName: string, aliases: readonly string[]): Node {
  const parent = root.kids.get(parentName)
  const effective = newNode()
  for (const alias of aliases) {
    const node = root.kids.get(alias)
    if (node !== undefined) effective.kids.set(alias, node)
  }
  if (parent !== undefined) {
    for (const [key, kid] of parent.kids) {
      const merged = mergeNodes(effective.kids.get(key), kid)
      if (merged !== undefined) effective.kids.set(key, merged)
    }
  }
  return effective
}

/** Rejects reserved and empty user-chosen names; `key` names the error's data entry (default: the path). */
function checkName (name: string, param: string, code: ErrorCode, key: string = param): void {
  if (FORBIDDEN_NAMES.has(name)) fail(code, key, `The name \`${name}\` is reserved and cannot be used in \`${param}\`.`)
  if (name === '') fail(code, key, `The \`${param}\` has an empty name.`)
}

// ---------------------------------------------------------------------------------------------
// Parameters.

function parseUrl (node: Node | undefined): string {
  const value = scalar(node, 'url', 'EINVALURL')
  const text = typeof value === 'string' ? value.trim() : value
  const hint = 'It needs a protocol (http or https) and a hostname, and must be reachable.'
  if (text === undefined || text === '') fail('EINVALURL', 'url', 'The `url` parameter is required.')
  if (typeof text !== 'string') fail('EINVALURL', 'url', `The URL \`${show(text)}\` is not valid. ${hint}`)
  let url: URL
  try {
    url = new URL(text)
  } catch {
    fail('EINVALURL', 'url', `The URL \`${show(text)}\` is not valid. ${hint}`)
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') {
    fail('EINVALURL', 'url', `The URL \`${show(text)}\` is not valid. ${hint}`)
  }
  return url.href
}

function parseMeta (node: Node | undefined): ExtractOptions['meta'] {
  const state = switchState(node, 'meta')
  if (state === 'off') return false
  if (node === undefined || !hasKids(node)) return { fields: [...META_FIELDS] }
  const chosen = new Map<MetaField, boolean>()
  for (const field of META_FIELDS) {
    const kid = node.kids.get(field)
    if (kid === undefined) continue
    const param = `meta.${field}`
    if (hasKids(kid) || kid.self?.kind === 'struct') {
      // A sub-object (`meta.logo.square=true`) counts as true, unless the field itself says false.
      const own = kid.self?.kind === 'value' ? toBool(kid.self.value, param, true) : true
      chosen.set(field, own)
    } else {
      chosen.set(field, bool(kid, param, true))
    }
  }
  const anyTrue = [...chosen.values()].some(Boolean)
  const fields = META_FIELDS.filter((field) => anyTrue ? chosen.get(field) === true : chosen.get(field) !== false)
  return fields.length === 0 ? false : { fields }
}

// --- data rules (§3.3)

const RULE_HINT = 'A rule must be an object (or array of objects) with extraction options.'
const ATTR_NAME_RE = /^[^\s"'>/=\u0000-\u001f\u007f]+$/

function dataFail (fieldKey: string, detail: string): never {
  fail('EINVALDATA', fieldKey, detail)
}

function parseRuleOrList (node: Node, param: string, fieldKey: string, depth: number): Rule[] {
  if (depth > MAX_JSON_DEPTH) dataFail(fieldKey, `The \`${param}\` rules are nested too deeply.`)
  if (node.self?.kind === 'value') {
    dataFail(fieldKey, `The \`${param}\` has an invalid value (\`${show(node.self.value)}\`). ${RULE_HINT}`)
  }
  const keys = [...node.kids.keys()]
  const numeric = keys.filter((key) => /^\d+$/.test(key))
  if (numeric.length > 0 && numeric.length < keys.length) {
    dataFail(fieldKey, `The \`${param}\` mixes a list of rules with rule options. ${RULE_HINT}`)
  }
  const isList = numeric.length > 0 || (node.self?.kind === 'struct' && node.self.array)
  if (!isList) return [parseRule(node, param, fieldKey, depth)]
  if (numeric.length === 0) dataFail(fieldKey, `The \`${param}\` is an empty list. ${RULE_HINT}`)
  numeric.sort((a, b) => Number(a) - Number(b))
  return numeric.map((key) => {
    const kid = node.kids.get(key) ?? newNode()
    if (kid.self?.kind === 'value' || (kid.self?.kind === 'struct' && kid.self.array)) {
      const shown = kid.self.kind === 'value' ? kid.self.value : '[…]'
      dataFail(fieldKey, `The \`${param}.${key}\` has an invalid value (\`${show(shown)}\`). ${RULE_HINT}`)
    }
    return parseRule(kid, `${param}.${key}`, fieldKey, depth)
  })
}

function parseRule (node: Node, param: string, fieldKey: string, depth: number): Rule {
  const rule: Rule = { attr: ['html'], type: 'auto' }
  const selector = stringList(node.kids.get('selector'), `${param}.selector`, 'EINVALDATA', fieldKey)
  const selectorAll = stringList(node.kids.get('selectorAll'), `${param}.selectorAll`, 'EINVALDATA', fieldKey)
  if (selectorAll.length > 0) rule.selectorAll = selectorAll
  else if (selector.length > 0) rule.selector = selector

  const attrNode = node.kids.get('attr')
  if (attrNode !== undefined) rule.attr = parseAttr(attrNode, `${param}.attr`, fieldKey, depth)
  if (Array.isArray(rule.attr) && rule.attr.includes('json') && (rule.selector !== undefined || rule.selectorAll !== undefined)) {
    dataFail(fieldKey, `The \`${param}.attr\` \`json\` reads the whole body and takes no selector.`)
  }

  const type = scalar(node.kids.get('type'), `${param}.type`, 'EINVALDATA', fieldKey)
  if (type !== undefined) {
    const lower = typeof type === 'string' ? type.trim().toLowerCase() : undefined
    const found = RULE_TYPES.find((candidate) => candidate === lower)
    if (found === undefined) {
      dataFail(fieldKey, `The \`${param}.type\` has an invalid value (\`${show(type)}\`). Supported types: ${RULE_TYPES.join(', ')}.`)
    }
    rule.type = found satisfies RuleType
  }

  const evaluate = scalar(node.kids.get('evaluate'), `${param}.evaluate`, 'EINVALDATA', fieldKey)
  if (evaluate !== undefined) {
    if (typeof evaluate !== 'string' || evaluate.trim() === '') {
      fail('EINVALEVAL', `${param}.evaluate`, `The \`${param}.evaluate\` has an invalid value (\`${show(evaluate)}\`). It must be a JavaScript expression or function.`)
    }
    const problem = syntaxProblem(evaluate)
    if (problem !== undefined) {
      fail('EINVALEVAL', `${param}.evaluate`, `The \`${param}.evaluate\` does not parse as JavaScript: ${problem}.`)
    }
    rule.evaluate = evaluate
  }
  return rule
}

function parseAttr (node: Node, param: string, fieldKey: string, depth: number): Rule['attr'] {
  const keys = sortedKids(node).map(([key]) => key)
  const named = keys.filter((key) => !/^\d+$/.test(key))
  if (named.length > 0) {
    if (named.length < keys.length || node.self?.kind === 'value' || (node.self?.kind === 'struct' && node.self.array)) {
      dataFail(fieldKey, `The \`${param}\` mixes attribute names with nested rules.`)
    }
    const nested: Record<string, Rule[]> = {}
    for (const name of named) {
      checkName(name, `${param}.${name}`, 'EINVALDATA', fieldKey)
      const kid = node.kids.get(name)
      if (kid !== undefined) nested[name] = parseRuleOrList(kid, `${param}.${name}`, fieldKey, depth + 1)
    }
    return nested
  }
  const out: string[] = []
  for (const item of listItems(node, param, 'EINVALDATA', fieldKey)) {
    if (typeof item !== 'string') dataFail(fieldKey, `The \`${param}\` has an invalid value (\`${show(item)}\`). It must be a string, a list of strings or an object of rules.`)
    const name = item.trim()
    const keyword = ATTR_KEYWORDS.find((candidate) => candidate.toLowerCase() === name.toLowerCase())
    if (keyword !== undefined) out.push(keyword)
    else if (ATTR_NAME_RE.test(name)) out.push(name)
    else dataFail(fieldKey, `The \`${param}\` has an invalid value (\`${show(item)}\`). It must be a keyword (${ATTR_KEYWORDS.join(', ')}) or an attribute name.`)
  }
  return out.length === 0 ? ['html'] : out
}

function parseData (node: Node | undefined): Record<string, Rule[]> | undefined {
  if (node === undefined) return undefined
  if (node.self?.kind === 'value' || (node.self?.kind === 'struct' && node.self.array)) {
    const shown = node.self.kind === 'value' ? node.self.value : '[…]'
    dataFail('data', `The \`data\` has an invalid value (\`${show(shown)}\`). It must be an object of rules keyed by field name.`)
  }
  const out: Record<string, Rule[]> = {}
  for (const [name, kid] of sortedKids(node)) {
    const param = `data.${name}`
    checkName(name, param, 'EINVALDATA')
    out[name] = parseRuleOrList(kid, param, param, 0)
  }
  return Object.keys(out).length === 0 ? undefined : out
}

// --- JavaScript sources

/** Whether `source` parses as one JS expression; compiled only, never run. */
function syntaxProblem (source: string): string | undefined {
  try {
    new Script(`(${source}\n)`, { filename: 'pagecast-check.js' })
    return undefined
  } catch (err) {
    return err instanceof Error ? err.message : 'syntax error'
  }
}

const FUNCTION_START_RE = /^(?:async\s+)?(?:function\b|\(|[A-Za-z_$][\w$]*\s*=>)/

const require = createRequire(import.meta.url)

function fail400 (detail: string): never {
  fail('EINVALFUNCTION', 'function', detail)
}

function decodeFunction (raw: string): string {
  const utf8 = new TextDecoder('utf-8', { fatal: true })
  const prefix = /^(lz|br|gz)#/.exec(raw)?.[1]
  if (prefix === undefined) return raw
  const payload = raw.slice(prefix.length + 1).trim()
  if (prefix === 'lz') {
    let lz: { decompressFromEncodedURIComponent?: (input: string) => string | null } | undefined
    try {
      lz = require('lz-string') as typeof lz
    } catch {
      fail400('The `lz#` prefix is not supported by this server (the lz-string decoder is not installed); use `br#` or `gz#`.')
    }
    const decoded = lz?.decompressFromEncodedURIComponent?.(payload)
    if (typeof decoded !== 'string' || decoded === '') fail400('The `function` has an invalid `lz#` payload.')
    if (Buffer.byteLength(decoded, 'utf8') > MAX_FUNCTION_BYTES) fail400(`The decoded \`function\` is larger than ${MAX_FUNCTION_BYTES / 1024} KiB.`)
    return decoded
  }
  if (!/^[A-Za-z0-9_-]*={0,2}$/.test(payload) || payload === '') fail400(`The \`function\` has an invalid \`${prefix}#\` payload: it must be base64url.`)
  const bytes = Buffer.from(payload, 'base64url')
  let inflated: Buffer
  try {
    inflated = prefix === 'br'
      ? brotliDecompressSync(bytes, { maxOutputLength: MAX_FUNCTION_BYTES + 1 })
      : gunzipSync(bytes, { maxOutputLength: MAX_FUNCTION_BYTES + 1 })
  } catch (err) {
    if (err instanceof RangeError || (err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
      fail400(`The decoded \`function\` is larger than ${MAX_FUNCTION_BYTES / 1024} KiB.`)
    }
    fail400(`The \`function\` has an invalid \`${prefix}#\` payload: it does not decompress.`)
  }
  if (inflated.length > MAX_FUNCTION_BYTES) fail400(`The decoded \`function\` is larger than ${MAX_FUNCTION_BYTES / 1024} KiB.`)
  try {
    return utf8.decode(inflated)
  } catch {
    fail400(`The \`function\` has an invalid \`${prefix}#\` payload: it is not UTF-8 text.`)
  }
}

function parseFunction (node: Node | undefined, plan: ParseContext['plan']): ExtractOptions['function'] {
  const value = scalar(node, 'function', 'EINVALFUNCTION')
  if (value === undefined) return undefined
  if (typeof value !== 'string' || value.trim() === '') {
    invalid('EINVALFUNCTION', 'function', value ?? '', 'It must be the source of a JavaScript function.')
  }
  const source = decodeFunction(value.trim())
  if (plan === 'free' && Buffer.byteLength(source, 'utf8') > MAX_FREE_FUNCTION_BYTES) {
    fail('EINVALFUNCTION', 'function', `On the free plan the \`function\` source is limited to ${MAX_FREE_FUNCTION_BYTES} bytes.`)
  }
  const trimmed = source.trim()
  const problem = syntaxProblem(trimmed)
  if (problem !== undefined) fail('EINVALFUNCTION', 'function', `The \`function\` does not parse as JavaScript: ${problem}.`)
  if (!FUNCTION_START_RE.test(trimmed)) {
    fail('EINVALFUNCTION', 'function', 'The `function` must be the source of a function, such as `({ page }) => page.title()`.')
  }
  return { source: trimmed }
}

function toArg (node: Node): FunctionArg | undefined {
  if (hasKids(node)) {
    const keys = sortedKids(node).map(([key]) => key).filter((key) => !FORBIDDEN_NAMES.has(key))
    if (keys.length > 0 && keys.every((key) => /^\d+$/.test(key))) {
      keys.sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0))
      const list: FunctionArg[] = []
      for (const key of keys) {
        const kid = node.kids.get(key)
        const arg = kid === undefined ? undefined : toArg(kid)
        if (arg !== undefined) list.push(arg)
      }
      return list
    }
    const object: Record<string, FunctionArg> = {}
    for (const key of keys) {
      const kid = node.kids.get(key)
      const arg = kid === undefined ? undefined : toArg(kid)
      if (arg !== undefined) object[key] = arg
    }
    return object
  }
  const value = node.self?.kind === 'value' ? node.self.value : undefined
  return value === undefined || value === null ? undefined : String(value)
}

function parseArgs (root: Node): Record<string, FunctionArg> {
  const args: Record<string, FunctionArg> = {}
  for (const [name, node] of sortedKids(root)) {
    if (KNOWN_ROOT.has(name) || FORBIDDEN_NAMES.has(name)) continue
    const arg = toArg(node)
    if (arg !== undefined) args[name] = arg
  }
  return args
}

// --- screenshot (§3.2)

const NAMED_COLORS = new Set((
  'aliceblue antiquewhite aqua aquamarine azure beige bisque black blanchedalmond blue blueviolet brown burlywood ' +
  'cadetblue chartreuse chocolate coral cornflowerblue cornsilk crimson cyan darkblue darkcyan darkgoldenrod darkgray ' +
  'darkgreen darkgrey darkkhaki darkmagenta darkolivegreen darkorange darkorchid darkred darksalmon darkseagreen ' +
  'darkslateblue darkslategray darkslategrey darkturquoise darkviolet deeppink deepskyblue dimgray dimgrey dodgerblue ' +
  'firebrick floralwhite forestgreen fuchsia gainsboro ghostwhite gold goldenrod gray green greenyellow grey honeydew ' +
  'hotpink indianred indigo ivory khaki lavender lavenderblush lawngreen lemonchiffon lightblue lightcoral lightcyan ' +
  'lightgoldenrodyellow lightgray lightgreen lightgrey lightpink lightsalmon lightseagreen lightskyblue lightslategray ' +
  'lightslategrey lightsteelblue lightyellow lime limegreen linen magenta maroon mediumaquamarine mediumblue ' +
  'mediumorchid mediumpurple mediumseagreen mediumslateblue mediumspringgreen mediumturquoise mediumvioletred ' +
  'midnightblue mintcream mistyrose moccasin navajowhite navy oldlace olive olivedrab orange orangered orchid ' +
  'palegoldenrod palegreen paleturquoise palevioletred papayawhip peachpuff peru pink plum powderblue purple ' +
  'rebeccapurple red rosybrown royalblue saddlebrown salmon sandybrown seagreen seashell sienna silver skyblue ' +
  'slateblue slategray slategrey snow springgreen steelblue tan teal thistle tomato turquoise violet wheat white ' +
  'whitesmoke yellow yellowgreen transparent'
).split(' '))

function isRgbComponent (text: string): boolean {
  const match = /^(\d+(?:\.\d+)?|\.\d+)(%?)$/.exec(text)
  if (match === null) return false
  const n = Number(match[1])
  return match[2] === '%' ? n <= 100 : n <= 255
}

function isAlpha (text: string): boolean {
  const match = /^(\d+(?:\.\d+)?|\.\d+)(%?)$/.exec(text)
  if (match === null) return false
  const n = Number(match[1])
  return match[2] === '%' ? n <= 100 : n <= 1
}

function isRgb (text: string): boolean {
  const match = /^rgba?\(([^()]*)\)$/i.exec(text)
  if (match === null) return false
  const inner = (match[1] ?? '').trim()
  let channels: string[]
  let alpha: string | undefined
  if (inner.includes(',')) {
    const parts = inner.split(',').map((part) => part.trim())
    if (parts.length !== 3 && parts.length !== 4) return false
    channels = parts.slice(0, 3)
    alpha = parts[3]
  } else {
    const [colour, rest, extra] = inner.split('/').map((part) => part.trim())
    if (extra !== undefined || colour === undefined) return false
    channels = colour.split(/\s+/)
    if (channels.length !== 3) return false
    alpha = rest
  }
  return channels.every(isRgbComponent) && (alpha === undefined || isAlpha(alpha))
}

function isGradient (text: string): boolean {
  const match = /^(linear|radial)-gradient\((.*)\)$/is.exec(text)
  if (match === null) return false
  const inner = match[2] ?? ''
  if (inner.trim() === '' || !/^[a-z0-9#%.,()\s+\-/]*$/i.test(inner)) return false
  let depth = 0
  for (const char of inner) {
    if (char === '(') depth++
    if (char === ')') depth--
    if (depth < 0) return false
  }
  return depth === 0
}

function httpUrl (text: string): string | undefined {
  try {
    const url = new URL(text)
    if ((url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '') return url.href
  } catch {
    return undefined
  }
  return undefined
}

function parseOverlayBackground (value: Prim): string {
  const param = 'screenshot.overlay.background'
  const hint = 'It must be a hex, rgb()/rgba() or named colour, a linear-/radial-gradient(), or an http(s) image URL.'
  if (typeof value !== 'string') invalid('EINVALOVERLAYBG', param, value, hint)
  const text = value.trim()
  const lower = text.toLowerCase()
  if (/^#(?:[0-9a-f]{3}|[0-9a-f]{4}|[0-9a-f]{6}|[0-9a-f]{8})$/i.test(text)) return lower
  if (NAMED_COLORS.has(lower)) return lower
  if (isRgb(text)) return lower.replace(/\s+/g, ' ')
  if (isGradient(text)) return text
  if (/^https?:\/\//i.test(text)) {
    const href = httpUrl(text)
    if (href !== undefined) return href
  }
  invalid('EINVALOVERLAYBG', param, value, hint)
}

function parseScreenshot (root: Node): ScreenshotOptions | false {
  if (switchState(root.kids.get('screenshot'), 'screenshot') !== 'on') return false
  const node = withAliases(root, 'screenshot', SCREENSHOT_ALIASES)
  const kid = (name: string): Node | undefined => node.kids.get(name)

  const animated = scalar(kid('animated'), 'screenshot.animated')
  if (animated !== undefined && toBool(animated, 'screenshot.animated', true)) {
    fail('EINVALQUERY', 'screenshot.animated', 'The `screenshot.animated` option is not supported.')
  }
  const type = enumValue<ScreenshotType>(kid('type'), 'screenshot.type', ['png', 'jpeg', 'webp'], 'png', { jpg: 'jpeg' })
  const quality = numberIn(kid('quality'), 'screenshot.quality', 0, 100, DEFAULT_SCREENSHOT_QUALITY, true)
  const element = optionalString(kid('element'), 'screenshot.element')
  const fullPage = bool(kid('fullPage'), 'screenshot.fullPage', false)
  const omitBackground = bool(kid('omitBackground'), 'screenshot.omitBackground', false)

  const overlayNode = objectNode(kid('overlay'), 'screenshot.overlay')
  const overlay: ScreenshotOptions['overlay'] = {}
  if (overlayNode !== undefined) {
    const browser = scalar(overlayNode.kids.get('browser'), 'screenshot.overlay.browser')
    if (browser !== undefined) {
      overlay.browser = enumValue<'light' | 'dark'>(overlayNode.kids.get('browser'), 'screenshot.overlay.browser', ['light', 'dark'], 'light')
    }
    const background = scalar(overlayNode.kids.get('background'), 'screenshot.overlay.background', 'EINVALOVERLAYBG')
    if (background !== undefined) overlay.background = parseOverlayBackground(background)
  }

  let codeScheme = DEFAULT_CODE_SCHEME
  const scheme = str(kid('codeScheme'), 'screenshot.codeScheme')
  if (scheme !== undefined) {
    const text = scheme.trim()
    const resolved = /^https?:\/\//i.test(text) ? httpUrl(text) : resolveCodeScheme(text)
    if (resolved === undefined) {
      invalid('EINVALQUERY', 'screenshot.codeScheme', scheme, 'It must be a prism-themes id (such as `atom-dark`) or an absolute http(s) CSS URL.')
    }
    codeScheme = resolved
  }

  const out: ScreenshotOptions = {
    type,
    fullPage: element === undefined ? fullPage : false,
    omitBackground: type === 'jpeg' ? false : omitBackground,
    overlay,
    codeScheme
  }
  if (type !== 'png') out.quality = quality
  if (element !== undefined) out.element = element
  return out
}

// --- pdf (§3.2)

const PAGE_RANGE_RE = /^(?:\d+|\d+-\d*|-\d+)$/

function parsePageRanges (value: string | undefined): string | undefined {
  if (value === undefined) return undefined
  const text = value.replace(/\s+/g, '')
  if (text === '') return undefined
  const hint = 'Use page numbers and ranges such as `1-5, 8, 11-13` or `5-`.'
  for (const part of text.split(',')) {
    if (!PAGE_RANGE_RE.test(part)) invalid('EINVALQUERY', 'pdf.pageRanges', value, hint)
    const [from, to] = part.split('-')
    if (from !== undefined && from !== '' && Number(from) < 1) invalid('EINVALQUERY', 'pdf.pageRanges', value, hint)
    if (to !== undefined && to !== '' && (Number(to) < 1 || (from !== undefined && from !== '' && Number(from) > Number(to)))) {
      invalid('EINVALQUERY', 'pdf.pageRanges', value, hint)
    }
  }
  return text
}

function length (node: Node | undefined, param: string, positive: boolean): number | undefined {
  return lengthOf(scalar(node, param), param, positive)
}

function lengthOf (value: Prim | undefined, param: string, positive: boolean): number | undefined {
  if (value === undefined) return undefined
  const px = parseCssLength(value)
  if (px === undefined || (positive && px <= 0)) {
    invalid('EINVALQUERY', param, value, 'It must be a CSS length: a number with `px`, `in`, `cm` or `mm` (a bare number is px).')
  }
  return px
}

function parseMargin (node: Node | undefined): PdfMargin {
  const all = parseCssLength(DEFAULT_PDF_MARGIN) ?? 0
  if (node === undefined) return { top: all, right: all, bottom: all, left: all }
  if (node.self?.kind === 'struct' && node.self.array) invalid('EINVALQUERY', 'pdf.margin', '[…]', 'It must be a CSS length or an object of sides.')
  const base = node.self?.kind === 'value' ? lengthOf(node.self.value, 'pdf.margin', false) ?? 0 : 0
  const side = (name: keyof PdfMargin): number => length(node.kids.get(name), `pdf.margin.${name}`, false) ?? base
  return { top: side('top'), right: side('right'), bottom: side('bottom'), left: side('left') }
}

function parsePdf (root: Node): PdfOptions | false {
  if (switchState(root.kids.get('pdf'), 'pdf') !== 'on') return false
  const node = withAliases(root, 'pdf', PDF_ALIASES)
  const kid = (name: string): Node | undefined => node.kids.get(name)

  const format = enumValue<PaperFormat>(kid('format'), 'pdf.format', PAPER_FORMATS, 'A4')
  const width = length(kid('width'), 'pdf.width', true)
  const height = length(kid('height'), 'pdf.height', true)
  const out: PdfOptions = {
    margin: parseMargin(kid('margin')),
    scale: numberIn(kid('scale'), 'pdf.scale', 0.1, 2, DEFAULT_PDF_SCALE, false),
    landscape: bool(kid('landscape'), 'pdf.landscape', false),
    printBackground: bool(kid('printBackground'), 'pdf.printBackground', true)
  }
  if (width === undefined && height === undefined) {
    out.format = format
  } else {
    const paper = PAPER_SIZES_IN[format]
    out.width = width ?? Math.round(paper.width * 96 * 10_000) / 10_000
    out.height = height ?? Math.round(paper.height * 96 * 10_000) / 10_000
  }
  const pageRanges = parsePageRanges(str(kid('pageRanges'), 'pdf.pageRanges'))
  if (pageRanges !== undefined) out.pageRanges = pageRanges
  return out
}

// --- iframe, insights, ping

function parseIframe (node: Node | undefined): ExtractOptions['iframe'] {
  if (switchState(node, 'iframe') !== 'on' || node === undefined) return false
  const params: Record<string, string> = {}
  for (const [name, kid] of sortedKids(node)) {
    const param = `iframe.${name}`
    checkName(name, param, 'EINVALQUERY')
    const value = scalar(kid, param)
    if (value === undefined || value === null) continue
    params[name] = String(value)
  }
  return params
}

function settingsValue (node: Node, param: string, depth: number): unknown {
  if (depth > MAX_JSON_DEPTH) fail('EINVALQUERY', param, `The \`${param}\` is nested too deeply.`)
  if (!hasKids(node)) {
    if (node.self?.kind === 'struct') return node.self.array ? [] : {}
    const value = node.self?.value
    if (typeof value !== 'string') return value ?? null
    const lower = value.trim().toLowerCase()
    if (lower === 'true' || lower === '') return true
    if (lower === 'false') return false
    const n = toNumber(value)
    return n === undefined ? value : n
  }
  const keys = sortedKids(node).map(([key]) => key)
  if (keys.every((key) => /^\d+$/.test(key)) && !(node.self?.kind === 'struct' && !node.self.array)) {
    keys.sort((a, b) => Number(a) - Number(b))
    return keys.map((key) => settingsValue(node.kids.get(key) ?? newNode(), `${param}.${key}`, depth + 1))
  }
  const out: Record<string, unknown> = {}
  for (const key of keys) {
    checkName(key, `${param}.${key}`, 'EINVALQUERY')
    out[key] = settingsValue(node.kids.get(key) ?? newNode(), `${param}.${key}`, depth + 1)
  }
  return out
}

function parseLighthouse (node: Node | undefined): LighthouseOptions | false {
  if (switchState(node, 'insights.lighthouse') === 'off') return false
  const out: LighthouseOptions = {
    output: enumValue(node?.kids.get('output'), 'insights.lighthouse.output', LIGHTHOUSE_OUTPUTS, 'json'),
    preset: enumValue(node?.kids.get('preset'), 'insights.lighthouse.preset', LIGHTHOUSE_PRESETS, 'default'),
    settings: {}
  }
  for (const [name, kid] of sortedKids(node)) {
    if (name === 'output' || name === 'preset') continue
    const param = `insights.lighthouse.${name}`
    checkName(name, param, 'EINVALQUERY')
    out.settings[name] = settingsValue(kid, param, 0)
  }
  return out
}

function parseInsights (node: Node | undefined): InsightsOptions | false {
  if (switchState(node, 'insights') !== 'on' || node === undefined) return false
  return {
    technologies: bool(node.kids.get('technologies'), 'insights.technologies', true),
    lighthouse: parseLighthouse(node.kids.get('lighthouse'))
  }
}

function parsePing (node: Node | undefined): PingOptions {
  const state = switchState(node, 'ping')
  const out = {} as PingOptions
  for (const kind of PING_KINDS) {
    out[kind] = state === 'off' ? false : bool(node?.kids.get(kind), `ping.${kind}`, true)
  }
  return out
}

// --- browser and emulation

function parseDevice (node: Node | undefined): { name: string, viewport: Viewport } {
  const value = scalar(node, 'device')
  const name = value === undefined ? DEFAULT_DEVICE : value
  const preset = typeof name === 'string' ? resolveDevice(name) : undefined
  if (preset === undefined) {
    const suggestions = typeof name === 'string' ? suggestDevices(name) : []
    const hint = suggestions.length > 0 ? ` Did you mean ${suggestions.map((s) => `\`${s}\``).join(', ')}?` : ''
    fail('EINVALQUERY', 'device', `The device \`${show(name)}\` is unknown.${hint}`)
  }
  return { name: preset.name, viewport: preset.viewport }
}

function parseViewport (node: Node | undefined, base: Viewport): Viewport {
  const viewportNode = objectNode(node, 'viewport')
  if (viewportNode === undefined) return { ...base }
  const kid = (name: string): Node | undefined => viewportNode.kids.get(name)
  return {
    width: numberIn(kid('width'), 'viewport.width', 1, 8192, base.width, true),
    height: numberIn(kid('height'), 'viewport.height', 1, 8192, base.height, true),
    deviceScaleFactor: numberIn(kid('deviceScaleFactor'), 'viewport.deviceScaleFactor', 0.1, 4, base.deviceScaleFactor, false),
    isMobile: bool(kid('isMobile'), 'viewport.isMobile', base.isMobile),
    hasTouch: bool(kid('hasTouch'), 'viewport.hasTouch', base.hasTouch),
    isLandscape: bool(kid('isLandscape'), 'viewport.isLandscape', base.isLandscape)
  }
}

const DROPPED_HEADERS = new Set([
  'connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection', 'te', 'trailer',
  'trailers', 'transfer-encoding', 'upgrade', 'host', 'content-length'
])
const HEADER_NAME_RE = /^[!#$%&'*+.^_`|~0-9a-z-]+$/

function headerValue (value: string, param: string): string {
  if (/[\r\n\0]/.test(value) || [...value].some((char) => (char.codePointAt(0) ?? 0) > 0xff)) {
    invalid('EINVALQUERY', param, value, 'A header value cannot hold line breaks, NUL or characters beyond Latin-1.')
  }
  return value.trim()
}

function parseHeaders (node: Node | undefined, ctx: ParseContext): Record<string, string> {
  const merged = new Map<string, string>()
  const headersNode = objectNode(node, 'headers')
  for (const [name, kid] of sortedKids(headersNode)) {
    const param = `headers.${name}`
    checkName(name, param, 'EINVALQUERY')
    if (!HEADER_NAME_RE.test(name)) fail('EINVALQUERY', param, `The header name \`${show(name)}\` is not valid.`)
    const value = scalar(kid, param)
    if (value === undefined || value === null) continue
    merged.set(name, headerValue(String(value), param))
  }
  for (const [rawName, value] of apiHeaders(ctx.headers)) {
    const name = kebabHeaderName(rawName)
    const param = `${API_HEADER_PREFIX}${rawName}`
    if (name === '') continue
    checkName(name, param, 'EINVALQUERY')
    if (!HEADER_NAME_RE.test(name)) fail('EINVALQUERY', param, `The header name \`${show(name)}\` is not valid.`)
    merged.set(name, headerValue(value, param))
  }
  const out: Record<string, string> = {}
  for (const name of [...merged.keys()].sort()) {
    if (DROPPED_HEADERS.has(name)) continue
    out[name] = merged.get(name) ?? ''
  }
  return out
}

// --- loading and interaction

const WAIT_ALIASES: Record<string, WaitUntil> = { networkidle: 'networkidle0' }

function parseWaitUntil (node: Node | undefined): WaitUntil[] {
  const items = listItems(node, 'waitUntil', 'EINVALQUERY')
  const chosen = new Set<WaitUntil>()
  for (const item of items) {
    const lower = typeof item === 'string' ? item.trim().toLowerCase() : undefined
    const value = lower === undefined ? undefined : (WAIT_ALIASES[lower] ?? WAIT_UNTIL.find((candidate) => candidate === lower))
    if (value === undefined) invalid('EINVALQUERY', 'waitUntil', item, `It must be one of: ${WAIT_UNTIL.join(', ')}.`)
    chosen.add(value)
  }
  if (chosen.size === 0) return ['auto']
  if (chosen.has('auto') && chosen.size > 1) {
    fail('EINVALQUERY', 'waitUntil', 'The `waitUntil` value `auto` cannot be combined with other events.')
  }
  return WAIT_UNTIL.filter((event) => chosen.has(event))
}

function duration (node: Node | undefined, param: string, code: ErrorCode = 'EINVALQUERY'): number | undefined {
  const value = scalar(node, param, code)
  if (value === undefined) return undefined
  const parsed = parseDuration(value)
  if (parsed === undefined) {
    invalid(code, param, value, 'It must be a number of milliseconds or a duration such as `500ms`, `10s`, `1.5h` or `2 days`.')
  }
  return parsed
}

function parseTimeout (node: Node | undefined, maxTimeout: number): number {
  const value = duration(node, 'timeout')
  if (value === undefined) return maxTimeout
  if (!(value > 0)) invalid('EINVALQUERY', 'timeout', scalar(node, 'timeout'), 'It must be greater than 0.')
  return Math.min(maxTimeout, Math.max(1, Math.round(value)))
}

function parseProxy (node: Node | undefined): string | undefined {
  if (node === undefined) return undefined
  const urlNode = node.kids.get('url')
  let value: Prim | undefined
  if (urlNode !== undefined) value = scalar(urlNode, 'proxy.url', 'EINVALPROXY')
  else if (node.self?.kind === 'value') value = node.self.value
  const hint = 'It must be an http, https or socks5 proxy URL, such as `http://user:pass@proxy.example:8080`.'
  if (typeof value !== 'string' || value.trim() === '') invalid('EINVALPROXY', 'proxy', value ?? '', hint)
  let url: URL
  try {
    url = new URL(value.trim())
  } catch {
    invalid('EINVALPROXY', 'proxy', '(unparseable URL)', hint)
  }
  if (!['http:', 'https:', 'socks5:'].includes(url.protocol) || url.hostname === '') {
    invalid('EINVALPROXY', 'proxy', `${url.protocol}//${url.host}`, hint)
  }
  return url.href
}

function parsePrerender (node: Node | undefined): boolean | 'auto' {
  const value = scalar(node, 'prerender')
  if (value === undefined) return 'auto'
  if (typeof value === 'string' && value.trim().toLowerCase() === 'auto') return 'auto'
  if (typeof value === 'boolean') return value
  const lower = typeof value === 'string' ? value.trim().toLowerCase() : undefined
  if (lower === '' || lower === 'true') return true
  if (lower === 'false') return false
  invalid('EINVALQUERY', 'prerender', value, 'It must be `true`, `false` or `auto`.')
}

// --- cache and delivery

function parseTtl (node: Node | undefined): number {
  const value = scalar(node, 'ttl', 'EINVALTTL')
  if (value === undefined) return DEFAULT_TTL
  const hint = 'It must be a duration between 1 minute and 31 days (or `min`, `max`).'
  const lower = typeof value === 'string' ? value.trim().toLowerCase() : undefined
  if (lower === 'min') return MIN_TTL
  if (lower === 'max') return MAX_TTL
  const parsed = parseDuration(value)
  if (parsed === undefined) invalid('EINVALTTL', 'ttl', value, hint)
  const rounded = Math.round(parsed)
  if (rounded < MIN_TTL || rounded > MAX_TTL) invalid('EINVALTTL', 'ttl', value, hint)
  return rounded
}

function parseStaleTtl (node: Node | undefined, ttl: number): number | false {
  const value = scalar(node, 'staleTtl', 'EINVALSTTL')
  if (value === undefined) return false
  const hint = 'It must be a boolean or a duration lower than `ttl`.'
  let parsed: number | false
  const lower = typeof value === 'string' ? value.trim().toLowerCase() : value
  if (lower === true || lower === '' || lower === 'true') parsed = 0
  else if (lower === false || lower === 'false') parsed = false
  else {
    const ms = parseDuration(value)
    if (ms === undefined || ms < 0) invalid('EINVALSTTL', 'staleTtl', value, hint)
    parsed = Math.round(ms)
  }
  if (parsed !== false && parsed >= ttl) invalid('EINVALSTTL', 'staleTtl', value, `${hint} The \`ttl\` is ${ttl} ms.`)
  return parsed
}

function parseCacheKey (node: Node | undefined): string | undefined {
  const value = scalar(node, 'cacheKey')
  if (value === undefined || value === null) return undefined
  const text = String(value)
  if ([...text].length > 256) invalid('EINVALQUERY', 'cacheKey', value, 'It must be at most 256 characters.')
  return text === '' ? undefined : text
}

const FILENAME_RE = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}$/

function withExtension (name: string, extensions: readonly string[]): string {
  const lower = name.toLowerCase()
  if (extensions.some((ext) => lower.endsWith(`.${ext}`))) return name
  return `${name}.${extensions[0] ?? ''}`
}

function parseFilename (node: Node | undefined, screenshot: ScreenshotOptions | false, pdf: PdfOptions | false): ExtractOptions['filename'] {
  const value = scalar(node, 'filename')
  if (value === undefined) return undefined
  const hint = 'It must be 1 to 100 characters of letters, digits, `.`, `_` and `-`, not starting with a dot.'
  if (typeof value !== 'string' || !FILENAME_RE.test(value)) invalid('EINVALQUERY', 'filename', value ?? '', hint)
  const out: NonNullable<ExtractOptions['filename']> = {}
  if (screenshot !== false) {
    const extensions = screenshot.type === 'jpeg' ? ['jpg', 'jpeg'] : [screenshot.type]
    out.screenshot = withExtension(value, extensions)
  }
  if (pdf !== false) out.pdf = withExtension(value, ['pdf'])
  for (const name of [out.screenshot, out.pdf]) {
    if (name !== undefined && name.length > 100) invalid('EINVALQUERY', 'filename', value, `${hint} With its extension it would be longer.`)
  }
  return out.screenshot === undefined && out.pdf === undefined ? undefined : out
}

function parseFilter (node: Node | undefined): string[] | undefined {
  const value = str(node, 'filter')
  if (value === undefined) return undefined
  const paths = [...new Set(value.split(',').map((path) => path.trim()).filter((path) => path !== ''))].sort()
  return paths.length === 0 ? undefined : paths
}

// ---------------------------------------------------------------------------------------------

/**
 * Parses and validates a raw query string (without or with its leading `?`) into ExtractOptions,
 * following API.md §1.4 steps 4-6. Throws only AppError.
 */
export function parseQuery (rawQuery: string, ctx: ParseContext): ExtractOptions {
  // (4) parsing
  const root = readTree(rawQuery)
  // (5) plan gates
  checkPlanGates(root, ctx)
  // (6) values
  const kid = (name: string): Node | undefined => root.kids.get(name)
  const url = parseUrl(kid('url'))
  const meta = parseMeta(kid('meta'))
  const data = parseData(kid('data'))
  const filter = parseFilter(kid('filter'))
  const embedValue = str(kid('embed'), 'embed')
  const streamValue = str(kid('stream'), 'stream')
  const screenshot = parseScreenshot(root)
  const pdf = parsePdf(root)
  const video = bool(kid('video'), 'video', false)
  const audio = bool(kid('audio'), 'audio', false)
  const iframe = parseIframe(kid('iframe'))
  const insights = parseInsights(kid('insights'))
  const palette = bool(kid('palette'), 'palette', false)
  const ping = parsePing(kid('ping'))
  const fn = parseFunction(kid('function'), ctx.plan)
  const device = parseDevice(kid('device'))
  const viewport = parseViewport(kid('viewport'), device.viewport)
  const colorScheme = enumValue<ColorScheme>(kid('colorScheme'), 'colorScheme', COLOR_SCHEMES, 'no-preference')
  const mediaType = enumValue<'screen' | 'print'>(kid('mediaType'), 'mediaType', ['screen', 'print'], pdf === false ? 'screen' : 'print')
  const javascript = bool(kid('javascript'), 'javascript', true)
  const animations = bool(kid('animations'), 'animations', false)
  const adblock = bool(kid('adblock'), 'adblock', true)
  const headers = parseHeaders(kid('headers'), ctx)
  const prerender = parsePrerender(kid('prerender'))
  const waitUntil = parseWaitUntil(kid('waitUntil'))
  const waitForSelector = optionalString(kid('waitForSelector'), 'waitForSelector')
  const timeout = parseTimeout(kid('timeout'), ctx.maxTimeout)
  const waitForTimeoutValue = duration(kid('waitForTimeout'), 'waitForTimeout')
  if (waitForTimeoutValue !== undefined && waitForTimeoutValue < 0) {
    invalid('EINVALQUERY', 'waitForTimeout', scalar(kid('waitForTimeout'), 'waitForTimeout'), 'It must not be negative.')
  }
  const click = stringList(kid('click'), 'click')
  const scroll = optionalString(kid('scroll'), 'scroll')
  const modules = stringList(kid('modules'), 'modules')
  const scripts = stringList(kid('scripts'), 'scripts')
  const styles = stringList(kid('styles'), 'styles')
  const retry = numberIn(kid('retry'), 'retry', 0, 5, DEFAULT_RETRY, true)
  const proxy = parseProxy(kid('proxy'))
  const ttl = parseTtl(kid('ttl'))
  const staleTtl = parseStaleTtl(kid('staleTtl'), ttl)
  const force = bool(kid('force'), 'force', false)
  const cacheKey = parseCacheKey(kid('cacheKey'))
  const filename = parseFilename(kid('filename'), screenshot, pdf)

  const options: ExtractOptions = {
    url,
    meta,
    screenshot,
    pdf,
    video,
    audio,
    iframe,
    insights,
    palette,
    ping,
    device: device.name,
    viewport,
    colorScheme,
    mediaType,
    javascript,
    animations,
    adblock,
    headers,
    prerender,
    waitUntil,
    timeout,
    click,
    modules,
    scripts,
    styles,
    retry,
    ttl,
    staleTtl,
    force,
    args: fn === undefined ? {} : parseArgs(root)
  }
  if (data !== undefined) options.data = data
  const embed = embedValue ?? (streamValue === undefined ? undefined : streamValue.trim() === '' ? '' : `${streamValue.trim()}.url`)
  if (embed !== undefined) options.embed = embed.trim()
  else if (filter !== undefined) options.filter = filter
  if (fn !== undefined) options.function = fn
  if (waitForSelector !== undefined) options.waitForSelector = waitForSelector
  if (waitForTimeoutValue !== undefined) options.waitForTimeout = Math.min(Math.round(waitForTimeoutValue), timeout)
  if (scroll !== undefined) options.scroll = scroll
  if (proxy !== undefined) options.proxy = proxy
  if (cacheKey !== undefined) options.cacheKey = cacheKey
  if (filename !== undefined) options.filename = filename
  return options
}
