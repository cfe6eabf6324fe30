// The cache key (docs/api.md §7): SHA-256 of a canonical form of the normalized options. The parser has
// already normalized names and filled defaults, so spelling, order and stated defaults never split an
// entry; here each option joins the key as the parameter table says (schemas/parameters.ts): as it is,
// left out (it never changes the output), or hashed, so no forwarded secret sits in the key in clear.
// Every cold request computes one (a hit's comes from the parsed-query memo), so the canonical form is written in
// one pass, straight into one string: no copy of the options, no arrays of entries.
import { sha256 } from '../util/hash.ts'
import { CACHE_KEY_RULES } from '../schemas/derived.ts'

/** The own enumerable keys of `value` in code-unit order (the order `<` gives): sorted only when they are not. */
function sortedKeys (value: object): string[] {
  const keys = Object.keys(value)
  for (let i = 1; i < keys.length; i++) {
    if (keys[i - 1]! > keys[i]!) return keys.sort()
  }
  return keys
}

/** A primitive as JSON; what JSON.stringify leaves out (undefined, a function, a symbol) as null. */
function scalarJson (value: unknown): string {
  if (typeof value === 'boolean') return value ? 'true' : 'false'
  return JSON.stringify(value) ?? 'null'
}

/** An object as canonical JSON: keys sorted, each member as `member` gives it, undefined members dropped. */
function objectJson (record: Record<string, unknown>, member: (name: string, value: unknown) => unknown): string {
  let out = '{'
  for (const key of sortedKeys(record)) {
    const value = member(key, record[key])
    if (value === undefined) continue
    out += `${out.length === 1 ? '' : ','}${JSON.stringify(key)}:${canonicalJson(value)}`
  }
  return `${out}}`
}

const asItIs = (_name: string, value: unknown): unknown => value

/** JSON with object keys sorted at every depth; undefined members dropped. */
export function canonicalJson (value: unknown): string {
  if (value === null || typeof value !== 'object') return scalarJson(value)
  if (Array.isArray(value)) {
    let out = '['
    for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + canonicalJson(value[i])
    return `${out}]`
  }
  return objectJson(value as Record<string, unknown>, asItIs)
}

/** What an option joins the key as (its rule applied), or undefined when it stays out. */
function keyedValue (name: string, value: unknown, hasFunction: boolean): unknown {
  const rule = CACHE_KEY_RULES.get(name) ?? 'keep'
  if (rule === 'leave-out') return undefined
  if (rule === 'hash-values' && value !== null && typeof value === 'object') {
    const hashed: Record<string, string> = {}
    for (const h of Object.keys(value)) hashed[h] = sha256(String((value as Record<string, unknown>)[h]))
    return hashed
  }
  if (rule === 'hash' && typeof value === 'string') return sha256(value)
  if (rule === 'with-function' && !hasFunction) return undefined
  if (rule === 'unless-empty' && Array.isArray(value) && value.length === 0) return undefined
  return value
}

export function cacheKeyOf (options: object): string {
  return sha256(keyJsonOf(options))
}

/** What cacheKeyOf hashes: the canonical JSON of the options with each rule applied. */
export function keyJsonOf (options: object): string {
  const record = options as Record<string, unknown>
  const hasFunction = record.function !== undefined
  return objectJson(record, (name, value) => keyedValue(name, value, hasFunction))
}
