// The cache key (API.md §7): SHA-256 of a canonical form of the normalized options. The parser has
// already normalized names and filled defaults, so spelling, order and stated defaults never split an
// entry; here we drop what does not change the output and hash what must not sit in the key in clear.
import { createHash } from 'node:crypto'

// Presentation and control parameters: they never change what is computed.
const LEFT_OUT = new Set(['embed', 'filter', 'force', 'staleTtl', 'timeout', 'retry'])

function sha256 (value: string): string {
  return createHash('sha256').update(value).digest('hex')
}

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
  const keyed: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(options)) {
    if (LEFT_OUT.has(name)) continue
    if (name === 'headers' && value !== null && typeof value === 'object') {
      // Forwarded header values join the key hashed, so a private result is never shared.
      const hashed: Record<string, string> = {}
      for (const [h, v] of Object.entries(value as Record<string, string>)) hashed[h] = sha256(String(v))
      keyed[name] = hashed
    } else if (name === 'proxy' && typeof value === 'string') {
      keyed[name] = sha256(value)
    } else if (name === 'args' && !('function' in options && (options as { function?: unknown }).function !== undefined)) {
      // Unknown parameters join the key only when `function` receives them.
      continue
    } else {
      keyed[name] = value
    }
  }
  return sha256(canonicalJson(keyed))
}
