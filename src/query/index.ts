// Raw query -> options + cache key, in one room (docs/architecture.md, "A request's path", step 2). The options and
// the cache key are a pure function of the plan, the raw query string and the forwarded x-api-header-* values (the
// config is fixed for the process), so repeated queries (every cache hit) skip parsing, validation and hashing: one
// bounded memo keeps them. A query not seen before that differs from one parsed before only in its `url` is read from
// that one's template (templates.ts); anything else is parsed whole (schemas/query.ts) and keyed (cache/key.ts).
// Only successes are kept; entries are frozen so that no request can alter another's options. Bounded by count and
// by size (memoSize). The room sits above schemas/ (the parser) and cache/ (the key, which reads the parameter
// table's rules from schemas/), using both; routes/ builds it. The content endpoints' rewrite of their query into a
// `GET /` query is memoized here too (content.ts).
import { LRUCache } from 'lru-cache'
import type { IncomingHttpHeaders } from 'node:http'
import type { Plan } from '../config.ts'
import type { ExtractOptions } from '../schemas/options.ts'
import { parseQuery } from '../schemas/query.ts'
import { API_HEADER_PREFIX } from '../schemas/read-emulation.ts'
import { cacheKeyOf } from '../cache/key.ts'
import { deepFreeze } from '../util/freeze.ts'
import { createQueryTemplates } from './templates.ts'
import { MAX_MEMO_QUERY, MEMO_MAX_BYTES, memoSize, type ParsedQuery } from './parsed-query.ts'

export type { ParsedQuery } from './parsed-query.ts'

export interface Queries {
  /** The query's options and cache key, from the memo or parsed (then checked and kept); throws what parsing throws. */
  parse (plan: Plan, rawQuery: string, headers: IncomingHttpHeaders): ParsedQuery
  /** The memoized result, or undefined when the query was not parsed (or not kept) yet. Never parses. */
  peek (plan: Plan, rawQuery: string, headers: IncomingHttpHeaders): ParsedQuery | undefined
}

export interface QueriesOptions {
  /** MAX_TIMEOUT in ms (schemas' ParseContext). */
  maxTimeout: number
  /**
   * Checks of the parsed options that belong to validation (docs/api.md §1.4 step 6, the literal address checks):
   * run once per query before it is kept, so a refused query is never memoized.
   */
  check?: (options: Readonly<ExtractOptions>) => void
  /** How many parsed queries the memo keeps, and what they may weigh in all (memoSize). */
  max?: number
  maxBytes?: number
}

function forwardedHeaders (headers: IncomingHttpHeaders): string {
  let out = ''
  for (const name in headers) {
    if (name.startsWith(API_HEADER_PREFIX)) out += `${name}\u0000${String(headers[name])}\u0000`
  }
  return out
}

export function createQueries ({ maxTimeout, check, max = 10_000, maxBytes = MEMO_MAX_BYTES }: QueriesOptions): Queries {
  const memo = new LRUCache<string, ParsedQuery>({ max, maxSize: maxBytes, sizeCalculation: (parsed, key) => memoSize(key, parsed.options) })
  const templates = createQueryTemplates()
  const keyOf = (plan: Plan, rawQuery: string, headers: IncomingHttpHeaders): string =>
    `${plan}\u0001${rawQuery}\u0001${forwardedHeaders(headers)}`

  function compute (plan: Plan, rawQuery: string, headers: IncomingHttpHeaders): ParsedQuery {
    const parseContext = { plan, headers, maxTimeout }
    const known = templates(rawQuery, parseContext)
    const options = known?.options ?? parseQuery(rawQuery, parseContext)
    check?.(options)
    return { options, cacheKey: known?.cacheKey ?? cacheKeyOf(options) }
  }

  return {
    peek (plan, rawQuery, headers) {
      return rawQuery.length > MAX_MEMO_QUERY ? undefined : memo.get(keyOf(plan, rawQuery, headers))
    },
    parse (plan, rawQuery, headers) {
      if (rawQuery.length > MAX_MEMO_QUERY) return compute(plan, rawQuery, headers)
      const key = keyOf(plan, rawQuery, headers)
      const hit = memo.get(key)
      if (hit !== undefined) return hit
      const parsed = compute(plan, rawQuery, headers)
      deepFreeze(parsed.options)
      memo.set(key, parsed)
      return parsed
    }
  }
}
