// The `GET /` query a content endpoint's query form stands for (`/markdown?url=...`, docs/api.md §14), memoized: a
// pure function of the raw query, so hits skip the rewrite (schemas/content-query.ts). Bounded by count and by size.
import { LRUCache } from 'lru-cache'
import { contentQuery, type ContentAttr } from '../schemas/content-query.ts'
import { MAX_MEMO_QUERY } from './parsed-query.ts'

const rewritten = new LRUCache<string, string>({ max: 10_000, maxSize: 32 * 1024 * 1024, sizeCalculation: (query, key) => key.length + query.length })

/** contentQuery(raw, attr), from the memo when that query was rewritten before. */
export function memoContentQuery (raw: string, attr: ContentAttr): string {
  if (raw.length > MAX_MEMO_QUERY) return contentQuery(raw, attr)
  const key = `${attr}\u0000${raw}`
  let query = rewritten.get(key)
  if (query === undefined) {
    query = contentQuery(raw, attr)
    rewritten.set(key, query)
  }
  return query
}
