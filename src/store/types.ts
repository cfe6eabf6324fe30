// The store family's contract: what every backend is and gives. The factory (index.ts) and the backends (memory.ts,
// redis.ts, hit-batches.ts) import it; it imports none of them.
export interface WindowHit {
  /** False when the limit was already reached; the hit was then not counted. */
  allowed: boolean
  /** Requests counted in the window, this one included when allowed. */
  count: number
  /** Epoch ms when the window ends. */
  resetAt: number
}

/** What readOrLock found: the value, or none and whether the lock was taken (its token) or is held by another (null). */
export type ReadOrLock = { value: string } | { value: null, token: string | null }

export interface Store {
  readonly kind: 'redis' | 'memory'
  get (key: string): Promise<string | null>
  /** Stores a value that expires after ttlMs. */
  set (key: string, value: string, ttlMs: number): Promise<void>
  del (key: string): Promise<void>
  /**
   * Counts one hit in a fixed window that starts at the key's first hit and lasts windowMs.
   * Atomic: concurrent callers never over-count or both pass the last slot.
   */
  hitWindow (key: string, limit: number, windowMs: number): Promise<WindowHit>
  /** SET NX PX: returns a token when the lock was taken, null when someone holds it. */
  acquireLock (key: string, ttlMs: number): Promise<string | null>
  /**
   * The value at `key` when there is one (no lock is taken); else acquireLock(`lockKey`, ttlMs), in the same atomic
   * step (one round trip on Redis). The two keys must share a hash tag, so that they are in one Cluster slot.
   */
  readOrLock (key: string, lockKey: string, ttlMs: number): Promise<ReadOrLock>
  /**
   * set(), then releaseLock(`lockKey`, token), in one atomic step (one round trip on Redis): whoever finds the lock
   * gone finds the value. The two keys must share a hash tag, so that they are in one Cluster slot.
   */
  setAndRelease (key: string, value: string, ttlMs: number, lockKey: string, token: string): Promise<void>
  /** Releases the lock only if the token still owns it. */
  releaseLock (key: string, token: string): Promise<void>
  /** Extends the lock to ttlMs from now if the token still owns it; false when it lapsed or another holds it. */
  renewLock (key: string, token: string, ttlMs: number): Promise<boolean>
  health (): Promise<boolean>
  close (): Promise<void>
}
