// The cache key (docs/api.md §7): SHA-256 of a canonical form of the normalized options. The parser has
// already normalized names and filled defaults, so spelling, order and stated defaults never split an
// entry; here each option joins the key as the parameter table says (schemas/parameters.ts): as it is,
// left out (it never changes the output), or hashed, so no forwarded secret sits in the key in clear.
import { sha256 } from '../util/hash.ts'
import { CACHE_KEY_RULES } from '../schemas/derived.ts'

/** JSON with object keys sorted at every depth; undefined members dropped. */
export function canonicalJson (value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null'
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`
}

export function cacheKeyOf (options: object): string {
  const hasFunction = (options as { function?: unknown }).function !== undefined
  const keyed: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(options)) {
    const rule = CACHE_KEY_RULES.get(name) ?? 'keep'
    if (rule === 'leave-out') continue
    if (rule === 'hash-values' && value !== null && typeof value === 'object') {
      const hashed: Record<string, string> = {}
      for (const [h, v] of Object.entries(value as Record<string, string>)) hashed[h] = sha256(String(v))
      keyed[name] = hashed
    } else if (rule === 'hash' && typeof value === 'string') {
      keyed[name] = sha256(value)
    } else if (rule === 'with-function' && !hasFunction) {
      continue
    } else {
      keyed[name] = value
    }
  }
  return sha256(canonicalJson(keyed))
}
