// DNS as a crawler does it (docs/operations.md#dns): the address guard's resolver. Every target, redirect, probe and
// browser connection asks it, so it has to be cheap and must not let one slow name slow everything else.
// - Queries go out through c-ares (node:dns Resolver), not `dns.lookup`: lookups then never wait for, or hold, a
//   thread of libuv's 4-thread pool, which file I/O, zlib and the PNG re-encode share.
// - Answers are cached for their TTL within bounds; a name that does not exist, and a name whose server stalled or
//   failed, are cached too (shorter), so one stalled host costs one timeout, not one per request.
// - Concurrent lookups of one name share one query.
// - The hosts file is read first, as getaddrinfo does (at start: `localhost` and the machine's own names never
//   reach a DNS server).
// - A name DNS does not know (a single label, a hosts-file entry, a search domain) gets one system lookup
//   (`getaddrinfo`, which reads the hosts file and the search list), cached the same way.
// The guard still checks every address of the answer and pins the one it connects to (guard.ts): only where the
// addresses come from changes.
import { Resolver as CaresResolver } from 'node:dns/promises'
import { readFileSync } from 'node:fs'
import { isIP } from 'node:net'
import { LRUCache } from 'lru-cache'
import { systemResolver, type ResolvedAddress, type Resolver } from './guard.ts'

export interface CachingResolverOptions {
  /** DNS_SERVERS: `ip` or `ip:port` entries; unset: the system's (resolv.conf). */
  servers?: readonly string[]
  /** DNS_TIMEOUT: how long one try waits for a server. */
  timeoutMs: number
  /** Tries per query before it fails (each waits `timeoutMs`). */
  tries?: number
  /** Names held at most (least recently used go first). */
  maxEntries?: number
  /** Bounds of a positive answer's time in the cache, whatever its TTL. */
  minTtlMs?: number
  maxTtlMs?: number
  /** How long "no such name" and "no answer in time" are remembered. */
  negativeTtlMs?: number
  failureTtlMs?: number
  /** How long a system lookup's answer is held (it carries no TTL). */
  systemTtlMs?: number
  /** The hosts file read at start (default `/etc/hosts`; a missing file is an empty one). */
  hostsFile?: string
  /** The lookup for names DNS does not know (default: the system's `getaddrinfo`). */
  system?: Resolver
  now?: () => number
}

export interface CachingResolver {
  resolve: Resolver
  /** Queries sent to DNS servers and system lookups made so far, and answers from the cache. */
  stats (): { queries: number, systemLookups: number, cacheHits: number, coalesced: number, size: number }
  cancel (): void
}

type Entry = { addresses: ResolvedAddress[], expires: number } | { error: Error, expires: number }

/** Answers that mean "this name has no address" rather than "the server did not answer". */
const ABSENT = new Set(['ENOTFOUND', 'ENODATA', 'ENONAME', 'NOTFOUND', 'NODATA'])

/** A hosts file's names and their addresses (IPv4 first, as getaddrinfo orders them for an unspecified family). */
export function parseHosts (text: string): Map<string, ResolvedAddress[]> {
  const names = new Map<string, ResolvedAddress[]>()
  for (const line of text.split('\n')) {
    const [address, ...aliases] = line.replace(/#.*/, '').trim().split(/\s+/)
    const family = isIP(address ?? '')
    if (address === undefined || family === 0) continue
    for (const alias of aliases) {
      const name = alias.toLowerCase()
      const list = names.get(name) ?? []
      if (!list.some(known => known.address === address)) list.push({ address, family: family === 6 ? 6 : 4 })
      names.set(name, list.sort((a, b) => a.family - b.family))
    }
  }
  return names
}

function readHosts (file: string): Map<string, ResolvedAddress[]> {
  try {
    return parseHosts(readFileSync(file, 'utf8').slice(0, 1024 * 1024))
  } catch {
    return new Map()
  }
}

function codeOf (err: unknown): string | undefined {
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string' ? err.code : undefined
}

export function createCachingResolver (options: CachingResolverOptions): CachingResolver {
  const cares = new CaresResolver({ timeout: options.timeoutMs, tries: options.tries ?? 2 })
  if (options.servers !== undefined && options.servers.length > 0) cares.setServers([...options.servers])
  const system = options.system ?? systemResolver
  const now = options.now ?? Date.now
  const minTtl = options.minTtlMs ?? 5_000
  const maxTtl = options.maxTtlMs ?? 300_000
  const negativeTtl = options.negativeTtlMs ?? 30_000
  const failureTtl = options.failureTtlMs ?? 30_000
  const systemTtl = options.systemTtlMs ?? 60_000
  const hosts = readHosts(options.hostsFile ?? '/etc/hosts')
  const cache = new LRUCache<string, Entry>({ max: options.maxEntries ?? 10_000 })
  const pending = new Map<string, Promise<ResolvedAddress[]>>()
  const counts = { queries: 0, systemLookups: 0, cacheHits: 0, coalesced: 0 }

  async function ask (name: string): Promise<Entry> {
    counts.queries++
    const [v4, v6] = await Promise.allSettled([cares.resolve4(name, { ttl: true }), cares.resolve6(name, { ttl: true })])
    const addresses: ResolvedAddress[] = []
    let ttl = maxTtl
    for (const [answer, family] of [[v4, 4], [v6, 6]] as const) {
      if (answer.status !== 'fulfilled') continue
      for (const record of answer.value) {
        addresses.push({ address: record.address, family })
        ttl = Math.min(ttl, record.ttl * 1000)
      }
    }
    if (addresses.length > 0) return { addresses, expires: now() + Math.max(minTtl, ttl) }
    const errors = [v4, v6].flatMap(answer => answer.status === 'rejected' ? [answer.reason as unknown] : [])
    const absent = errors.every(err => ABSENT.has(codeOf(err) ?? ''))
    if (!absent) {
      // A server that timed out, refused or failed: remembered briefly, so the next requests fail at once.
      const error = errors[0] instanceof Error ? errors[0] : new Error(`no answer for ${name}`)
      return { error, expires: now() + failureTtl }
    }
    // DNS has no such name: the hosts file or a search domain may (one system lookup, on the pool, for these only).
    counts.systemLookups++
    try {
      const found = await system(name)
      if (found.length > 0) return { addresses: found, expires: now() + systemTtl }
    } catch (err) {
      return { error: err instanceof Error ? err : new Error(String(err)), expires: now() + negativeTtl }
    }
    return { error: Object.assign(new Error(`${name} has no address`), { code: 'ENOTFOUND' }), expires: now() + negativeTtl }
  }

  function settle (entry: Entry): ResolvedAddress[] {
    if ('error' in entry) throw entry.error
    return entry.addresses
  }

  async function resolve (hostname: string): Promise<ResolvedAddress[]> {
    const name = hostname.toLowerCase().replace(/\.$/, '')
    const local = hosts.get(name)
    if (local !== undefined) return local.map(answer => ({ ...answer }))
    const held = cache.get(name)
    if (held !== undefined && held.expires > now()) {
      counts.cacheHits++
      return settle(held)
    }
    const inFlight = pending.get(name)
    if (inFlight !== undefined) {
      counts.coalesced++
      return await inFlight
    }
    const query = ask(name).then(entry => {
      cache.set(name, entry)
      return settle(entry)
    }).finally(() => pending.delete(name))
    pending.set(name, query)
    return await query
  }

  return {
    resolve,
    stats: () => ({ ...counts, size: cache.size }),
    cancel: () => cares.cancel()
  }
}
