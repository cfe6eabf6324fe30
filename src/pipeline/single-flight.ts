// Identical requests in flight share one computation (API.md §7): a map of promises in this process,
// and a short store lock across processes. The lock holder writes the cache entry; the others poll for
// it until their own deadline, and take over when the lock lapses without an entry.
//
// The computation gets a signal of its own that aborts only when every caller waiting on it in this
// process has gone (deadline passed or client disconnected), so one impatient client never fails the
// others, and a render nobody waits for any more leaves the browser queue.
import type { Logger } from 'pino'
import type { Store } from '../store/index.ts'
import type { Cache, CacheEntry } from './cache.ts'
import type { Computed, Fresh } from './compute.ts'
import { abortReason, abortable, sleep, throwIfAborted } from '../util/abort.ts'

export interface Flight {
  entry: CacheEntry
  /** The computation's in-memory result, when it ran in this process (absent when another instance led). */
  fresh?: Fresh
  /** True when this caller led it (in this process, through the promise map or the lock). */
  computedHere: boolean
}

export interface SingleFlight {
  /**
   * Runs compute() once per key across callers and instances. `since` is the epoch ms after which a
   * cache entry counts as the fruit of the flight we joined (older ones are what we are replacing).
   */
  run (key: string, compute: (signal: AbortSignal) => Promise<Computed>, options: { signal: AbortSignal, lockTtl: number, since: number }): Promise<Flight>
  /** Flights under way in this process (for tests and metrics). */
  size (): number
}

const LOCK_PREFIX = 'lock:'

interface Running {
  promise: Promise<Flight>
  /** Callers still waiting. */
  waiting: number
  controller: AbortController
}

export function createSingleFlight (deps: { store: Store, cache: Cache, log: Logger, pollMs?: number }): SingleFlight {
  const inFlight = new Map<string, Running>()
  const pollMs = deps.pollMs ?? 50

  async function leadOrFollow (key: string, compute: (signal: AbortSignal) => Promise<Computed>, signal: AbortSignal, options: { lockTtl: number, since: number }): Promise<Flight> {
    const lockKey = LOCK_PREFIX + key
    for (;;) {
      throwIfAborted(signal)
      let token: string | null
      try {
        token = await deps.store.acquireLock(lockKey, options.lockTtl)
      } catch (err) {
        // The store is away: compute here without the cross-instance lock (the in-process map still
        // dedupes) rather than fail the request; locks work again once the store is back.
        deps.log.warn({ err }, 'lock store unavailable; computing without the shared lock')
        return { ...await compute(signal), computedHere: true }
      }
      if (token !== null) {
        try {
          return { ...await compute(signal), computedHere: true }
        } finally {
          await deps.store.releaseLock(lockKey, token).catch((err: unknown) => deps.log.warn({ err }, 'lock release failed'))
        }
      }
      // Another instance computes: wait for its entry, or for its lock to lapse.
      for (;;) {
        await sleep(pollMs, signal)
        const entry = await deps.cache.read(key, { shared: true })
        if (entry !== undefined && entry.meta.createdAt >= options.since) return { entry, computedHere: false }
        const holder = await deps.store.get(lockKey)
        if (holder === null) break
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
    async run (key, compute, options) {
      const running = inFlight.get(key)
      if (running !== undefined) {
        const flight = await join(running, options.signal)
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
      return await join(created, options.signal)
    },
    size: () => inFlight.size
  }
}
