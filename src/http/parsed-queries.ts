// Memo of parsed queries: the options and the cache key are a pure function of the plan, the raw query
// string and the forwarded x-api-header-* values (config is fixed for the process), so repeated
// queries (every cache hit) skip parsing, validation and hashing. Only successes are kept; entries are
// frozen so that no request can alter another's options. Bounded by count and by size (memoSize).
import { LRUCache } from 'lru-cache'
import type { IncomingHttpHeaders } from 'node:http'
import type { ExtractOptions } from '../schemas/options.ts'
import { deepFreeze } from '../util/freeze.ts'
import { API_HEADER_PREFIX } from '../schemas/read-emulation.ts'

export interface ParsedQuery {
  options: Readonly<ExtractOptions>
  cacheKey: string
}

export interface ParsedQueries {
  get (plan: string, rawQuery: string, headers: IncomingHttpHeaders, compute: () => ParsedQuery): ParsedQuery
  /** The memoized result, or undefined when the query was not parsed (or not kept) yet. */
  peek (plan: string, rawQuery: string, headers: IncomingHttpHeaders): ParsedQuery | undefined
}

function forwardedHeaders (headers: IncomingHttpHeaders): string {
  let out = ''
  for (const name in headers) {
    if (name.startsWith(API_HEADER_PREFIX)) out += `${name}\u0000${String(headers[name])}\u0000`
  }
  return out
}

/** What the memos of parsed queries may hold in all (memoSize), by default. */
export const MEMO_MAX_BYTES = 64 * 1024 * 1024

/**
 * What one memoized query is counted as: its key (the raw query and forwarded header values) twice, for the key
 * and the options read from it, and the `function` source, which a short compressed query may decode to 64 KiB.
 */
export function memoSize (key: string, options: Readonly<ExtractOptions>): number {
  return 2 * key.length + (options.function?.source.length ?? 0) + 512
}

export function createParsedQueries (max = 10_000, maxBytes = MEMO_MAX_BYTES): ParsedQueries {
  const memo = new LRUCache<string, ParsedQuery>({ max, maxSize: maxBytes, sizeCalculation: (parsed, key) => memoSize(key, parsed.options) })
  const keyOf = (plan: string, rawQuery: string, headers: IncomingHttpHeaders): string =>
    `${plan}\u0001${rawQuery}\u0001${forwardedHeaders(headers)}`
  return {
    peek (plan, rawQuery, headers) {
      return rawQuery.length > 4096 ? undefined : memo.get(keyOf(plan, rawQuery, headers))
    },
    get (plan, rawQuery, headers, compute) {
      // Very long queries are rare and would make large keys: parse them every time.
      if (rawQuery.length > 4096) return compute()
      const key = keyOf(plan, rawQuery, headers)
      const hit = memo.get(key)
      if (hit !== undefined) return hit
      const parsed = compute()
      deepFreeze(parsed.options)
      memo.set(key, parsed)
      return parsed
    }
  }
}
