// The tenants of a shared service (docs/api.md §16): who a pro request is, and what its plan allows. Declared in
// KEYS_FILE (or API_KEYS, as one tenant named `default` with no limits); looked up by the SHA-256 of a presented key.
// This file holds only the types, so the directory, the limiter, the signed-link check and the routes that use them
// import from here and never from each other's backends.

/** A plan's limits; an absent field is no limit. */
export interface TenantPlan {
  /** Requests per UTC calendar day. */
  readonly daily?: number
  /** Requests per UTC calendar month. */
  readonly monthly?: number
  /** Requests of the tenant computed at once (cache hits excluded), across every instance. */
  readonly concurrency?: number
  /** The largest `ttl` the tenant may ask for, in milliseconds. */
  readonly maxTtl?: number
  /** Parameter names (dotted prefixes: `insights` covers `insights.lighthouse`) the tenant may not use. */
  readonly deny?: readonly string[]
}

export interface Tenant {
  /** The tenant's name as declared: the label of its metrics and the `keyId` of its signed links. */
  readonly name: string
  readonly plan: TenantPlan
  /** HMAC-SHA256 secrets of its signed links, newest last; several during a rotation. */
  readonly signing: readonly string[]
  /** The secret its webhooks are signed with (§17), when declared. */
  readonly webhookSecret?: string
}

/** The declared tenants, kept current (KEYS_FILE is read again within 2 s of a change). */
export interface TenantDirectory {
  /** The tenant a presented key belongs to: one hash and one map lookup, never a scan. */
  byKey (presented: string): Tenant | undefined
  /** The tenant of a name (a signed link's `keyId`). */
  byName (name: string): Tenant | undefined
  /** Whether any tenant is declared (no tenants: the pro listener refuses every key). */
  readonly size: number
  close (): void
}

/** Who an API request is: the listener it came in on, its tenant on the pro listener, its quota subject on the free. */
export interface Caller {
  readonly listener: 'free' | 'pro'
  /** The tenant (pro listener: by key, bearer token or signed link). */
  readonly tenant?: Tenant
  /** The free listener's quota subject (the client address as the quota sees it). */
  readonly client?: string
}
