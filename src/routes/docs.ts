// /docs (HTML) and /openapi.json, both rendered once from the parameter table and the error catalog.
import type { FastifyInstance } from 'fastify'
import { renderDocs } from '../docs/html.ts'
import { openApiDocument } from '../docs/openapi.ts'

export async function docsRoutes (app: FastifyInstance): Promise<void> {
  const html = renderDocs()
  const openapi = JSON.stringify(openApiDocument())
  app.get('/docs', async (_request, reply) => await reply.type('text/html; charset=utf-8').send(html))
  app.get('/openapi.json', async (_request, reply) => await reply.type('application/json; charset=utf-8').send(openapi))
}
