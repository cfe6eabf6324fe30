// Operations: /health (the process runs) and /ready (whether this listener can serve: docs/api.md §12.2, decided in
// http/readiness.ts). Never counted or cached.
import type { FastifyInstance } from 'fastify'
import type { Plan } from '../config.ts'
import type { AppContext } from '../context.ts'
import { readiness } from '../http/readiness.ts'
import { JSON_TYPE } from '../http/reply.ts'

export async function healthRoutes (app: FastifyInstance, { ctx, plan }: { ctx: AppContext, plan: Plan }): Promise<void> {
  app.get('/health', async (_request, reply) => {
    return await reply.type(JSON_TYPE).send({ status: 'ok' })
  })

  app.get('/ready', async (_request, reply) => {
    const [store, storage] = await Promise.all([ctx.store.health(), ctx.storage.health()])
    const { httpStatus, body } = readiness({
      plan,
      closing: ctx.closing,
      browser: ctx.browser.readiness(),
      store,
      storage,
      quotaFailMode: ctx.config.quotaFailMode,
      freeDailyLimit: ctx.config.freeDailyLimit
    })
    return await reply.code(httpStatus).type(JSON_TYPE).send(body)
  })
}
