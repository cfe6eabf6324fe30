// /docs (HTML, with the playground for this listener's plan) and /openapi.json, both rendered once from the
// parameter table and the error catalog.
import type { FastifyInstance } from 'fastify'
import type { Plan } from '../config.ts'
import { DOCS_CSP, renderDocs } from '../docs/html.ts'
import { openApiDocument } from '../docs/openapi.ts'
import { JSON_TYPE } from '../http/reply.ts'

export async function docsRoutes (app: FastifyInstance, { plan }: { plan: Plan }): Promise<void> {
  const html = renderDocs(plan)
  const openapi = JSON.stringify(openApiDocument())
  app.get('/docs', async (_request, reply) => await reply
    .header('content-security-policy', DOCS_CSP)
    .type('text/html; charset=utf-8')
    .send(html))
  app.get('/openapi.json', async (_request, reply) => await reply.type(JSON_TYPE).send(openapi))
}
