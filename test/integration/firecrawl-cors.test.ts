// CORS for the Firecrawl routes (docs/firecrawl.md#browsers): a browser client on another origin POSTs and DELETEs with
// `Authorization` and a JSON body, so its preflight must allow them. A real preflight over a listening pro listener,
// and real Chromium running Firecrawl-style calls from a page of the fixture server's origin (Chromium sends the
// preflight and refuses the answer unless CORS allows it).
import type { Browser } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { FC_KEY, startFirecrawlApp, type FirecrawlApp } from '../helpers/firecrawl.ts'
import { launchTestBrowser } from '../helpers/chromium.ts'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'

let fx: FixtureServer
let fc: FirecrawlApp
let proUrl: string
let browser: Browser

beforeAll(async () => {
  fx = await startFixtureServer()
  fx.route('/client', (_req, res) => { res.writeHead(200, { 'content-type': 'text/html' }); res.end('<!doctype html><title>A browser client</title>') })
  fx.route('/target', (_req, res) => { res.writeHead(200, { 'content-type': 'text/html' }); res.end('<!doctype html><title>Target</title><main><h1>Reached from a browser</h1></main>') })
  fc = await startFirecrawlApp({ ALLOW_PRIVATE_HOSTS: fx.host, BROWSER_CONCURRENCY: '1' })
  proUrl = fc.proUrl
  browser = await launchTestBrowser()
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await fc?.close()
  await fx?.close()
})

describe('Firecrawl routes from a browser', () => {
  it('answer a preflight for POST and DELETE with Authorization and content-type', async () => {
    for (const [path, method] of [['/v2/scrape', 'POST'], ['/v1/crawl', 'POST'], ['/v2/crawl/0b5c4c4e-7d1e-4f57-9d55-0d6a0f0e8f10', 'DELETE'], ['//v2/batch/scrape', 'POST']] as const) {
      const res = await fetch(`${proUrl}${path}`, {
        method: 'OPTIONS',
        headers: { origin: fx.origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization,content-type' }
      })
      expect(res.status, path).toBe(204)
      expect(res.headers.get('access-control-allow-origin')).toBe('*')
      expect(res.headers.get('access-control-allow-methods')?.split(', ')).toEqual(expect.arrayContaining([method]))
      expect(res.headers.get('access-control-allow-headers')).toBe('authorization,content-type')
      expect(await res.text()).toBe('')
    }
    // An empty body with the JSON content type is no body: a POST still needs one (400), a DELETE does not.
    const empty = await fetch(`${proUrl}/v2/scrape`, { method: 'POST', headers: { authorization: `Bearer ${FC_KEY}`, 'content-type': 'application/json' } })
    expect(empty.status).toBe(400)
    expect(await empty.json()).toMatchObject({ success: false, code: 'EINVALQUERY' })
    // Other paths keep the read-only preflight.
    const other = await fetch(`${proUrl}/`, { method: 'OPTIONS', headers: { origin: fx.origin, 'access-control-request-method': 'POST' } })
    expect(other.headers.get('access-control-allow-methods')).toBe('GET, HEAD, OPTIONS')
  })

  it('let a page on another origin scrape, poll and cancel with its key (Chromium enforcing CORS)', async () => {
    const page = await browser.newPage()
    try {
      await page.goto(`${fx.origin}/client`)
      const result = await page.evaluate(async ({ base, target }) => {
        const headers = { authorization: 'Bearer fc-key', 'content-type': 'application/json' }
        const scrape = await fetch(`${base}/v2/scrape`, { method: 'POST', headers, body: JSON.stringify({ url: target, formats: ['markdown'] }) })
        const scraped = await scrape.json() as { data?: { markdown?: string } }
        const started = await (await fetch(`${base}/v2/batch/scrape`, { method: 'POST', headers, body: JSON.stringify({ urls: [target] }) })).json() as { id: string }
        const cancel = await fetch(`${base}/v2/batch/scrape/${started.id}`, { method: 'DELETE', headers })
        const missing = await fetch(`${base}/v2/crawl/0b5c4c4e-7d1e-4f57-9d55-0d6a0f0e8f10`, { method: 'DELETE', headers })
        return { scrape: scrape.status, markdown: scraped.data?.markdown, cancel: cancel.status, missing: missing.status, missingBody: await missing.json() as unknown }
      }, { base: proUrl, target: `${fx.origin}/target` })
      expect(result.scrape).toBe(200)
      expect(result.markdown).toContain('Reached from a browser')
      expect(result.cancel).toBe(200)
      // An error answer is readable too: the page sees the Firecrawl envelope, not an opaque failure.
      expect(result.missing).toBe(404)
      expect(result.missingBody).toMatchObject({ success: false, code: 'ENOTFOUND' })
    } finally {
      await page.close()
    }
  }, 60_000)
})
