// Identical requests in flight share one computation (docs/api.md §7): a map of promises in this process,
// and a store lock across processes. The lock holder writes the cache entry; the others poll for it until
// their own deadline, and take over when the lock lapses without an entry. The lock is a short lease
// (LOCK_LEASE_MS) that the holder renews while it computes, so the lock of a holder that died lapses within
// a few seconds instead of after the whole request's time.
//
// The lock can be taken by the read that comes before the flight (read(): the entry, or when the store has none, the
// lock in the same round trip), and handed to run() as its `claim`: a cold request then asks the store once before
// it computes, not twice.
//
// The computation gets a signal of its own that aborts only when every caller waiting on it in this
// process has gone (deadline passed or client disconnected), so one impatient client never fails the
// others, and a render nobody waits for any more leaves the browser queue.
import type { Logger } from 'pino'
import type { Store } from '../store/index.ts'
import type { Cache, CacheEntry, CacheRead, FlightLock } from './entries.ts'
import { abortReason, abortable, sleep, throwIfAborted } from '../util/abort.ts'
import { logStoreFailure } from '../store/unavailable.ts'

export type { FlightLock } from './entries.ts'

/** What a computation gives: at least the entry it wrote; the caller may add what it keeps in memory besides. */
export interface Computation {
  entry: CacheEntry
}

export interface Flight<T extends Computation = Computation> {
  entry: CacheEntry
  /** The computation's in-memory result, when it ran in this process (absent when another instance led). */
  computed?: T
  /** True when this caller led it (in this process, through the promise map or the lock). */
  computedHere: boolean
}

export interface RunOptions {
  signal: AbortSignal
  lockTtl: number
  since: number
  /**
   * The `lock` of the read() just before, for this key: its token (this caller holds the lock: the flight leads
   * with it, or releases it when it joins a flight under way here), or null (another instance holds it: the flight
   * follows). Absent: the flight asks for the lock itself.
   */
  claim?: string | null
}

export interface SingleFlight {
  /**
   * The cache read before run(): the entry, held in process or stored; when the store has none and no flight for
   * the key is under way in this process, the flight's lock is asked for in the same round trip (Cache.readOrLock),
   * for lockTtl as run() would, and its outcome is `lock`, to be passed to run() as `claim`.
   */
  read (key: string, options: { lockTtl: number }): Promise<CacheRead>
  /**
   * Runs compute() once per key across callers and instances. `since` is the epoch ms after which a
   * cache entry counts as the fruit of the flight we joined (older ones are what we are replacing).
   */
  run<T extends Computation> (key: string, compute: (signal: AbortSignal, lock?: FlightLock) => Promise<T>, options: RunOptions): Promise<Flight<T>>
  /** Flights under way in this process (for tests and metrics). */
  size (): number
}

/** The store's key of a flight's lock: the cache key in the hash tag of its entry's (entryKeyOf), one Cluster slot. */
export function lockKeyOf (key: string): string {
  return `lock:{${key}}`
}
/** The lock's lease: a dead holder's lock lapses this long after its last renewal. */
export const LOCK_LEASE_MS = 3000

interface Running {
  promise: Promise<Flight>
  /** Callers still waiting. */
  waiting: number
  controller: AbortController
}

function here<T extends Computation> (computed: T): Flight<T> {
  return { entry: computed.entry, computed, computedHere: true }
}

export interface SingleFlightDeps {
  store: Store
  cache: Cache
  log: Logger
  /** How often a follower looks for the entry or the lock (ms). */
  pollMs?: number
  /** The lock's lease (ms); renewed every third of it. */
  leaseMs?: number
}

export function createSingleFlight (deps: SingleFlightDeps): SingleFlight {
  const inFlight = new Map<string, Running>()
  const pollMs = deps.pollMs ?? 50
  const leaseMs = deps.leaseMs ?? LOCK_LEASE_MS

  /**
   * Renews the lease every third of it until stopped, for at most `maxMs` (the computation's own limit: a
   * computation stuck past it no longer holds others back). A lapsed lease is logged; the computation goes on.
   */
  function keepLease (lockKey: string, token: string, maxMs: number): () => void {
    const until = Date.now() + maxMs
    const timer = setInterval(() => {
      if (Date.now() + leaseMs > until) {
        clearInterval(timer)
        return
      }
      deps.store.renewLock(lockKey, token, leaseMs).then((held) => {
        if (!held) deps.log.warn({ lock: lockKey }, 'single-flight lease lapsed; another instance may compute too')
      }, (err: unknown) => { logStoreFailure(deps.log, err, 'single-flight lease renewal failed') })
    }, Math.max(1, Math.floor(leaseMs / 3)))
    timer.unref()
    return () => { clearInterval(timer) }
  }

  function release (lockKey: string, token: string): void {
    void deps.store.releaseLock(lockKey, token).catch((err: unknown) => { logStoreFailure(deps.log, err, 'lock release failed') })
  }

  async function leadOrFollow<T extends Computation> (key: string, compute: (signal: AbortSignal, lock?: FlightLock) => Promise<T>, signal: AbortSignal, options: RunOptions): Promise<Flight<T>> {
    const lockKey = lockKeyOf(key)
    let claim = options.claim
    for (;;) {
      throwIfAborted(signal)
      let token: string | null
      try {
        // The read's claim, the first time round; the store's answer after that.
        token = claim !== undefined ? claim : await deps.store.acquireLock(lockKey, Math.min(leaseMs, options.lockTtl))
        claim = undefined
      } catch (err) {
        // The store is away: compute here without the cross-instance lock (the in-process map still
        // dedupes) rather than fail the request; locks work again once the store is back.
        logStoreFailure(deps.log, err, 'lock store unavailable; computing without the shared lock')
        return here(await compute(signal))
      }
      if (token !== null) {
        const stopLease = keepLease(lockKey, token, options.lockTtl)
        let handedOver = false
        const lock: FlightLock = { key: lockKey, token, handOver: () => { handedOver = true; stopLease() } }
        try {
          return here(await compute(signal, lock))
        } finally {
          stopLease()
          // Unless the entry's write took it over: sent once the computation is over, its entry written and
          // acknowledged, so followers elsewhere find the entry before the lock goes; but nobody waits for the round
          // trip (a cold request would answer a round trip later). The store's commands keep their order on its
          // connection: what this process asks next, a new lock on the key included, comes after the release.
          if (!handedOver) release(lockKey, token)
        }
      }
      // Another instance computes: wait for its entry, or for its lock to lapse.
      for (;;) {
        await sleep(pollMs, signal)
        const entry = await deps.cache.read(key, { shared: true })
        if (entry !== undefined && entry.meta.createdAt >= options.since) return { entry, computedHere: false }
        const holder = await deps.store.get(lockKey)
        if (holder === null) {
          // The leader may have written its entry and released the lock between the two reads above (one step
          // on Redis: setAndRelease): whoever finds the lock gone finds its entry, so look once more before leading.
          const written = await deps.cache.read(key, { shared: true })
          if (written !== undefined && written.meta.createdAt >= options.since) return { entry: written, computedHere: false }
          break
        }
      }
    }
  }

  /** Waits on a flight with the caller's own signal; the last caller to leave aborts the flight. */
  async function join (running: Running, signal: AbortSignal): Promise<Flight> {
    running.waiting++
    let left = false
    const leave = (): void => {
      if (left) return
      left = true
      running.waiting--
      if (running.waiting === 0) running.controller.abort(abortReason(signal))
    }
    try {
      return await abortable(running.promise, signal)
    } catch (err) {
      if (signal.aborted) leave()
      throw err
    } finally {
      if (!signal.aborted) left = true
    }
  }

  return {
    async read (key, options) {
      // A flight under way here is joined by run(): its lock is not ours to ask for.
      if (inFlight.has(key)) return { entry: await deps.cache.read(key) }
      return await deps.cache.readOrLock(key, lockKeyOf(key), Math.min(leaseMs, options.lockTtl))
    },
    async run<T extends Computation> (key: string, compute: (signal: AbortSignal, lock?: FlightLock) => Promise<T>, options: RunOptions): Promise<Flight<T>> {
      const running = inFlight.get(key)
      if (running !== undefined) {
        // A lock taken by this caller's read while another caller here, whose read found it held, started a flight
        // (their reads crossed): that flight follows, polling the lock, so this one goes and the flight takes it.
        if (typeof options.claim === 'string') release(lockKeyOf(key), options.claim)
        // One key, one kind of computation: what the leader computed is what this caller would have.
        const flight = await join(running, options.signal) as Flight<T>
        return { ...flight, computedHere: false }
      }
      const controller = new AbortController()
      const created: Running = {
        promise: leadOrFollow(key, compute, controller.signal, options),
        waiting: 0,
        controller
      }
      inFlight.set(key, created)
      const cleanup = (): void => { if (inFlight.get(key) === created) inFlight.delete(key) }
      created.promise.then(cleanup, cleanup)
      return await join(created, options.signal) as Flight<T>
    },
    size: () => inFlight.size
  }
}
