// POST /mcp (docs/api.md §15) with the official SDK's client over real listeners on loopback: the tool list, calls
// through the pipeline (metadata, markdown, screenshot, links), a blocked target, the pro key in both header forms
// and as an argument, the free quota counting calls, concurrent clients on the one server of a listener, SSE-only
// clients, and a browser's cross-origin POST (CORS).
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { build, type Built } from '../helpers/build.ts'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'
import { imageInfo } from '../helpers/images.ts'
import { launchTestBrowser } from '../helpers/chromium.ts'

const KEY = 'mcp-test-key'
let fx: FixtureServer
let app: Built
const base = { free: '', pro: '' }

beforeAll(async () => {
  fx = await startFixtureServer()
  app = await build({ API_KEYS: KEY, ALLOW_PRIVATE_HOSTS: fx.host, FREE_DAILY_LIMIT: '0', MAX_TIMEOUT: '55s' }) // Lighthouse with both cores busy can pass the 28 s default deadline
  base.free = await app.free.listen({ port: 0, host: '127.0.0.1' })
  base.pro = await app.pro.listen({ port: 0, host: '127.0.0.1' })
})

afterAll(async () => {
  await app?.close()
  await fx?.close()
})

async function connect (url: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'pagecast-test', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }))
  return client
}

async function call (client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return await client.callTool({ name, arguments: args }) as CallToolResult
}

function textOf (result: CallToolResult): unknown {
  const first = result.content[0]
  if (first?.type !== 'text') throw new Error('no text item')
  return JSON.parse(first.text)
}

describe('tools', () => {
  it('lists the tools with schemas, and answers metadata as the whole data', async () => {
    const client = await connect(base.free)
    try {
      const { tools } = await client.listTools()
      expect(tools).toHaveLength(19)
      const metadata = tools.find(t => t.name === 'microlink_metadata')
      expect(metadata?.inputSchema.required).toEqual(['url'])
      expect(metadata?.inputSchema.properties?.url).toMatchObject({ type: 'string', format: 'uri' })
      const result = await call(client, 'microlink_metadata', { url: `${fx.origin}/article/`, prerender: 'false' })
      expect(result.isError).toBeUndefined()
      const data = (result.structuredContent as { data: Record<string, unknown> }).data
      expect(data.title).toBe('Shipping faster')
      expect(textOf(result)).toEqual(data)
    } finally {
      await client.close()
    }
  })

  it('answers markdown as a string, from the same cache entry as GET / of the same request', async () => {
    const client = await connect(base.free)
    try {
      const url = `${fx.origin}/article/?md=1`
      const result = await call(client, 'microlink_markdown', { url, prerender: false })
      const value = (result.structuredContent as { data: unknown }).data
      expect(typeof value).toBe('string')
      expect(value).toContain('# Shipping faster')
      expect(textOf(result)).toBe(value)
      const hits = fx.hitsOf('/article/')
      const again = await app.free.inject({ url: `/?url=${encodeURIComponent(url)}&meta=false&data.markdown.attr=markdown&prerender=false` })
      expect(again.headers['x-cache-status']).toBe('HIT')
      expect(again.json().data.markdown).toBe(value)
      expect(fx.hitsOf('/article/')).toBe(hits)
    } finally {
      await client.close()
    }
  })

  it('answers links as an array, [] when the page has none, and accepts lenient inputs', async () => {
    const client = await connect(base.free)
    try {
      const links = await call(client, 'microlink_links', { url: `${fx.origin}/rules/`, prerender: 'FALSE' })
      expect(Array.isArray((links.structuredContent as { data: unknown }).data)).toBe(true)
      expect((links.structuredContent as { data: string[] }).data).toContain(`${fx.origin}/about`)
      fx.route('/bare/', (_req, res) => { res.writeHead(200, { 'content-type': 'text/html' }); res.end('<title>Bare</title><p>no links</p>') })
      const none = await call(client, 'microlink_links', { url: `${fx.origin}/bare/`, prerender: false, viewport: '{"width": 800}' })
      expect(none.structuredContent).toEqual({ data: [] })
    } finally {
      await client.close()
    }
  })

  it('answers a screenshot with its file and the image inline', async () => {
    const client = await connect(base.free)
    try {
      const result = await call(client, 'microlink_screenshot', { url: `${fx.origin}/article/`, screenshot: { type: 'jpeg' }, viewport: { width: 400, height: 300, deviceScaleFactor: 1 } })
      expect(result.isError).toBeUndefined()
      const file = (result.structuredContent as { data: { url: string, type: string, width: number } }).data
      expect(file).toMatchObject({ type: 'jpg', width: 400 })
      const image = result.content.find(item => item.type === 'image')
      if (image?.type !== 'image') throw new Error('no image item')
      expect(image.mimeType).toBe('image/jpeg')
      expect(imageInfo(Buffer.from(image.data, 'base64'))).toMatchObject({ width: 400, height: 300 })
    } finally {
      await client.close()
    }
  }, 60_000)

  it('answers the technologies detected, and the Lighthouse report (docs/api.md §3.4)', async () => {
    const client = await connect(base.free)
    try {
      const technologies = await call(client, 'microlink_technologies', { url: `${fx.origin}/article/` })
      // The article fixture has Open Graph tags and nothing else the fingerprint set knows.
      const detected = [{ name: 'Open Graph', confidence: 100, version: null, logo: null, url: 'https://ogp.me', categories: ['Miscellaneous'] }]
      expect(technologies).toMatchObject({ structuredContent: { data: detected } })
      expect(textOf(technologies)).toEqual(detected)
      const lighthouse = await call(client, 'microlink_lighthouse', { url: `${fx.origin}/article/`, onlyCategories: ['seo'] })
      expect(lighthouse.isError).toBeUndefined()
      const report = (lighthouse.structuredContent as { data: { requestedUrl: string, categories: Record<string, { score: unknown }> } }).data
      expect(report.requestedUrl).toBe(`${fx.origin}/article/`)
      expect(Object.keys(report.categories)).toEqual(['seo'])
      expect(typeof report.categories.seo?.score).toBe('number')
    } finally {
      await client.close()
    }
  }, 120_000)

  it('gives API errors as isError results with the envelope fields, and unknown tools and arguments as SDK errors', async () => {
    const client = await connect(base.free)
    try {
      const bad = await call(client, 'microlink_metadata', { url: 'ftp://example.com/' })
      expect(bad.isError).toBe(true)
      expect(bad.structuredContent).toEqual({ error: expect.objectContaining({ code: 'EINVALURL', status: 'fail', statusCode: 400 }) })
      const error = (bad.structuredContent as { error: { url: string, more: string } }).error
      expect(error.url).toBe(`${base.free}/?url=${encodeURIComponent('ftp://example.com/')}`)
      expect(error.more).toMatch(/#einvalurl$/)
      const unknown = await call(client, 'microlink_search', { url: fx.origin })
      expect(unknown).toMatchObject({ isError: true, content: [{ type: 'text', text: expect.stringContaining('Tool microlink_search not found') }] })
      for (const [name, args] of [
        ['microlink_metadata', { url: fx.origin, nope: 1 }],
        ['microlink_metadata', { url: 'no' }],
        ['microlink_metadata', { url: fx.origin, retry: 9 }],
        ['microlink_screenshot', { url: fx.origin, screenshot: { type: 'gif' } }],
        ['microlink_function', { url: fx.origin }]
      ] as const) {
        const invalid = await call(client, name, args)
        expect(invalid).toMatchObject({ isError: true, content: [{ text: expect.stringContaining('Input validation error') }] })
      }
      const gated = await call(client, 'microlink_metadata', { url: fx.origin, ttl: '1h' })
      expect(gated.structuredContent).toMatchObject({ error: { code: 'ETTL', statusCode: 403 } })
    } finally {
      await client.close()
    }
  })

  it('refuses a blocked target with no connection made', async () => {
    // A loopback server that is not in ALLOW_PRIVATE_HOSTS: the guard must refuse it before any connection.
    let connections = 0
    const blocked = http.createServer((_req, res) => { res.end('<title>x</title>') })
    blocked.on('connection', () => { connections++ })
    await new Promise<void>(resolve => blocked.listen(0, '127.0.0.2', resolve))
    const { port } = blocked.address() as AddressInfo
    const client = await connect(base.free)
    try {
      for (const name of ['microlink_metadata', 'microlink_markdown', 'microlink_screenshot']) {
        const result = await call(client, name, { url: `http://127.0.0.2:${port}/` })
        expect(result.isError).toBe(true)
        expect(result.structuredContent).toMatchObject({ error: { code: 'EFORBIDDENURL', statusCode: 400 } })
      }
      expect(connections).toBe(0)
    } finally {
      await client.close()
      await new Promise(resolve => blocked.close(resolve))
    }
  })
})

describe('plans', () => {
  it('takes the pro key as x-api-key, as a bearer token, or as the apiKey argument', async () => {
    for (const headers of [{ 'x-api-key': KEY }, { authorization: `Bearer ${KEY}` }] as Array<Record<string, string>>) {
      const client = await connect(base.pro, headers)
      try {
        const result = await call(client, 'microlink_text', { url: `${fx.origin}/article/`, prerender: false, selector: 'h1' })
        expect(result.structuredContent).toEqual({ data: 'Shipping faster' })
      } finally {
        await client.close()
      }
    }
    const byArgument = await postRaw(base.pro, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'microlink_text', arguments: { url: `${fx.origin}/article/`, prerender: false, selector: 'h1', apiKey: KEY } } })
    expect(byArgument.status).toBe(200)
    expect(JSON.parse(byArgument.body).result.structuredContent).toEqual({ data: 'Shipping faster' })
    expect(JSON.parse(byArgument.body).result.isError).toBeUndefined()
  })

  it('answers a missing or unknown pro key with HTTP 403 EAUTH, and never logs a key', async () => {
    for (const headers of [{}, { 'x-api-key': 'wrong' }, { authorization: 'Bearer wrong' }] as Array<Record<string, string>>) {
      const answer = await postRaw(base.pro, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, headers)
      expect(answer.status).toBe(403)
      expect(JSON.parse(answer.body)).toMatchObject({ code: 'EAUTH' })
    }
    const wrongArgument = await postRaw(base.pro, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'microlink_text', arguments: { url: fx.origin, apiKey: 'wrong-argument' } } }, { 'x-api-key': KEY })
    expect(wrongArgument.status).toBe(403)
    expect(app.rawLogs.join('\n')).not.toContain(KEY)
    expect(app.rawLogs.join('\n')).not.toContain('wrong-argument')
  })

  it('refuses a key on the free listener: EPRO over HTTP for a header, a tool error for the argument', async () => {
    const header = await postRaw(base.free, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { 'x-api-key': KEY })
    expect(header.status).toBe(400)
    expect(JSON.parse(header.body)).toMatchObject({ code: 'EPRO' })
    const argument = await postRaw(base.free, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'microlink_text', arguments: { url: fx.origin, apiKey: KEY } } })
    expect(argument.status).toBe(200)
    expect(JSON.parse(argument.body).result).toMatchObject({ isError: true, structuredContent: { error: { code: 'EPRO' } } })
    expect(JSON.parse(argument.body).result.structuredContent.error.url).not.toContain(KEY)
  })
})

async function postRaw (url: string, message: unknown, headers: Record<string, string> = {}): Promise<{ status: number, headers: Headers, body: string }> {
  const res = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(message)
  })
  return { status: res.status, headers: res.headers, body: await res.text() }
}

describe('the free quota', () => {
  it('counts each tools/call once, never initialize or tools/list, and spends into ERATE with a hint', async () => {
    const limited = await build({ ALLOW_PRIVATE_HOSTS: fx.host, FREE_DAILY_LIMIT: '2' })
    const url = await limited.free.listen({ port: 0, host: '127.0.0.1' })
    try {
      const client = await connect(url)
      await client.listTools()
      await client.listTools()
      const args = { url: `${fx.origin}/article/`, prerender: false }
      const first = await postRaw(url, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'microlink_metadata', arguments: args } })
      expect(first.headers.get('x-rate-limit-remaining')).toBe('1')
      const second = await call(client, 'microlink_metadata', args)
      expect(second.isError).toBeUndefined()
      const third = await call(client, 'microlink_metadata', args)
      expect(third.isError).toBe(true)
      const error = (third.structuredContent as { error: { code: string, statusCode: number, hint: string } }).error
      expect(error).toMatchObject({ code: 'ERATE', statusCode: 429 })
      expect(error.hint).toMatch(/resets at \d{4}-\d\d-\d\dT/)
      expect(error.hint).toContain('pro')
      // Listing still works with the quota spent.
      expect((await client.listTools()).tools).toHaveLength(19)
      const spent = await postRaw(url, { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'microlink_metadata', arguments: args } })
      expect(spent.status).toBe(200)
      expect(spent.headers.get('x-rate-limit-remaining')).toBe('0')
      await client.close()
    } finally {
      await limited.close()
    }
  })
})

describe('the route', () => {
  it('answers GET /mcp with 405 and bad bodies with coded JSON errors', async () => {
    const get = await fetch(`${base.free}/mcp`)
    expect(get.status).toBe(405)
    expect(get.headers.get('allow')).toBe('POST')
    expect(await get.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } })
    for (const [type, body, detail] of [
      ['application/json', '{"jsonrpc":', 'not valid JSON'],
      ['text/plain', 'hello', 'must be JSON'],
      ['application/json', JSON.stringify({ pad: 'x'.repeat(1024 * 1024) }), 'larger than']
    ] as const) {
      const res = await fetch(`${base.free}/mcp`, { method: 'POST', headers: { 'content-type': type }, body })
      expect(res.status).toBe(400)
      expect(await res.json()).toMatchObject({ code: 'EINVALQUERY', data: { body: expect.stringContaining(detail) } })
    }
  })

  it('answers deeply nested bodies and arguments with a validation error, never a stack overflow (issue 20)', async () => {
    const objects = (n: number): string => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`
    const call = (args: string): string => `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"microlink_metadata","arguments":{"url":"${fx.origin}/article/","prerender":false,${args}}}}`
    for (const [listener, headers] of [[base.free, {}], [base.pro, { 'x-api-key': KEY }]] as const) {
      // 10,000 levels in the body (objects, arrays; in the arguments, in params, at the top): the route's 400.
      for (const body of [call(`"data":${objects(10_000)}`), call(`"data":{"x":${'['.repeat(10_000)}${']'.repeat(10_000)}}`),
        `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":${'['.repeat(10_000)}${']'.repeat(10_000)}}`, `[${objects(10_000)}]`]) {
        const res = await fetch(`${listener}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body })
        const text = await res.text()
        expect(text).not.toMatch(/call stack/i)
        expect(res.status, text.slice(0, 300)).toBe(400)
        expect(JSON.parse(text)).toMatchObject({ code: 'EINVALQUERY', data: { body: expect.stringContaining('nest') } })
      }
      // An object-typed argument sent as a JSON string nested 5,000 deep: not parsed, so the arguments' validation says no.
      const res = await fetch(`${listener}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers }, body: call(`"data":${JSON.stringify(objects(5000))}`) })
      const text = await res.text()
      expect(text).not.toMatch(/call stack/i)
      expect(res.status).toBe(200)
      expect(JSON.parse(text).result).toMatchObject({ isError: true, content: [{ type: 'text', text: expect.stringContaining('Input validation error') }] })
    }
  })

  it('answers over SSE when the client takes only that', async () => {
    const res = await fetch(`${base.free}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' })
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/event-stream')
    const data = (await res.text()).split('\n').find(line => line.startsWith('data: '))
    expect(JSON.parse(data?.slice(6) ?? '{}')).toMatchObject({ id: 7, result: { tools: expect.any(Array) } })
  })
})

describe('one server for every POST', () => {
  it('serves concurrent SDK clients (all using the same ids) each its own answer', async () => {
    const count = 8
    for (let i = 0; i < count; i++) {
      fx.route(`/same-ids/${i}`, (_req, res) => {
        // The first pages answer last, so that answers cross.
        setTimeout(() => { res.writeHead(200, { 'content-type': 'text/html' }); res.end(`<title>Page ${i}</title>`) }, (count - i) * 15)
      })
    }
    const clients = await Promise.all(Array.from({ length: count }, async () => await connect(base.pro, { 'x-api-key': KEY })))
    try {
      const results = await Promise.all(clients.map(async (client, i) => await call(client, 'microlink_metadata', { url: `${fx.origin}/same-ids/${i}`, prerender: false })))
      results.forEach((result, i) => {
        expect(result.isError, JSON.stringify(result)).toBeUndefined()
        expect((result.structuredContent as { data: { title: string } }).data.title).toBe(`Page ${i}`)
      })
    } finally {
      await Promise.all(clients.map(async client => { await client.close() }))
    }
  })

  it('answers tools/call and a batch over SSE to a client that takes only that', async () => {
    const res = await fetch(`${base.free}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify([
        { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'microlink_text', arguments: { url: `${fx.origin}/article/`, prerender: false, selector: 'h1' } } },
        { jsonrpc: '2.0', id: 2, method: 'tools/list' }
      ])
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('text/event-stream')
    const messages = (await res.text()).split('\n').filter(line => line.startsWith('data: ')).map(line => JSON.parse(line.slice(6)) as { id: number, result: Record<string, unknown> })
    expect(messages.map(m => m.id).sort()).toEqual([1, 2])
    expect(messages.find(m => m.id === 1)?.result).toMatchObject({ structuredContent: { data: 'Shipping faster' } })
    expect(messages.find(m => m.id === 2)?.result).toMatchObject({ tools: expect.any(Array) })
  })
})

describe('answers in hand', () => {
  // A lone tools/call whose entry is held in process is answered without the SDK's dispatch (mcp/server.ts); a batch
  // of one takes the full way and answers with one object too. Both must be the same bytes, error results included.
  it('answers a call of an entry held in process with the bytes of the full way', async () => {
    const url = `${fx.origin}/article/?in-hand=1`
    const calls: Array<[string, Record<string, unknown>]> = [
      ['microlink_metadata', { url, prerender: false }],
      ['microlink_markdown', { url, prerender: 'false' }],
      ['microlink_links', { url, prerender: false, selectorAll: '.none a' }],
      ['microlink_extract', { url, prerender: false, meta: true, filter: 'title,lang' }],
      ['microlink_extract', { url, prerender: false, embed: 'nothing' }]
    ]
    const results: unknown[] = []
    for (const [i, [name, args]] of calls.entries()) {
      const message = (id: number | string): unknown => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } })
      const first = await postRaw(base.pro, message(i), { 'x-api-key': KEY })
      const inHand = await postRaw(base.pro, message(`in-hand-${i}`), { 'x-api-key': KEY })
      const full = await postRaw(base.pro, [message(`in-hand-${i}`)], { 'x-api-key': KEY })
      expect(inHand.status).toBe(200)
      expect(inHand.body).toBe(full.body)
      const { result } = JSON.parse(inHand.body) as { result: unknown }
      expect(result).toEqual((JSON.parse(first.body) as { result: unknown }).result)
      results.push(result)
    }
    expect(results).toMatchObject([
      { structuredContent: { data: { title: 'Shipping faster' } } },
      { structuredContent: { data: expect.stringContaining('# Shipping faster') } },
      { structuredContent: { data: [] } },
      { structuredContent: { data: { title: 'Shipping faster', lang: 'en' } } },
      { isError: true, structuredContent: { error: { code: 'ENOTFOUND' } } }
    ])
  })
})

describe('CORS', () => {
  const MCP_HEADERS = 'content-type, accept, authorization, x-api-key, mcp-session-id, mcp-protocol-version, last-event-id'

  it('allows POST and the MCP headers in a preflight of /mcp, and only there', async () => {
    for (const instance of [app.free, app.pro]) {
      const res = await instance.inject({
        method: 'OPTIONS',
        url: '/mcp',
        headers: { origin: 'https://agent.example', 'access-control-request-method': 'POST', 'access-control-request-headers': MCP_HEADERS }
      })
      expect(res.statusCode).toBe(204)
      expect(res.headers['access-control-allow-origin']).toBe('*')
      expect(res.headers['access-control-allow-methods']).toBe('GET, HEAD, POST, OPTIONS')
      expect(res.headers['access-control-allow-headers']).toBe(MCP_HEADERS)
      expect(res.headers['access-control-max-age']).toBe('86400')
      const other = await instance.inject({ method: 'OPTIONS', url: '/', headers: { origin: 'https://agent.example', 'access-control-request-method': 'POST' } })
      expect(other.statusCode).toBe(204)
      expect(other.headers['access-control-allow-methods']).toBe('GET, HEAD, OPTIONS')
    }
  })

  // POST is a CORS-safelisted method, so a browser would send it even without it in the list; what a browser needs
  // besides is its non-safelisted request headers allowed (x-api-key, mcp-protocol-version) and the exposed ones.
  it('lets a page of another origin call the tools from a browser', async () => {
    fx.route('/mcp-client/', (_req, res) => { res.writeHead(200, { 'content-type': 'text/html' }); res.end('<title>client</title>') })
    const browser = await launchTestBrowser()
    try {
      const page = await browser.newPage()
      await page.goto(`${fx.origin}/mcp-client/`)
      const answer = await page.evaluate(async ({ endpoint, key, url }) => {
        const res = await fetch(endpoint, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-api-key': key, 'mcp-protocol-version': '2025-06-18' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'microlink_text', arguments: { url, prerender: false, selector: 'h1' } } })
        })
        return { status: res.status, body: await res.json() as unknown, requestId: res.headers.get('x-request-id') }
      }, { endpoint: `${base.pro}/mcp`, key: KEY, url: `${fx.origin}/article/` })
      expect(answer.status).toBe(200)
      expect(answer.body).toMatchObject({ id: 1, result: { structuredContent: { data: 'Shipping faster' } } })
      // The exposed headers are readable across origins.
      expect(answer.requestId).toMatch(/:/)
    } finally {
      await browser.close()
    }
  }, 60_000)
})
