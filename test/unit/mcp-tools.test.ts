// The MCP tools against docs/api.md §15: the nineteen names and each tool's input properties as the table lists
// them, schemas taken from the parameter table, and the `GET /` request each call stands for.
import { describe, expect, it } from 'vitest'
import { createMcpServer } from '../../src/mcp/server.ts'
import { callRequest, readArguments } from '../../src/mcp/calls.ts'
import { SHARED_PROPERTIES, TOOLS } from '../../src/mcp/tools.ts'
import { OPTION_NAMES, specOf, type OptionName } from '../../src/schemas/derived.ts'

/** docs/api.md §15, the table: each tool's own properties. */
const SECTION_15: Record<string, string[]> = {
  microlink_metadata: ['data', 'meta', 'palette'],
  microlink_logo: ['data', 'square', 'palette'],
  microlink_markdown: ['selector', 'selectorAll', 'type'],
  microlink_html: ['selector', 'selectorAll', 'type'],
  microlink_text: ['selector', 'selectorAll', 'type'],
  microlink_screenshot: ['data', 'screenshot'],
  microlink_pdf: ['data', 'pdf'],
  microlink_embed: ['data', 'maxWidth', 'maxHeight'],
  microlink_video: ['data', 'meta', 'video'],
  microlink_audio: ['data', 'meta', 'audio'],
  microlink_links: ['selector', 'selectorAll', 'attr', 'type'],
  microlink_images: ['selector', 'selectorAll', 'attr', 'type'],
  microlink_videos: ['selector', 'selectorAll', 'attr', 'type'],
  microlink_audios: ['selector', 'selectorAll', 'attr', 'type'],
  microlink_emails: ['selector', 'selectorAll', 'attr', 'type'],
  microlink_technologies: ['data'],
  microlink_lighthouse: ['data', 'onlyCategories', 'onlyAudits', 'skipAudits', 'output'],
  microlink_function: ['code', 'data'],
  microlink_extract: ['data', 'meta', 'palette', 'embed', 'function', 'iframe', 'ping', 'audio', 'video', 'pdf', 'screenshot', 'insights']
}
const SHARED = ['adblock', 'animations', 'cacheKey', 'click', 'colorScheme', 'device', 'filename', 'filter', 'force', 'headers',
  'javascript', 'mediaType', 'modules', 'prerender', 'proxy', 'retry', 'scripts', 'scroll', 'staleTtl', 'styles', 'timeout', 'ttl',
  'viewport', 'waitForSelector', 'waitForTimeout', 'waitUntil']

const server = createMcpServer({ name: 'test', version: '0', tools: TOOLS })
const prepared = (name: string) => {
  const tool = server.tools.get(name)
  if (tool === undefined) throw new Error(`no ${name}`)
  return tool
}

function requestOf (name: string, args: Record<string, unknown>, headers: Record<string, string> = {}): { query: string, headers: Record<string, unknown> } {
  const read = readArguments(prepared(name), args)
  if ('error' in read) throw new Error(read.error)
  const out = callRequest(prepared(name).tool, read.args, headers)
  return { query: decodeURIComponent(out.query), headers: out.headers }
}

describe('the tool list', () => {
  it('has the nineteen tools of §15, each with url, apiKey, its own properties and the shared ones', () => {
    expect([...server.tools.keys()].sort()).toEqual(Object.keys(SECTION_15).sort())
    expect([...SHARED_PROPERTIES]).toEqual(SHARED)
    for (const [name, own] of Object.entries(SECTION_15)) {
      const schema = prepared(name).definition.inputSchema
      expect(Object.keys(schema.properties as object).sort(), name).toEqual(['url', 'apiKey', ...own, ...SHARED].sort())
      expect(schema.required, name).toEqual(name === 'microlink_function' ? ['url', 'code'] : ['url'])
      expect(schema.additionalProperties).toBe(false)
    }
  })

  it('takes each parameter\'s schema from the parameter table', () => {
    const names = new Set<string>(OPTION_NAMES)
    for (const { definition } of server.tools.values()) {
      for (const [property, schema] of Object.entries(definition.inputSchema.properties as Record<string, Record<string, unknown>>)) {
        if (!names.has(property) || property === 'headers') continue
        const doc = specOf(property as OptionName).doc
        // A type array is listed as anyOf branches (portableSchema): the same types.
        const listed = Array.isArray(schema.anyOf) ? (schema.anyOf as Array<{ type?: unknown }>).map((branch) => branch.type) : schema.type
        expect(listed, `${definition.name}.${property}`).toEqual(doc.schema.type)
        expect(schema.description, `${definition.name}.${property}`).toBe(doc.description)
      }
    }
    const screenshot = prepared('microlink_screenshot').definition.inputSchema.properties as Record<string, { properties?: Record<string, { enum?: unknown[] }> }>
    // pagecast takes more than Microlink here, and the schema says so.
    expect(screenshot.screenshot?.properties?.type?.enum).toEqual(['png', 'jpeg', 'webp'])
  })

  it('lists input schemas every client takes: what the MCP inspector\'s --strict mode checks finds nothing', () => {
    // @modelcontextprotocol/inspector 2.12 (core/json/schemaLint.ts) warns on a `type` array (type-union), a schema
    // that constrains nothing (untyped-schema), a bare boolean where a schema goes (boolean-schema) and a remote
    // $ref: 301 findings before (300 type arrays, 1 untyped Lighthouse setting). Its rules, walked the same way.
    const findings: string[] = []
    const CONSTRAINS = new Set(['type', 'enum', 'const', 'multipleOf', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum',
      'maxLength', 'minLength', 'pattern', 'format', 'contentMediaType', 'contentEncoding', 'contentSchema', 'maxItems', 'minItems',
      'uniqueItems', 'maxContains', 'minContains', 'maxProperties', 'minProperties', 'required', 'dependentRequired', 'allOf', 'anyOf',
      'oneOf', 'not', 'items', 'prefixItems', 'contains', 'additionalItems', 'unevaluatedItems', 'properties', 'patternProperties',
      'additionalProperties', 'unevaluatedProperties', 'propertyNames', 'dependentSchemas', 'dependencies', '$ref', '$dynamicRef', '$recursiveRef'])
    const BOOLEAN_OK = new Set(['additionalProperties', 'unevaluatedProperties', 'additionalItems', 'unevaluatedItems'])
    const walk = (node: unknown, at: string, keyword?: string): void => {
      if (typeof node === 'boolean') {
        if (keyword === undefined || !BOOLEAN_OK.has(keyword)) findings.push(`${at}: boolean-schema`)
        return
      }
      if (node === null || typeof node !== 'object' || Array.isArray(node)) return
      const schema = node as Record<string, unknown>
      if (Array.isArray(schema.type)) findings.push(`${at}: type-union`)
      if (typeof schema.$ref === 'string' && !schema.$ref.startsWith('#')) findings.push(`${at}: remote-ref`)
      if (keyword !== 'not' && !Object.keys(schema).some((key) => CONSTRAINS.has(key)) && !('if' in schema && ('then' in schema || 'else' in schema))) {
        findings.push(`${at}: untyped-schema`)
      }
      for (const key of ['properties', 'patternProperties', 'dependentSchemas', 'dependencies', '$defs', 'definitions']) {
        const map = schema[key]
        if (map !== null && typeof map === 'object' && !Array.isArray(map)) for (const [name, kid] of Object.entries(map)) walk(kid, `${at}.${key}.${name}`, key)
      }
      for (const key of ['allOf', 'anyOf', 'oneOf', 'prefixItems']) {
        const list = schema[key]
        if (Array.isArray(list)) list.forEach((kid, i) => { walk(kid, `${at}.${key}[${i}]`, key) })
      }
      for (const key of ['items', 'contains', 'not', 'propertyNames', 'if', 'then', 'else', 'additionalProperties', 'unevaluatedProperties', 'additionalItems', 'unevaluatedItems', 'contentSchema']) {
        if (!(key in schema)) continue
        const kid = schema[key]
        if (key === 'items' && Array.isArray(kid)) kid.forEach((item, i) => { walk(item, `${at}.items[${i}]`, key) })
        else walk(kid, `${at}.${key}`, key)
      }
    }
    // As tools/list sends them (JSON), for every tool.
    const listed = JSON.parse(JSON.stringify([...server.tools.values()].map(({ definition }) => definition))) as Array<{ name: string, inputSchema: unknown }>
    expect(listed).toHaveLength(19)
    for (const tool of listed) walk(tool.inputSchema, tool.name)
    expect(findings).toEqual([])
  })

  it('validates the same values through the listed anyOf branches as through the type arrays', () => {
    // `timeout` takes a number or a string; `click` a string or a list of them; neither takes an object.
    expect(readArguments(prepared('microlink_metadata'), { url: 'https://example.com', timeout: 5000, click: ['a', 'b'] })).not.toHaveProperty('error')
    expect(readArguments(prepared('microlink_metadata'), { url: 'https://example.com', timeout: '5s', click: 'a' })).not.toHaveProperty('error')
    expect(readArguments(prepared('microlink_metadata'), { url: 'https://example.com', click: { a: 1 } })).toHaveProperty('error')
    expect(readArguments(prepared('microlink_metadata'), { url: 'https://example.com', click: [1] })).toHaveProperty('error')
  })

  it('coerces lenient inputs and refuses what the schema does not take', () => {
    expect(readArguments(prepared('microlink_embed'), { url: 'https://a.example/', maxWidth: '400', prerender: 'TRUE', timeout: '10s' }))
      .toEqual({ args: { url: 'https://a.example/', maxWidth: 400, prerender: true, timeout: '10s' } })
    expect(readArguments(prepared('microlink_pdf'), { url: 'https://a.example/', pdf: '{"landscape":"true"}' }))
      .toEqual({ args: { url: 'https://a.example/', pdf: { landscape: true } } })
    expect(readArguments(prepared('microlink_pdf'), { url: 'https://a.example/', pdf: '{"landscape":' })).toHaveProperty('error')
    expect(readArguments(prepared('microlink_text'), { url: 'https://a.example/', unknown: 1 })).toHaveProperty('error')
    const poisoned = readArguments(prepared('microlink_metadata'), JSON.parse('{"url":"https://a.example/","data":{"__proto__":{"x":{"attr":"text"}}}}') as Record<string, unknown>)
    expect(({} as Record<string, unknown>).x).toBeUndefined()
    expect(poisoned).toHaveProperty('args')
  })
})

describe('the request each tool makes', () => {
  const url = 'https://a.example/'
  it.each([
    ['microlink_metadata', { url, palette: true }, 'url=https://a.example/&palette=true'],
    ['microlink_logo', { url, square: true }, 'url=https://a.example/&meta.logo.square=true'],
    ['microlink_logo', { url }, 'url=https://a.example/&meta=true'],
    ['microlink_markdown', { url, selector: 'main' }, 'url=https://a.example/&meta=false&data.markdown.attr=markdown&data.markdown.selector=main'],
    ['microlink_screenshot', { url }, 'url=https://a.example/&meta=false&screenshot=true'],
    ['microlink_screenshot', { url, screenshot: { type: 'webp', overlay: { browser: 'dark' } } }, 'url=https://a.example/&meta=false&screenshot.type=webp&screenshot.overlay.browser=dark'],
    ['microlink_pdf', { url, pdf: { format: 'A3' } }, 'url=https://a.example/&meta=false&pdf.format=A3'],
    ['microlink_embed', { url, maxWidth: 400 }, 'url=https://a.example/&meta=false&iframe.maxWidth=400'],
    ['microlink_video', { url, meta: true }, 'url=https://a.example/&meta=true&video=true'],
    ['microlink_links', { url, selectorAll: 'main a' }, 'url=https://a.example/&meta=false&data.links.selectorAll=main a&data.links.attr=href&data.links.type=url'],
    ['microlink_emails', { url }, 'url=https://a.example/&meta=false&data.emails.attr=html&data.emails.type=email'],
    ['microlink_technologies', { url }, 'url=https://a.example/&meta=false&insights.technologies=true&insights.lighthouse=false'],
    ['microlink_lighthouse', { url, onlyCategories: ['performance'] }, 'url=https://a.example/&meta=false&insights.technologies=false&insights.lighthouse.onlyCategories.0=performance'],
    ['microlink_function', { url, code: '() => 1' }, 'url=https://a.example/&meta=false&function=() => 1'],
    ['microlink_extract', { url, waitUntil: ['load', 'networkidle0'] }, 'url=https://a.example/&meta=false&waitUntil.0=load&waitUntil.1=networkidle0']
  ])('%s %j', (name, args, query) => {
    expect(requestOf(name, args).query).toBe(query)
  })

  it('never puts the key in the query, and sends only x-api-header-* entries of `headers`, as request headers', () => {
    const out = requestOf('microlink_text', { url, apiKey: 'secret', headers: { 'X-Api-Header-Cookie': 'a=1', 'user-agent': 'x' } }, { 'x-api-header-accept-language': 'fr', 'x-api-key': 'secret' })
    expect(out.query).not.toContain('secret')
    expect(out.headers).toEqual({ 'x-api-header-accept-language': 'fr', 'x-api-header-cookie': 'a=1' })
  })
})
