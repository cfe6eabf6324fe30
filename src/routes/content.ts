// The content endpoints (docs/api.md §14): GET and HEAD /markdown, /text and /html, in query form
// (`/markdown?url=...`) and path form (`/markdown/<target>`). Thin: each stands for a `GET /` query
// (schemas/content-query.ts) served by the same code as GET / (routes/serve.ts), so plan, quota, cache, single flight
// and headers are the same, and the cache entry is the JSON form's; only the answer's type and headers differ.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { AppContext } from '../context.ts'
import type { Plan } from '../config.ts'
import { sendServed, type TextAnswer } from '../http/reply.ts'
import { contentPathQuery, type ContentAttr } from '../schemas/content-query.ts'
import { memoContentQuery } from '../query/content.ts'
import { countTokens } from '../extract/tokens.ts'
import { rawQueryOf } from './extract.ts'
import type { SendServed, Serve } from './serve.ts'

export const ANSWERS: Readonly<Record<ContentAttr, TextAnswer>> = {
  markdown: {
    type: 'text/markdown; charset=utf-8',
    headers: async (body) => ({ 'x-markdown-tokens': String(await countTokens(body)) })
  },
  text: { type: 'text/plain; charset=utf-8' },
  html: { type: 'text/html; charset=utf-8' }
}

/** The raw path after `/<attr>/`, the target's own query string and encoding kept. */
function pathTarget (request: FastifyRequest, attr: ContentAttr): string {
  const prefix = `/${attr}/`
  if (request.url.startsWith(prefix)) return request.url.slice(prefix.length)
  return (request.params as { '*'?: string })['*'] ?? ''
}

export async function contentRoutes (app: FastifyInstance, { ctx, serve }: { ctx: AppContext, plan: Plan, serve: Serve }): Promise<void> {
  for (const attr of Object.keys(ANSWERS) as ContentAttr[]) {
    const answer = ANSWERS[attr]
    const send: SendServed = async (reply, served, options, signal) => await sendServed(ctx, reply, served, options, signal, answer)
    app.get(`/${attr}`, async (request, reply) => await serve(request, reply, () => memoContentQuery(rawQueryOf(request.url), attr), send))
    app.get(`/${attr}/*`, async (request, reply) => await serve(request, reply, () => contentPathQuery(pathTarget(request, attr), attr), send))
  }
}
