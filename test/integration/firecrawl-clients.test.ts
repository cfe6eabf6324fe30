// Firecrawl's other clients, unchanged, against pagecast's Firecrawl-compatible scrape (docs/firecrawl.md) on
// loopback: the firecrawl-mcp server over stdio (FIRECRAWL_API_URL pointing at the listener; its firecrawl_scrape
// tool), and LangChain JS's FireCrawlLoader in scrape mode.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import path from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { FireCrawlLoader } from '@langchain/community/document_loaders/web/firecrawl'
import { build, type Built } from '../helpers/build.ts'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'

let fx: FixtureServer
let app: Built
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
  app = await build({ ALLOW_PRIVATE_HOSTS: fx.host, API_KEYS: 'fc-key', BROWSER_CONCURRENCY: '1', FREE_DAILY_LIMIT: '1000' })
  freeUrl = await app.free.listen({ port: 0, host: '127.0.0.1' })
  proUrl = await app.pro.listen({ port: 0, host: '127.0.0.1' })
}, 120_000)

afterAll(async () => {
  await app?.close()
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
