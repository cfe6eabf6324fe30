// GET /metrics: Prometheus text from the context's own registry. Never counted, rate-limited or cached.
import type { FastifyInstance } from 'fastify'
import type { AppContext } from '../context.ts'

export async function metricsRoutes (app: FastifyInstance, { ctx }: { ctx: AppContext }): Promise<void> {
  app.get('/metrics', async (_request, reply) => {
    const { contentType, body } = await ctx.metrics.scrape()
    return await reply.type(contentType).header('cache-control', 'no-store').send(body)
  })
}
