// The primitive readers of docs/api.md §2: one value of a node as a boolean, string, enum, number,
// duration, CSS length or list, with the error each one gives; the on/off state of a boolean-or-object
// parameter; and the merge of the legacy top-level aliases. The readers per family build on these.
import { Script } from 'node:vm'
import ms from 'ms'
import type { ErrorCode } from '../errors.ts'
import { FORBIDDEN_NAMES, newNode } from './grammar.ts'
import type { Node, Prim, ShapeSpec } from './grammar.ts'
import type { ExtractOptions } from './options.ts'
import { fail, invalid, show } from './messages.ts'

/** The known sub-keys of a shape, as a type: what `sub()` accepts, so a misspelt key does not compile. */
export type SubKey<S extends ShapeSpec> = S extends { readonly keys: infer K } ? keyof K & string : never

/** The node of a parameter at the root, by its option name (the parameter table's keys). */
export function rootKid (root: Node, name: keyof ExtractOptions): Node | undefined {
  return root.kids.get(name)
}

/** The child `name` of `node`, a sub-key declared by `shape`. */
export function sub<S extends ShapeSpec> (node: Node | undefined, _shape: S, name: SubKey<S>): Node | undefined {
  return node?.kids.get(name)
}

export function hasKids (node: Node): boolean {
  return node.kids.size > 0
}

/** Children in a fixed order (by name), so that the first error never depends on the query's order. */
export function sortedKids (node: Node | undefined): Array<[string, Node]> {
  if (node === undefined) return []
  return [...node.kids].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
}

/** The single value at a scalar position (undefined when not given). */
export function scalar (node: Node | undefined, param: string, code: ErrorCode = 'EINVALQUERY', key: string = param): Prim | undefined {
  if (node === undefined) return undefined
  if (hasKids(node) || node.self?.kind === 'struct') {
    fail(code, key, `The \`${param}\` takes a single value, not an object or a list.`)
  }
  return node.self?.value
}

export function toBool (value: Prim | undefined, param: string, fallback: boolean): boolean {
  if (value === undefined) return fallback
  if (typeof value === 'boolean') return value
  if (typeof value === 'string') {
    const lower = value.trim().toLowerCase()
    if (lower === '' || lower === 'true') return true
    if (lower === 'false') return false
  }
  invalid('EINVALQUERY', param, value, 'It must be `true` or `false`.')
}

export function bool (node: Node | undefined, param: string, fallback: boolean): boolean {
  return toBool(scalar(node, param), param, fallback)
}

export function str (node: Node | undefined, param: string, code: ErrorCode = 'EINVALQUERY'): string | undefined {
  const value = scalar(node, param, code)
  if (value === undefined) return undefined
  if (typeof value !== 'string') invalid(code, param, value, 'It must be a string.')
  return value
}

/** A string that means "not given" when empty. */
export function optionalString (node: Node | undefined, param: string): string | undefined {
  const value = str(node, param)?.trim()
  return value === '' ? undefined : value
}

export function enumValue<T extends string> (node: Node | undefined, param: string, values: readonly T[], fallback: T, aliases: Record<string, T> = {}): T {
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

export const NUMBER_RE = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:e[+-]?\d+)?$/i

export function toNumber (value: Prim | undefined): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined
  if (typeof value === 'string' && NUMBER_RE.test(value.trim())) {
    const n = Number(value.trim())
    return Number.isFinite(n) ? n : undefined
  }
  return undefined
}

export function numberIn (node: Node | undefined, param: string, min: number, max: number, fallback: number, integer: boolean): number {
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
export function listItems (node: Node | undefined, param: string, code: ErrorCode, errorKey: string = param): Prim[] {
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

export function stringList (node: Node | undefined, param: string, code: ErrorCode = 'EINVALQUERY', errorKey: string = param): string[] {
  const out: string[] = []
  for (const item of listItems(node, param, code, errorKey)) {
    if (typeof item !== 'string') fail(code, errorKey, `The \`${param}\` has an invalid value (\`${show(item)}\`). Every item must be a string.`)
    const trimmed = item.trim()
    if (trimmed !== '') out.push(trimmed)
  }
  return out
}

/** The on/off state of a boolean-or-object parameter (`screenshot`, `pdf`, `meta`, ...). */
export function switchState (node: Node | undefined, param: string, code: ErrorCode = 'EINVALQUERY'): 'absent' | 'on' | 'off' {
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
export function objectNode (node: Node | undefined, param: string): Node | undefined {
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

/**
 * The sub-keys of `parent` with the legacy top-level `aliases` (docs/api.md §2) merged under them: a
 * nested key wins over its alias. The alias names are those the parameter table declares for it.
 */
export function withAliases (root: Node, parent: Node | undefined, aliases: readonly string[]): Node {
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
export function checkName (name: string, param: string, code: ErrorCode, key: string = param): void {
  if (FORBIDDEN_NAMES.has(name)) fail(code, key, `The name \`${name}\` is reserved and cannot be used in \`${param}\`.`)
  if (name === '') fail(code, key, `The \`${param}\` has an empty name.`)
}

export function duration (node: Node | undefined, param: string, code: ErrorCode = 'EINVALQUERY'): number | undefined {
  const value = scalar(node, param, code)
  if (value === undefined) return undefined
  const parsed = parseDuration(value)
  if (parsed === undefined) {
    invalid(code, param, value, 'It must be a number of milliseconds or a duration such as `500ms`, `10s`, `1.5h` or `2 days`.')
  }
  return parsed
}

// ---------------------------------------------------------------------------------------------
// JavaScript sources (`function`, a rule's `evaluate`).

/** Whether `source` parses as one JS expression; compiled only, never run. */
export function syntaxProblem (source: string): string | undefined {
  try {
    new Script(`(${source}\n)`, { filename: 'pagecast-check.js' })
    return undefined
  } catch (err) {
    return err instanceof Error ? err.message : 'syntax error'
  }
}

// ---------------------------------------------------------------------------------------------
// Readers of the plain parameters, named by the table (the option's name is its name in messages).

type Reader<T> = (node: Node | undefined, input: { readonly name: string }) => T

export function readBoolean (fallback: boolean): Reader<boolean> {
  return (node, { name }) => bool(node, name, fallback)
}

/** A CSS selector or other string that means "not given" when empty. */
export const readOptionalString: Reader<string | undefined> = (node, { name }) => optionalString(node, name)

/** A string or a list of strings, trimmed, empty items dropped. */
export const readStrings: Reader<string[]> = (node, { name }) => stringList(node, name)

export function readEnum<T extends string> (values: readonly T[], fallback: T): Reader<T> {
  return (node, { name }) => enumValue(node, name, values, fallback)
}

export function readInteger (min: number, max: number, fallback: number): Reader<number> {
  return (node, { name }) => numberIn(node, name, min, max, fallback, true)
}
