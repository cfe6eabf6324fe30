// Leased slots over the Store (docs/architecture.md): at most `limit` holders of a key at once, across every instance
// that shares the Store. A holder's lease is renewed while it holds the slot, so a crashed instance's slot lapses on
// its own. One mechanism for every such limit: a tenant plan's `concurrency` (tenants/limits.ts) and a crawl's
// requests in flight per target host (jobs/index.ts).
// Waiting is polling with a growing pause, since another instance's release cannot be heard; a release on this
// instance wakes this instance's waiters of that key at once, so an instance alone (the embedded default) never waits
// for a pause to end.
import { randomUUID } from 'node:crypto'
import type { Store } from './types.ts'

/** A slot's lease: renewed every third of it while held; a crashed instance's lapses after it. */
export const SLOT_LEASE_MS = 10_000
/** How long a waiter sleeps between tries, at first and at most. */
const WAIT_MIN_MS = 25
const WAIT_MAX_MS = 250

export interface SlotLease {
  /** Gives the slot back (once; later calls do nothing). A failure to tell the Store is `onReleaseError`'s: the lease lapses. */
  release (): void
}

export interface SlotLeases {
  /** Waits for one of `limit` slots of `key` until `signal` aborts (rejects with its reason, or the Store's error). */
  acquire (key: string, limit: number, signal: AbortSignal): Promise<SlotLease>
  /** The same, giving up at `giveUpAt` (epoch ms): undefined then. */
  acquireBy (key: string, limit: number, signal: AbortSignal, giveUpAt: number): Promise<SlotLease | undefined>
  /** Stops renewing every lease (the instance is closing: its leases lapse). */
  close (): void
}

export interface SlotLeasesOptions {
  leaseMs?: number
  onReleaseError?: (err: unknown) => void
  now?: () => number
}

export function createSlotLeases (store: Store, options: SlotLeasesOptions = {}): SlotLeases {
  const leaseMs = options.leaseMs ?? SLOT_LEASE_MS
  const now = options.now ?? Date.now
  /** This instance's waiters, by key: a local release wakes them. */
  const waiters = new Map<string, Set<() => void>>()
  const renewals = new Set<NodeJS.Timeout>()

  function wake (key: string): void {
    const woken = waiters.get(key)
    if (woken === undefined) return
    waiters.delete(key)
    for (const resume of woken) resume()
  }

  /** Sleeps `ms`, or less when a local release of `key` comes first; rejects when `signal` aborts. */
  function pause (key: string, ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const set = waiters.get(key) ?? new Set<() => void>()
      waiters.set(key, set)
      const done = (): void => {
        clearTimeout(timer)
        signal.removeEventListener('abort', onAbort)
        set.delete(done)
        if (set.size === 0 && waiters.get(key) === set) waiters.delete(key)
        resolve()
      }
      const onAbort = (): void => { done(); reject(signal.reason) }
      const timer = setTimeout(done, ms)
      set.add(done)
      signal.addEventListener('abort', onAbort, { once: true })
    })
  }

  function hold (key: string, token: string): SlotLease {
    const renew = setInterval(() => { store.renewSlot(key, token, leaseMs).catch(() => {}) }, leaseMs / 3)
    renew.unref()
    renewals.add(renew)
    let released = false
    return {
      release () {
        if (released) return
        released = true
        clearInterval(renew)
        renewals.delete(renew)
        store.releaseSlot(key, token).then(() => { wake(key) }, (err: unknown) => {
          options.onReleaseError?.(err)
          wake(key)
        })
      }
    }
  }

  async function take (key: string, limit: number, signal: AbortSignal, giveUpAt: number): Promise<SlotLease | undefined> {
    const token = randomUUID()
    for (let wait = WAIT_MIN_MS; ; wait = Math.min(WAIT_MAX_MS, wait * 2)) {
      signal.throwIfAborted()
      if (await store.takeSlot(key, token, limit, leaseMs)) return hold(key, token)
      const left = giveUpAt - now()
      if (left <= 0) return undefined
      // A little jitter, so that waiters of several instances do not ask in step.
      await pause(key, Math.min(left, wait * (0.75 + Math.random() / 2)), signal)
    }
  }

  return {
    async acquire (key, limit, signal) {
      const lease = await take(key, limit, signal, Infinity)
      if (lease === undefined) throw new Error('a slot wait without an end gave up')
      return lease
    },
    acquireBy: take,
    close () {
      for (const renew of renewals) clearInterval(renew)
      renewals.clear()
    }
  }
}
