// Who a Firecrawl request is (docs/firecrawl.md#auth). Pro listener: `Authorization: Bearer <key>` or `x-api-key`,
// the same keys, tenants and plans as `GET /`; missing or unknown: 401 Unauthorized. Free listener: keyless, the
// client's address as its quota subject; a key sent there is ignored (Firecrawl's clients send one whatever the
// server), never checked and never logged.
import type { FastifyRequest } from 'fastify'
import type { AppContext } from '../context.ts'
import type { Plan } from '../config.ts'
import type { Caller } from '../tenants/types.ts'
import { proCaller } from '../http/auth.ts'
import { headerValue } from '../routes/serve.ts'

/** The key a request presents: the bearer token, else `x-api-key`; undefined when neither (or an empty one). */
export function presentedKey (request: Pick<FastifyRequest, 'headers'>): string | undefined {
  const authorization = headerValue(request.headers.authorization)
  const bearer = authorization === undefined ? undefined : /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1]
  const key = bearer ?? headerValue(request.headers['x-api-key'])
  return key === undefined || key.trim() === '' ? undefined : key.trim()
}

/** The caller of a request on `listener`; 401 (EAUTH) on pro without a registered key. */
export function callerOf (ctx: AppContext, listener: Plan, request: Pick<FastifyRequest, 'headers' | 'ip'>): Caller {
  // The address as the listener trusts it (TRUST_PROXY); the quota derives its subject from it (http/client-ip.ts).
  if (listener === 'free') return { listener, client: request.ip }
  // The same tenants and plans as GET / (docs/api.md §16); EAUTH, which the envelope answers as 401 Unauthorized.
  return proCaller(ctx.tenants, presentedKey(request))
}
