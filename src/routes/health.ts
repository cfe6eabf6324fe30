// Operations: /health (the process runs) and /ready (the components answer). Never counted or cached.
import type { FastifyInstance } from 'fastify'
import type { AppContext } from '../context.ts'

export async function healthRoutes (app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  app.get('/health', async (_request, reply) => {
    return await reply.type('application/json; charset=utf-8').send({ status: 'ok' })
  })

  app.get('/ready', async (_request, reply) => {
    const [store, storage] = ctx.closing ? [false, false] : await Promise.all([ctx.store.health(), ctx.storage.health()])
    const checks: Record<string, 'ok' | 'error'> = {
      browser: !ctx.closing && ctx.browser.health() ? 'ok' : 'error',
      store: store ? 'ok' : 'error',
      storage: storage ? 'ok' : 'error'
    }
    if (ctx.closing) checks.service = 'error'
    const ok = Object.values(checks).every(v => v === 'ok')
    return await reply.code(ok ? 200 : 503).type('application/json; charset=utf-8').send({ status: ok ? 'ok' : 'error', checks })
  })
}
