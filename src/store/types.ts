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

/** What countUsage did: the counts after it (unchanged when refused), and which limit refused it. */
export interface UsageCount {
  /** The limit that was already reached (the request was then not counted). */
  refused?: 'daily' | 'monthly'
  day: number
  month: number
}

/** The counters of one tenant's request: its day and its month, with their limits (0: none) and lifetimes. */
export interface UsageKeys {
  dayKey: string
  monthKey: string
  daily: number
  monthly: number
  /** How long the day's counter is kept (the usage history reads 31 of them). */
  dayTtlMs: number
  monthTtlMs: number
  /** Requests counted in this one step (1 by default): requests of a plan with no limit are counted in batches. */
  count?: number
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
  /**
   * Counts one request in a day counter and a month counter together, in one atomic step (one script on Redis): when
   * either is at its limit, neither is counted. The two keys must share a hash tag (one Cluster slot).
   */
  countUsage (keys: UsageKeys): Promise<UsageCount>
  /** The values of counters (0 when absent), in one round trip; the keys must share a hash tag. */
  readCounts (keys: readonly string[]): Promise<number[]>
  /**
   * Takes one of `limit` slots at `key` for `token`, leased for leaseMs (a crashed holder's lease lapses): false
   * when every slot is held. Expired leases are dropped in the same atomic step.
   */
  takeSlot (key: string, token: string, limit: number, leaseMs: number): Promise<boolean>
  /** Extends the token's lease to leaseMs from now; false when it lapsed. */
  renewSlot (key: string, token: string, leaseMs: number): Promise<boolean>
  releaseSlot (key: string, token: string): Promise<void>
  /** The slots held now (leases not lapsed). */
  slotsHeld (key: string): Promise<number>
  health (): Promise<boolean>
  close (): Promise<void>
}
