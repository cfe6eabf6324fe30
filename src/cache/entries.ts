// Cache entries: what a computation produced, how to store it and how to judge it on lookup (docs/api.md §7).
import { LRUCache } from 'lru-cache'
import type { Store } from '../store/index.ts'
import type { StoredFile } from '../storage/index.ts'

export type CacheStatus = 'MISS' | 'HIT' | 'BYPASS' | 'STALE'
/** How the page was loaded (`x-fetch-mode`); `-proxy` when the request's proxy carried a request for it. */
export type FetchMode = LoadedBy | `${LoadedBy}-proxy`
export type LoadedBy = 'fetch' | 'prerender' | 'skipped'

export interface EntryMeta {
  /** Epoch ms when the payload was computed (x-timestamp). */
  createdAt: number
  /** The entry's ttl in ms (x-cache-ttl). */
  ttl: number
  fetchMode: FetchMode
  /** ms spent loading the page (x-fetch-time). */
  fetchTime: number
  /**
   * Storage keys of the generated files, keyed by the dot path of their media object in `data` (`screenshot`,
   * `pdf`): the reply learns from this record, not from the shape of an embed path, which fields are files.
   */
  files: Record<string, string>
  /** How the computation that made it was reported: MISS, or BYPASS when forced. */
  status: 'MISS' | 'BYPASS'
  /**
   * Set when the computation gave up on something (a wait that ran out, a wait the request's `timeout` cut short):
   * what, by name. Such an entry is answered (`cache-control: no-store`) but never stored (docs/api.md §7).
   */
  incomplete?: readonly string[]
}

export interface CacheEntry {
  meta: EntryMeta
  /** The serialized success envelope, sent as it is on a HIT. */
  body: string
}

/** The success envelope of docs/api.md §4.1, as an entry's body serializes it. */
export interface Envelope {
  status: 'success'
  data: Record<string, unknown>
  statusCode: number | null
  headers: Record<string, string>
  redirects: Array<{ statusCode: number, url: string }>
}

/**
 * What a computation still holds in memory once its entry is serialized: the envelope and the bytes of the
 * files it stored (by their path in `data`). The request that computed it, and those that joined it in this
 * process, answer from these: no parse of the envelope just serialized, no download of a file just uploaded.
 */
export interface Fresh {
  envelope: Envelope
  files: Record<string, StoredFile>
}

/** An entry as a request is answered from it. */
export interface Served {
  entry: CacheEntry
  /** The in-memory result when this process computed it now (MISS, BYPASS, or joined here). */
  fresh?: Fresh
  status: CacheStatus
  /** Phase durations in ms, for server-timing. */
  timings: Record<string, number>
}

export type Lookup =
  | { kind: 'hit', entry: CacheEntry }
  | { kind: 'stale', entry: CacheEntry }
  | { kind: 'miss' }

/**
 * The store's key of an entry: the cache key in a hash tag, as its single-flight lock's (lockKeyOf in
 * single-flight.ts), so the two are in one Cluster slot and one script can read the one and take the other.
 */
export function entryKeyOf (key: string): string {
  return `cache:{${key}}`
}

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

/** What readOrLock found: the entry, or, when the store had none, the lock's token (null: another holds it). */
export interface CacheRead {
  entry: CacheEntry | undefined
  /** Absent when no lock was asked for: the entry was there (or held in process), or its stored form was unreadable. */
  lock?: string | null
}

/**
 * The flight's lock (single-flight.ts takes it), given to the computation of the caller that leads, so that its
 * entry's write can release it in the same round trip (Cache.write): one command after the computation instead of
 * two. Declared here, beside the write that takes it, so that this file needs nothing from single-flight.ts.
 */
export interface FlightLock {
  key: string
  token: string
  /** Called by that write before it is sent: the lease is no longer renewed, and the flight releases nothing. */
  handOver (): void
}

export interface Cache {
  /** `shared: true` skips the in-process copy and asks the store itself. */
  read (key: string, options?: { shared?: boolean }): Promise<CacheEntry | undefined>
  /**
   * read(), but when the store has no entry, the lock at `lockKey` (which shares the entry's hash tag) is taken for
   * ttlMs in the same round trip (Store.readOrLock). An entry found, in process or in the store, takes no lock.
   */
  readOrLock (key: string, lockKey: string, ttlMs: number): Promise<CacheRead>
  /** The copy held in process (read or written here within hotTtlMs), without asking the store; synchronous. */
  held (key: string): CacheEntry | undefined
  /**
   * With the flight's lock (held by this caller), the entry is written and the lock released in one round trip
   * (Store.setAndRelease), the lock handed over first; should that fail, a release is still sent. An entry over
   * `maxEntryBytes` is not written (nor held): the caller's flight then releases the lock.
   */
  write (key: string, entry: CacheEntry, lock?: FlightLock): Promise<void>
}

export interface CacheOptions {
  /**
   * Entries read or written here are also kept in process, parsed, for this long, so a hot key is answered
   * without a round trip (Redis) or a parse of the stored string (either store). With Redis, another instance's
   * newer entry for the same key (a forced recomputation) is seen at most this much later; the memory store is
   * written only through this cache, so its copy is never behind. 0 turns it off.
   */
  hotTtlMs?: number
  hotMaxEntries?: number
  /** What the entries held in process may weigh in all (entrySize); the least recently used go first. */
  hotMaxBytes?: number
  /** Entries whose stored form is larger (UTF-8 bytes) are cached nowhere: neither in the store nor in process. */
  maxEntryBytes?: number
}

/** hotMaxBytes when unset: what the entries held in process may weigh in all. */
export const DEFAULT_HOT_MAX_BYTES = 64 * 1024 * 1024
/** What an entry held in process is counted as: its body's characters, and a little for its meta. */
const entrySize = (entry: CacheEntry): number => entry.body.length + 256

export function createCache (store: Store, options: CacheOptions = {}): Cache {
  const hotTtl = options.hotTtlMs ?? 1000
  const maxEntryBytes = options.maxEntryBytes ?? Number.POSITIVE_INFINITY
  const hot = hotTtl > 0
    ? new LRUCache<string, CacheEntry>({ max: options.hotMaxEntries ?? 1000, maxSize: options.hotMaxBytes ?? DEFAULT_HOT_MAX_BYTES, sizeCalculation: entrySize, ttl: hotTtl })
    : undefined
  /** The entry of a stored string, kept in process. */
  function kept (key: string, raw: string | null): CacheEntry | undefined {
    const entry = raw === null ? undefined : parseEntry(raw)
    if (entry !== undefined) hot?.set(key, entry)
    return entry
  }
  return {
    async read (key, readOptions) {
      const local = readOptions?.shared === true ? undefined : hot?.get(key)
      if (local !== undefined) return local
      return kept(key, await store.get(entryKeyOf(key)))
    },
    async readOrLock (key, lockKey, ttlMs) {
      const local = hot?.get(key)
      if (local !== undefined) return { entry: local }
      const found = await store.readOrLock(entryKeyOf(key), lockKey, ttlMs)
      return found.value === null ? { entry: undefined, lock: found.token } : { entry: kept(key, found.value) }
    },
    held (key) {
      return hot?.get(key)
    },
    async write (key, entry, lock) {
      // Kept for 2 x ttl so that an expired copy is still there for staleTtl.
      const value = serializeEntry(entry)
      // Too large to cache: served, and kept nowhere. The flight releases its lock itself (it was not handed over).
      if (value.length > maxEntryBytes || Buffer.byteLength(value) > maxEntryBytes) return
      if (lock === undefined) {
        await store.set(entryKeyOf(key), value, 2 * entry.meta.ttl)
      } else {
        lock.handOver()
        try {
          await store.setAndRelease(entryKeyOf(key), value, 2 * entry.meta.ttl, lock.key, lock.token)
        } catch (err) {
          void store.releaseLock(lock.key, lock.token).catch(() => {})
          throw err
        }
      }
      hot?.set(key, entry)
    }
  }
}

/** Seconds of ttl left, for cache-control max-age. */
export function secondsLeft (meta: EntryMeta, now: number): number {
  return Math.max(0, Math.floor((meta.createdAt + meta.ttl - now) / 1000))
}
