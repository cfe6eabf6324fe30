// Identical requests in flight share one computation (API.md §7): a map of promises in this process,
// and a short store lock across processes. The lock holder writes the cache entry; the others poll for
// it until their own deadline, and take over when the lock lapses without an entry.
import type { Logger } from 'pino'
import type { Store } from '../store/index.ts'
import type { Cache, CacheEntry } from './cache.ts'
import { AppError } from '../errors.ts'

export interface Flight {
  entry: CacheEntry
  /** True when this caller computed it (in this process, through the promise map or the lock). */
  computedHere: boolean
}

export interface SingleFlight {
  /**
   * Runs compute() once per key across callers and instances. `since` is the epoch ms after which a
   * cache entry counts as the fruit of the flight we joined (older ones are what we are replacing).
   */
  run (key: string, compute: () => Promise<CacheEntry>, options: { signal: AbortSignal, lockTtl: number, since: number }): Promise<Flight>
  /** Flights under way in this process (for tests and metrics). */
  size (): number
}

const LOCK_PREFIX = 'lock:'

function sleep (ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) { reject(signal.reason); return }
    const timer = setTimeout(() => { signal.removeEventListener('abort', onAbort); resolve() }, ms)
    const onAbort = (): void => { clearTimeout(timer); reject(signal.reason) }
    signal.addEventListener('abort', onAbort, { once: true })
  })
}

export function createSingleFlight (deps: { store: Store, cache: Cache, log: Logger, pollMs?: number }): SingleFlight {
  const inFlight = new Map<string, Promise<Flight>>()
  const pollMs = deps.pollMs ?? 50

  async function leadOrFollow (key: string, compute: () => Promise<CacheEntry>, options: { signal: AbortSignal, lockTtl: number, since: number }): Promise<Flight> {
    const lockKey = LOCK_PREFIX + key
    for (;;) {
      if (options.signal.aborted) throw options.signal.reason
      const token = await deps.store.acquireLock(lockKey, options.lockTtl)
      if (token !== null) {
        try {
          return { entry: await compute(), computedHere: true }
        } finally {
          await deps.store.releaseLock(lockKey, token).catch((err: unknown) => deps.log.warn({ err }, 'lock release failed'))
        }
      }
      // Another instance computes: wait for its entry, or for its lock to lapse.
      for (;;) {
        await sleep(pollMs, options.signal)
        const entry = await deps.cache.read(key)
        if (entry !== undefined && entry.meta.createdAt >= options.since) return { entry, computedHere: false }
        const holder = await deps.store.get(lockKey)
        if (holder === null) break
      }
    }
  }

  return {
    async run (key, compute, options) {
      const running = inFlight.get(key)
      if (running !== undefined) {
        const flight = await raceAbort(running, options.signal)
        return { entry: flight.entry, computedHere: false }
      }
      const promise = leadOrFollow(key, compute, options)
      inFlight.set(key, promise)
      const cleanup = (): void => { if (inFlight.get(key) === promise) inFlight.delete(key) }
      promise.then(cleanup, cleanup)
      return await promise
    },
    size: () => inFlight.size
  }
}

/** Waits for a promise, or rejects with the signal's reason when it aborts first. */
export function raceAbort<T> (promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error)
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => { reject(signal.reason ?? new AppError('ETIMEOUT')) }
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(
      value => { signal.removeEventListener('abort', onAbort); resolve(value) },
      (err: unknown) => { signal.removeEventListener('abort', onAbort); reject(err) }
    )
  })
}
