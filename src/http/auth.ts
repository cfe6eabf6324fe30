// Who a pro request is: the tenant of its `x-api-key` (src/tenants/, docs/api.md §16). The presented key is hashed
// once and looked up in the directory's Map of digests; it is not kept beyond the request, and no error, log line
// or metric carries it or its hash.
import { AppError } from '../errors.ts'
import type { Caller, Tenant, TenantDirectory } from '../tenants/types.ts'

/** The tenant of a presented key, or EAUTH naming what is wrong (the header missing, or the key unknown). */
export function tenantOf (tenants: TenantDirectory, presented: string | undefined): Tenant {
  const tenant = presented === undefined ? undefined : tenants.byKey(presented)
  if (tenant === undefined) {
    throw new AppError('EAUTH', { data: { 'x-api-key': presented === undefined ? 'The header is missing.' : 'The key is not registered.' } })
  }
  return tenant
}

/** The Caller of a pro request presenting `key` (EAUTH when it is no tenant's). */
export function proCaller (tenants: TenantDirectory, key: string | undefined): Caller {
  return { listener: 'pro', tenant: tenantOf(tenants, key) }
}
