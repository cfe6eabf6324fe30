// GET / (and HEAD): the API. Thin: plan, quota, parse, then the use case and the reply (docs/api.md §1.4), all in
// the shared serve (routes/serve.ts); the content endpoints (routes/content.ts) use the same.
import type { FastifyInstance } from 'fastify'
import type { AppContext } from '../context.ts'
import type { Plan } from '../config.ts'
import { sendServed } from '../http/reply.ts'
import type { Serve } from './serve.ts'

export function rawQueryOf (url: string): string {
  const q = url.indexOf('?')
  return q === -1 ? '' : url.slice(q + 1)
}

export async function extractRoutes (app: FastifyInstance, { ctx, serve }: { ctx: AppContext, plan: Plan, serve: Serve }): Promise<void> {
  app.get('/', async (request, reply) => await serve(request, reply, () => rawQueryOf(request.url),
    async (r, served, options, signal) => await sendServed(ctx, r, served, options, signal)))
}
