// /openapi.json through the real app: a valid OpenAPI 3.1 document listing every parameter of the
// generated reference (docs/reference/parameters.md) under the name a client sends, with its schema.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Validator } from '@seriousme/openapi-schema-validator'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PARAMETER_ROWS } from '../../src/docs/parameters.ts'
import { BATCH_BODY_SCHEMA, CRAWL_BODY_SCHEMA } from '../../src/schemas/firecrawl-jobs.ts'
import { build, type Built } from '../helpers/build.ts'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

/** The parameter names of the reference's tables (the first backticked cell of each row). */
function referenceNames (): string[] {
  const text = readFileSync(path.join(root, 'docs/reference/parameters.md'), 'utf8')
  return [...text.matchAll(/^\| `([^`]+)` \|/gm)].map((match) => match[1] ?? '')
}

/**
 * Every route Fastify registered, from its own route tree (printRoutes): each line's segment is appended to its
 * parent's path; HEAD (added by Fastify for each GET) and the OPTIONS preflight are left out.
 */
function registeredRoutes (app: FastifyInstance): Array<{ method: string, path: string }> {
  const routes: Array<{ method: string, path: string }> = []
  const stack: string[] = []
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^((?:│ {3}| {4})*)[├└]── (.+?)(?: \(([A-Z, ]+)\))?$/.exec(line)
    if (match === null) continue
    const depth = (match[1] ?? '').length / 4
    const path = (depth === 0 ? '' : stack[depth - 1] ?? '') + (match[2] ?? '')
    stack[depth] = path
    for (const method of (match[3] ?? '').split(', ')) if (method !== '' && method !== 'HEAD' && method !== 'OPTIONS') routes.push({ method, path })
  }
  return routes
}

interface OpenApiParameter { name: string, in: string, schema: unknown, 'x-name-pattern'?: string }

let app: Built

beforeAll(async () => {
  app = await build()
})

afterAll(async () => {
  await app?.close()
})

describe('/openapi.json', () => {
  it('is a valid OpenAPI 3.1 document on both listeners', async () => {
    for (const instance of [app.free, app.pro]) {
      const res = await instance.inject('/openapi.json')
      expect(res.statusCode).toBe(200)
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
      const validator = new Validator()
      const result = await validator.validate(res.json())
      expect(result.errors ?? [], JSON.stringify(result.errors)).toEqual([])
      expect(result.valid).toBe(true)
      expect(validator.version).toBe('3.1')
    }
  })

  it('passes what redocly\'s recommended rules ask: servers, a licence, a unique operationId per operation, no HTML tags', async () => {
    // `npx @redocly/cli lint` on this document: 1 error and 16 warnings before, clean now. Its rules, checked here.
    const doc = (await app.pro.inject('/openapi.json')).json()
    expect(doc.servers).toEqual([expect.objectContaining({ url: '/' })])
    expect(doc.info.license).toMatchObject({ name: 'MIT' })
    const operations = Object.values(doc.paths as Record<string, Record<string, { operationId?: string }>>).flatMap((item) => Object.values(item))
    expect(operations.length).toBeGreaterThanOrEqual(7)
    const ids = operations.map((operation) => operation.operationId)
    for (const id of ids) expect(id).toMatch(/^[A-Za-z][A-Za-z0-9]*$/)
    expect(new Set(ids).size).toBe(ids.length)
    expect(JSON.stringify(doc)).not.toMatch(/<script/i)
  })

  it('has an operation for each Firecrawl route Fastify registered under /v1 and /v2, on both listeners', async () => {
    for (const instance of [app.free, app.pro]) {
      const doc = (await instance.inject('/openapi.json')).json()
      const routes = registeredRoutes(instance).filter(r => /^\/v[12]\//.test(r.path))
      // The tree is read right: the job routes and their parametric paths are among them.
      expect(routes).toContainEqual({ method: 'DELETE', path: '/v2/crawl/:id' })
      expect(routes).toContainEqual({ method: 'GET', path: '/v1/batch/scrape/:id/errors' })
      expect(routes).toContainEqual({ method: 'GET', path: '/v2/crawl/ongoing' })
      expect(routes.length).toBeGreaterThanOrEqual(27)
      // Each `//v2/…` alias is the same route as its `/v2/…` (documented in the operation's description).
      const aliases = registeredRoutes(instance).filter(r => /^\/\/v[12]\//.test(r.path))
      expect(aliases.map(r => `${r.method} ${r.path.slice(1)}`).sort()).toEqual(routes.map(r => `${r.method} ${r.path}`).sort())
      const missing = routes.filter(r => doc.paths[r.path.replace(/:(\w+)/g, '{$1}')]?.[r.method.toLowerCase()] === undefined)
      expect(missing).toEqual([])
      // And nothing documented under /v1|v2 that is not served.
      const served = new Set(routes.map(r => `${r.method.toLowerCase()} ${r.path.replace(/:(\w+)/g, '{$1}')}`))
      const documented = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
        .filter(([path]) => /^\/v[12]\//.test(path)).flatMap(([path, item]) => Object.keys(item).map(method => `${method} ${path}`))
      expect(documented.filter(op => !served.has(op))).toEqual([])
    }
  })

  it('describes the job routes with the schemas Fastify checks their bodies with', async () => {
    const doc = (await app.pro.inject('/openapi.json')).json()
    expect(doc.paths['/v2/crawl'].post.requestBody.content['application/json'].schema).toEqual(JSON.parse(JSON.stringify(CRAWL_BODY_SCHEMA)))
    expect(doc.paths['/v1/batch/scrape'].post.requestBody.content['application/json'].schema).toEqual(JSON.parse(JSON.stringify(BATCH_BODY_SCHEMA)))
    const status = doc.paths['/v2/crawl/{id}'].get
    expect(status.parameters.map((p: OpenApiParameter) => p.name)).toEqual(['id', 'skip'])
    expect(Object.keys(status.responses['200'].content['application/json'].schema.properties)).toEqual(expect.arrayContaining(['status', 'completed', 'total', 'creditsUsed', 'expiresAt', 'next', 'data']))
    expect(doc.paths['/v2/batch/scrape/{id}'].delete.responses['404']).toBeDefined()
  })

  it('lists every parameter of the generated reference with its schema', async () => {
    const doc = (await app.free.inject('/openapi.json')).json()
    const params = doc.paths['/'].get.parameters as OpenApiParameter[]
    const byName = new Map(params.filter((p) => p.in === 'query').map((p) => [p.name, p]))
    const names = referenceNames()
    expect(names.length).toBeGreaterThan(80)
    for (const name of ['screenshot.type', 'pdf.margin.top', 'data.<field>.selector', 'insights.lighthouse.preset', 'headers.<name>']) {
      expect(names).toContain(name)
    }
    for (const name of names) {
      const row = PARAMETER_ROWS.find((r) => r.name === name)
      expect(row, name).toBeDefined()
      expect(byName.get(name)?.schema, name).toEqual(row?.schema)
    }
    expect(byName.get('screenshot.type')?.schema).toEqual({ type: 'string', enum: ['png', 'jpeg', 'webp'], default: 'png' })
    expect(byName.get('pdf.scale')?.schema).toMatchObject({ minimum: 0.1, maximum: 2, default: 0.6 })
    expect(byName.get('data.<field>.selector')?.['x-name-pattern']).toBe('^data\\.[^.]+\\.selector$')
    expect(new RegExp(byName.get('data.<field>.selector')?.['x-name-pattern'] ?? '$^').test('data.title.selector')).toBe(true)
  })

  it('and /docs, built from the same rows, show them too', async () => {
    const html = (await app.pro.inject('/docs')).body
    for (const name of referenceNames()) expect(html, name).toContain(`<code>${name.replace(/</g, '&lt;').replace(/>/g, '&gt;')}</code>`)
  })
})
