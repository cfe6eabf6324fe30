// /openapi.json through the real app: a valid OpenAPI 3.1 document listing every parameter of the
// generated reference (docs/reference/parameters.md) under the name a client sends, with its schema.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Validator } from '@seriousme/openapi-schema-validator'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PARAMETER_ROWS } from '../../src/docs/parameters.ts'
import { build, type Built } from '../helpers/build.ts'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

/** The parameter names of the reference's tables (the first backticked cell of each row). */
function referenceNames (): string[] {
  const text = readFileSync(path.join(root, 'docs/reference/parameters.md'), 'utf8')
  return [...text.matchAll(/^\| `([^`]+)` \|/gm)].map((match) => match[1] ?? '')
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
