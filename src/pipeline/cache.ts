// Cache entries: what a computation produced, how to store it and how to judge it on lookup (API.md §7).
import type { Store } from '../store/index.ts'

export type CacheStatus = 'MISS' | 'HIT' | 'BYPASS' | 'STALE'
export type FetchMode = 'fetch' | 'prerender' | 'skipped'

export interface EntryMeta {
  /** Epoch ms when the payload was computed (x-timestamp). */
  createdAt: number
  /** The entry's ttl in ms (x-cache-ttl). */
  ttl: number
  fetchMode: FetchMode
  /** ms spent loading the page (x-fetch-time). */
  fetchTime: number
  /** Storage keys of the generated files, by kind. */
  files: Partial<Record<'screenshot' | 'pdf', string>>
  /** How the computation that made it was reported: MISS, or BYPASS when forced. */
  status: 'MISS' | 'BYPASS'
}

export interface CacheEntry {
  meta: EntryMeta
  /** The serialized success envelope, sent as it is on a HIT. */
  body: string
}

export type Lookup =
  | { kind: 'hit', entry: CacheEntry }
  | { kind: 'stale', entry: CacheEntry }
  | { kind: 'miss' }

const PREFIX = 'cache:'

export function serializeEntry (entry: CacheEntry): string {
  return `${JSON.stringify(entry.meta)}\n${entry.body}`
}

export function parseEntry (raw: string): CacheEntry | undefined {
  const nl = raw.indexOf('\n')
  if (nl === -1) return undefined
  try {
    const meta = JSON.parse(raw.slice(0, nl)) as EntryMeta
    if (typeof meta.createdAt !== 'number' || typeof meta.ttl !== 'number') return undefined
    return { meta, body: raw.slice(nl + 1) }
  } catch {
    return undefined
  }
}

/** HIT while fresh; STALE when staleTtl is set and the ttl left is below it; else a miss. */
export function judge (entry: CacheEntry, staleTtl: number | false, now: number): Lookup {
  const left = entry.meta.createdAt + entry.meta.ttl - now
  if (staleTtl === false) return left > 0 ? { kind: 'hit', entry } : { kind: 'miss' }
  // Retention is 2 x ttl: an entry older than that is gone (or about to be).
  if (now - entry.meta.createdAt >= 2 * entry.meta.ttl) return { kind: 'miss' }
  return left < staleTtl ? { kind: 'stale', entry } : { kind: 'hit', entry }
}

export interface Cache {
  read (key: string): Promise<CacheEntry | undefined>
  write (key: string, entry: CacheEntry): Promise<void>
}

export function createCache (store: Store): Cache {
  return {
    async read (key) {
      const raw = await store.get(PREFIX + key)
      return raw === null ? undefined : parseEntry(raw)
    },
    async write (key, entry) {
      // Kept for 2 x ttl so that an expired copy is still there for staleTtl.
      await store.set(PREFIX + key, serializeEntry(entry), 2 * entry.meta.ttl)
    }
  }
}

/** Seconds of ttl left, for cache-control max-age. */
export function secondsLeft (meta: EntryMeta, now: number): number {
  return Math.max(0, Math.floor((meta.createdAt + meta.ttl - now) / 1000))
}
