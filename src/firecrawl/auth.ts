// Who a Firecrawl request is (docs/firecrawl.md#auth). Pro listener: `Authorization: Bearer <key>` or `x-api-key`,
// the same keys, tenants and plans as `GET /`; missing or unknown: 401 Unauthorized. Free listener: keyless, the
// client's address as its quota subject; a key sent there is ignored (Firecrawl's clients send one whatever the
// server), never checked and never logged.
import type { FastifyRequest } from 'fastify'
import type { AppContext } from '../context.ts'
import type { Plan } from '../config.ts'
import type { Caller, Tenant } from '../tenants/types.ts'
import { AppError } from '../errors.ts'
import { headerValue } from '../routes/serve.ts'

/** The key a request presents: the bearer token, else `x-api-key`; undefined when neither (or an empty one). */
export function presentedKey (request: Pick<FastifyRequest, 'headers'>): string | undefined {
  const authorization = headerValue(request.headers.authorization)
  const bearer = authorization === undefined ? undefined : /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1]
  const key = bearer ?? headerValue(request.headers['x-api-key'])
  return key === undefined || key.trim() === '' ? undefined : key.trim()
}

/** API_KEYS' keys form one tenant without limits until KEYS_FILE tenants exist (docs/api.md §16). */
const DEFAULT_TENANT: Tenant = { name: 'default', plan: {}, signing: [] }

/**
 * The tenant of a key, or undefined. The one place that asks the key store: when the tenant directory arrives
 * (src/tenants/), this becomes its `byKey`.
 */
export function tenantOf (ctx: AppContext, key: string): Tenant | undefined {
  return ctx.verifyKey(key) ? DEFAULT_TENANT : undefined
}

/** The caller of a request on `listener`; 401 (EAUTH) on pro without a registered key. */
export function callerOf (ctx: AppContext, listener: Plan, request: Pick<FastifyRequest, 'headers' | 'ip'>): Caller {
  // The address as the listener trusts it (TRUST_PROXY); the quota derives its subject from it (http/client-ip.ts).
  if (listener === 'free') return { listener, client: request.ip }
  const key = presentedKey(request)
  const tenant = key === undefined ? undefined : tenantOf(ctx, key)
  if (tenant === undefined) {
    throw new AppError('EAUTH', { data: { authorization: key === undefined ? 'No key was sent.' : 'The key is not registered.' } })
  }
  return { listener, tenant }
}
