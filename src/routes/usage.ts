// GET /usage on the pro listener (docs/api.md §16): the tenant of the presented key, its plan, its day and month so
// far, its computations in flight and 31 days of history. Not counted against the plan; never cached.
import type { FastifyInstance } from 'fastify'
import type { AppContext } from '../context.ts'
import { tenantOf } from '../http/auth.ts'
import { JSON_TYPE } from '../http/reply.ts'
import { headerValue } from './serve.ts'

export async function usageRoutes (app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  app.get('/usage', async (request, reply) => {
    const tenant = tenantOf(ctx.tenants, headerValue(request.headers['x-api-key']))
    const data = await ctx.limits.usage(tenant)
    if (data.day.limit !== null) {
      reply.headers({ 'x-rate-limit-limit': String(data.day.limit), 'x-rate-limit-remaining': String(data.day.remaining), 'x-rate-limit-reset': String(data.day.reset) })
    }
    return await reply.header('cache-control', 'no-store').type(JSON_TYPE).send({ status: 'success', data })
  })
}
