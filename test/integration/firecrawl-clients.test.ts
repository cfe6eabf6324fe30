// Firecrawl's other clients, unchanged, against pagecast's Firecrawl-compatible scrape (docs/firecrawl.md) on
// loopback: the firecrawl-mcp server over stdio (FIRECRAWL_API_URL pointing at the listener; its firecrawl_scrape
// tool), and LangChain JS's FireCrawlLoader in scrape mode. Then plans: a KEYS_FILE tenant's daily limit, denied
// parameter and credit-usage through the SDK, the free quota spent (429) and a scrape's timeout (408).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { FireCrawlLoader } from '@langchain/community/document_loaders/web/firecrawl'
import { FC_KEY, postJson, startFirecrawlApp, type FirecrawlApp } from '../helpers/firecrawl.ts'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'

let fx: FixtureServer
let fc: FirecrawlApp
let freeUrl: string
let proUrl: string

const PAGE = '<!doctype html><html lang="en"><head><title>Lighthouse keepers</title><meta name="description" content="A short history."></head>' +
  '<body><nav><a href="/">Home</a></nav><main><h1>Lighthouse keepers</h1><p>For two centuries keepers trimmed the wicks and wound the clockwork every night.</p>' +
  '<p>The last keeper left the rock in 1998, when the light was automated.</p></main><footer>Footer of the museum</footer></body></html>'

beforeAll(async () => {
  fx = await startFixtureServer()
  fx.route('/keepers/', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    res.end(PAGE)
  })
  fc = await startFirecrawlApp({ ALLOW_PRIVATE_HOSTS: fx.host, BROWSER_CONCURRENCY: '1', FREE_DAILY_LIMIT: '1000' })
  ;({ freeUrl, proUrl } = fc)
}, 120_000)

afterAll(async () => {
  await fc?.close()
  await fx?.close()
})

describe('firecrawl-mcp over stdio', () => {
  it('firecrawl_scrape through FIRECRAWL_API_URL (pro listener, with a key)', async () => {
    const server = path.resolve(import.meta.dirname, '../../node_modules/firecrawl-mcp/dist/index.js')
    // A minimal environment: nothing of this process's reaches the child.
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [server],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', FIRECRAWL_API_URL: proUrl, FIRECRAWL_API_KEY: 'fc-key' },
      stderr: 'pipe'
    })
    const client = new Client({ name: 'pagecast-test', version: '1.0.0' })
    await client.connect(transport)
    try {
      const tools = await client.listTools()
      expect(tools.tools.map((tool) => tool.name)).toContain('firecrawl_scrape')
      const result = await client.callTool({ name: 'firecrawl_scrape', arguments: { url: `${fx.origin}/keepers/`, formats: ['markdown'] } })
      expect(result.isError).not.toBe(true)
      const text = (result.content as Array<{ type: string, text?: string }>).map((item) => item.text ?? '').join('\n')
      expect(text).toContain('# Lighthouse keepers')
      expect(text).toContain('wound the clockwork')
      expect(text).not.toContain('Footer of the museum')
    } finally {
      await client.close()
    }
  }, 90_000)
})

describe('LangChain FireCrawlLoader', () => {
  it('scrape mode: one Document with the Markdown and the metadata', async () => {
    const loader = new FireCrawlLoader({ url: `${fx.origin}/keepers/`, apiKey: 'fc-key', apiUrl: proUrl, mode: 'scrape', params: { formats: ['markdown'] } })
    const docs = await loader.load()
    expect(docs).toHaveLength(1)
    expect(docs[0]!.pageContent).toContain('# Lighthouse keepers')
    expect(docs[0]!.metadata.title).toBe('Lighthouse keepers')
    expect(docs[0]!.metadata.sourceURL).toBe(`${fx.origin}/keepers/`)
  })

  it('scrape mode on the free listener (its key ignored there)', async () => {
    const loader = new FireCrawlLoader({ url: `${fx.origin}/keepers/`, apiKey: 'unused', apiUrl: freeUrl, mode: 'scrape' })
    const docs = await loader.load()
    expect(docs[0]!.pageContent).toContain('For two centuries')
  })
})

describe('plans: a KEYS_FILE tenant, the free quota, the timeout', () => {
  let limited: FirecrawlApp
  let dir: string
  let proBase: string
  let freeBase: string

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'pagecast-fc-keys-'))
    const file = path.join(dir, 'keys.json')
    const key = `sha256:${createHash('sha256').update('acme-key').digest('hex')}`
    writeFileSync(file, JSON.stringify({ tenants: { acme: { keys: [key], plan: { daily: 3, deny: ['proxy'] } } } }))
    fx.route('/slow-fc/', (_req, res) => {
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        res.end('<!doctype html><title>Slow</title><body><p>Slow</p></body>')
      }, 4000)
    })
    limited = await startFirecrawlApp({ ALLOW_PRIVATE_HOSTS: fx.host, KEYS_FILE: file, BROWSER_CONCURRENCY: '1', FREE_DAILY_LIMIT: '2' })
    ;({ freeUrl: freeBase, proUrl: proBase } = limited)
  }, 120_000)

  afterAll(async () => {
    await limited?.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('the tenant\'s daily limit counts each scrape, credit-usage reports what is left, a denied option is 402, a spent day 429', async () => {
    const client = limited.v2('acme-key')
    const first = await postJson(proBase, '/v2/scrape', { url: `${fx.origin}/keepers/` }, 'acme-key')
    expect(first.status).toBe(200)
    expect(first.headers.get('x-rate-limit-limit')).toBe('3')
    expect(first.headers.get('x-rate-limit-remaining')).toBe('2')
    expect(await client.getCreditUsage()).toMatchObject({ remainingCredits: 2, planCredits: 3 })
    const denied = await client.scrape(`${fx.origin}/keepers/`, { proxy: 'http://127.0.0.1:9/' }).catch((e: unknown) => e) as { status?: number, code?: string }
    expect(denied).toMatchObject({ status: 402, code: 'EPLAN' })
    await client.scrape(`${fx.origin}/keepers/`)
    await client.scrape(`${fx.origin}/keepers/`, { formats: ['links'] })
    expect((await client.getCreditUsage()).remainingCredits).toBe(0)
    const spent = await client.scrape(`${fx.origin}/keepers/`).catch((e: unknown) => e) as { status?: number, code?: string }
    expect(spent).toMatchObject({ status: 429, code: 'ERATE' })
  })

  it('the free quota: each page counts, a spent quota is 429 with Retry-After', async () => {
    const scrape = async (): Promise<Response> => await postJson(freeBase, '/v1/scrape', { url: `${fx.origin}/keepers/` })
    expect((await scrape()).status).toBe(200)
    expect((await scrape()).status).toBe(200)
    const third = await scrape()
    expect(third.status).toBe(429)
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(await third.json()).toMatchObject({ success: false, code: 'ERATE' })
    expect(await (await fetch(`${freeBase}/v2/team/credit-usage`)).json()).toMatchObject({ success: true, data: { planCredits: 2 } })
  })

  it('a scrape that outlasts its timeout is 408, through the SDK as well', async () => {
    const res = await postJson(proUrl, '/v2/scrape', { url: `${fx.origin}/slow-fc/`, timeout: 1000 }, FC_KEY)
    expect(res.status).toBe(408)
    expect(await res.json()).toMatchObject({ success: false, code: 'ETIMEOUT' })
    const client = fc.v2()
    const err = await client.scrape(`${fx.origin}/slow-fc/`, { timeout: 1000 }).catch((e: unknown) => e) as { status?: number }
    expect(err.status).toBe(408)
  }, 30_000)
})
