// The Firecrawl-compatible scrape (docs/firecrawl.md) driven by the real @mendable/firecrawl-js client, unchanged
// (v2 `Firecrawl.scrape` and v1 `FirecrawlAppV1.scrapeUrl`), against both listeners on loopback over fixture pages,
// with real Chromium for screenshots and actions: formats, main content and tags, metadata, the cache state,
// `//v2/...`, unknown keys, the error envelope (LLM formats, bad URLs, a private address as a pure address check),
// auth on pro (Bearer and x-api-key), credit-usage and concurrency-check.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Validator } from '@seriousme/openapi-schema-validator'
import { SCRAPE_BODY_SCHEMA } from '../../src/schemas/firecrawl.ts'
import type { Built } from '../helpers/build.ts'
import { postJson, startFirecrawlApp, type FirecrawlApp } from '../helpers/firecrawl.ts'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'

let fx: FixtureServer
let fc: FirecrawlApp
let app: Built
let freeUrl: string
let proUrl: string
let nostoreHits = 0

export const NEWS_PAGE = `<!doctype html>
<html lang="en-GB">
<head>
  <meta charset="utf-8">
  <title>Tide tables | Harbour News</title>
  <meta name="description" content="When the tides turn this week.">
  <meta name="keywords" content="tides, harbour">
  <meta property="og:title" content="Tide tables">
  <meta property="og:site_name" content="Harbour News">
  <meta property="og:image" content="/img/cover.png">
  <link rel="icon" href="/favicon.png">
  <script>window.tracking = 'script text'</script>
  <style>.x { color: red }</style>
</head>
<body>
  <header><nav><a href="/">Home</a> <a href="/weather/">Weather</a></nav></header>
  <main>
    <article>
      <h1>Tide tables for the week</h1>
      <p>High water on Monday is at 06:12 and the evening tide follows at 18:40, a little later than usual.</p>
      <p>Fishermen should plan for a strong spring tide on Thursday; see the <a href="/tides/thursday">Thursday notes</a>.</p>
      <p>The harbour master asks that boats stay clear of the north wall while the dredger works there this week.</p>
      <img src="/img/chart.png" alt="Tide chart">
      <div class="ad">Buy boats now</div>
    </article>
  </main>
  <footer><p>Footer text of Harbour News</p><a href="https://elsewhere.example/about">About</a></footer>
</body>
</html>`

beforeAll(async () => {
  fx = await startFixtureServer()
  fx.route('/news/', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    res.end(NEWS_PAGE)
  })
  fx.route('/nostore/', (_req, res) => {
    nostoreHits += 1
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    res.end(NEWS_PAGE)
  })
  fc = await startFirecrawlApp({ ALLOW_PRIVATE_HOSTS: fx.host, BROWSER_CONCURRENCY: '1', FREE_DAILY_LIMIT: '1000' })
  ;({ app, freeUrl, proUrl } = fc)
}, 120_000)

afterAll(async () => {
  await fc?.close()
  await fx?.close()
})

const page = (path = '/news/'): string => `${fx.origin}${path}`

describe('v2 client (Firecrawl.scrape)', () => {
  it('markdown, html, rawHtml, links, images and metadata from one page', async () => {
    const client = fc.v2()
    const doc = await client.scrape(page(), { formats: ['markdown', 'html', 'rawHtml', 'links', 'images'] })
    // Main content by default: the article, not the navigation, footer or scripts.
    expect(doc.markdown).toContain('# Tide tables for the week')
    expect(doc.markdown).toContain(`[Thursday notes](${fx.origin}/tides/thursday)`)
    expect(doc.markdown).not.toContain('Footer text')
    expect(doc.markdown).not.toContain('script text')
    expect(doc.html).toContain('High water on Monday')
    expect(doc.html).not.toMatch(/<script|<style|Footer text/)
    expect(doc.rawHtml).toContain('<footer>')
    expect(doc.links).toEqual(expect.arrayContaining([`${fx.origin}/`, `${fx.origin}/weather/`, `${fx.origin}/tides/thursday`, 'https://elsewhere.example/about']))
    expect(doc.images).toEqual([`${fx.origin}/img/chart.png`])
    const meta = doc.metadata!
    expect(meta.title).toBe('Tide tables')
    expect(meta.description).toBe('When the tides turn this week.')
    expect(meta.language).toBe('en')
    expect(meta.sourceURL).toBe(page())
    expect(meta.url).toBe(page())
    expect(meta.statusCode).toBe(200)
    expect(meta.contentType).toBe('text/html; charset=utf-8')
    expect(meta.favicon).toBe(`${fx.origin}/favicon.png`)
    expect(meta.keywords).toBe('tides, harbour')
    expect(meta['og:site_name']).toBe('Harbour News')
    expect(meta.ogSiteName).toBe('Harbour News')
    expect(meta.cacheState).toBe('miss')
    expect(Date.parse(String(meta.cachedAt))).toBeGreaterThan(Date.now() - 120_000)
  })

  it('storeInCache: false computes the answer and writes nothing to the cache; the default stores it', async () => {
    const v2 = fc.v2()
    const url = page('/nostore/')
    const first = await v2.scrape(url, { formats: ['markdown'], storeInCache: false })
    expect(first.markdown).toContain('Tide tables for the week')
    const second = await v2.scrape(url, { formats: ['markdown'], storeInCache: false })
    expect([first.metadata?.cacheState, second.metadata?.cacheState]).toEqual(['miss', 'miss'])
    expect(nostoreHits).toBe(2)
    const stored = await v2.scrape(url, { formats: ['markdown'] })
    const hit = await v2.scrape(url, { formats: ['markdown'], storeInCache: false })
    expect([stored.metadata?.cacheState, hit.metadata?.cacheState]).toEqual(['miss', 'hit'])
    expect(nostoreHits).toBe(3)
  })

  it('onlyMainContent=false gives the whole body; includeTags and excludeTags choose the elements', async () => {
    const client = fc.v2()
    const whole = await client.scrape(page(), { formats: ['markdown'], onlyMainContent: false })
    expect(whole.markdown).toContain('Footer text of Harbour News')
    expect(whole.markdown).not.toContain('script text')
    // The same page again: every format comes from the one cache entry.
    expect(whole.metadata?.cacheState).toBe('hit')
    const tagged = await client.scrape(page(), { formats: ['html'], includeTags: ['h1', 'footer'], excludeTags: ['a'] })
    expect(tagged.html).toContain('Tide tables for the week')
    expect(tagged.html).toContain('Footer text of Harbour News')
    expect(tagged.html).not.toContain('High water')
    expect(tagged.html).not.toContain('About')
  })

  it('screenshot (string and object) is the stored file, fetched back as an image', async () => {
    const client = fc.v2()
    const doc = await client.scrape(page(), { formats: ['markdown', { type: 'screenshot', fullPage: true, quality: 70 }] })
    expect(doc.markdown).toContain('Tide tables for the week')
    expect(doc.screenshot).toMatch(/^http/)
    // The file's URL is under PUBLIC_URL; the listener that serves it is asked for its path.
    const image = await app.free.inject({ method: 'GET', url: new URL(doc.screenshot!).pathname })
    expect(image.statusCode).toBe(200)
    expect(image.headers['content-type']).toBe('image/jpeg')
  }, 60_000)

  it('actions: click, wait, executeJavascript, scrape, screenshot run in the browser', async () => {
    fx.route('/clicky/', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      res.end('<!doctype html><title>Clicky</title><body><button id="b" onclick="document.getElementById(\'out\').textContent=\'clicked once\'">Go</button><p id="out">not yet</p></body>')
    })
    const client = fc.v2()
    const doc = await client.scrape(page('/clicky/'), {
      formats: ['markdown'],
      onlyMainContent: false,
      actions: [
        { type: 'click', selector: '#b' },
        { type: 'wait', milliseconds: 100 },
        { type: 'executeJavascript', script: "return document.getElementById('out').textContent" },
        { type: 'scrape' },
        { type: 'screenshot' }
      ]
    })
    expect(doc.markdown).toContain('clicked once')
    const actions = doc.actions as { javascriptReturns: Array<{ value: unknown }>, scrapes: Array<{ html: string }>, screenshots: string[] }
    expect(actions.javascriptReturns).toEqual([{ type: 'string', value: 'clicked once' }])
    expect(actions.scrapes[0]!.html).toContain('clicked once')
    expect(actions.screenshots).toHaveLength(1)
    expect(actions.screenshots[0]).toMatch(/^http/)
  }, 60_000)
})

describe('v1 client (FirecrawlAppV1.scrapeUrl)', () => {
  it('formats as strings, screenshot@fullPage, metadata', async () => {
    const client = fc.v1()
    const res = await client.scrapeUrl(page(), { formats: ['markdown', 'links', 'screenshot@fullPage'] }) as Record<string, any>
    expect(res.success).toBe(true)
    expect(res.markdown).toContain('# Tide tables for the week')
    expect(res.links).toContain(`${fx.origin}/tides/thursday`)
    expect(res.screenshot).toMatch(/^http/)
    expect(res.metadata.sourceURL).toBe(page())
  }, 60_000)

  it('the free listener: keyless, counted against the free quota; a key sent there is ignored', async () => {
    const client = fc.v1('anything', freeUrl)
    const res = await postJson(freeUrl, '/v1/scrape', { url: page(), formats: ['markdown'] })
    expect(res.status).toBe(200)
    expect(Number(res.headers.get('x-rate-limit-remaining'))).toBeLessThan(1000)
    const doc = await client.scrapeUrl(page(), { formats: ['markdown'] }) as Record<string, any>
    expect(doc.markdown).toContain('Tide tables for the week')
  })
})

describe('raw HTTP: paths, unknown keys, errors', () => {
  const post = async (base: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number, body: any, headers: Headers }> => {
    const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) })
    return { status: res.status, body: await res.json(), headers: res.headers }
  }
  const auth = { authorization: 'Bearer fc-key' }

  it('//v2/scrape (a base URL with a trailing slash) and origin/integration keys', async () => {
    const res = await post(proUrl, '//v2/scrape', { url: page(), formats: ['markdown'], origin: 'js-sdk@4', integration: 'n8n' }, auth)
    expect(res.status).toBe(200)
    expect(res.body.success).toBe(true)
    expect(res.body.data.markdown).toContain('Tide tables for the week')
  })

  it('LLM formats: 400 naming the format', async () => {
    for (const format of ['json', 'summary', 'changeTracking', 'extract']) {
      const res = await post(proUrl, '/v2/scrape', { url: page(), formats: ['markdown', format === 'json' ? { type: 'json', prompt: 'x' } : format] }, auth)
      expect(res.status).toBe(400)
      expect(res.body).toMatchObject({ success: false, code: 'EFORMAT', details: { formats: format } })
      expect(res.body.error).toContain(`\`${format}\``)
    }
  })

  it('the SDK throws with the envelope: status, code and message', async () => {
    const client = fc.v2()
    const err = await client.scrape(page(), { formats: ['summary'] }).catch((e: unknown) => e) as { status?: number, code?: string, message: string }
    expect(err.status).toBe(400)
    expect(err.code).toBe('EFORMAT')
    expect(err.message).toContain('summary')
  })

  it('bad bodies and bad URLs: 400 with a code, never a stack', async () => {
    const missing = await post(proUrl, '/v2/scrape', { formats: ['markdown'] }, auth)
    expect(missing.status).toBe(400)
    expect(missing.body).toMatchObject({ success: false, code: 'EINVALQUERY' })
    expect(missing.body.error).toContain('url')
    const badUrl = await post(proUrl, '/v2/scrape', { url: 'ftp://example.org/x' }, auth)
    expect(badUrl.status).toBe(400)
    expect(badUrl.body).toMatchObject({ success: false, code: 'EINVALURL' })
    const write = await post(proUrl, '/v2/scrape', { url: page(), actions: [{ type: 'hover', selector: 'a' }] }, auth)
    expect(write.status).toBe(400)
    expect(write.body.error).toContain('hover')
    const notJson = await fetch(`${proUrl}/v2/scrape`, { method: 'POST', headers: { 'content-type': 'application/json', ...auth }, body: '{nope' })
    expect(notJson.status).toBe(400)
    for (const res of [missing, badUrl, write]) expect(JSON.stringify(res.body)).not.toMatch(/\bat .*\.ts:\d+/)
  })

  it('a private address is refused before any connection (pure address check)', async () => {
    // 10.0.0.1 is not in ALLOW_PRIVATE_HOSTS: the literal check refuses it before the cache lookup or any socket.
    const res = await post(proUrl, '/v2/scrape', { url: 'http://10.0.0.1/admin' }, auth)
    expect(res.status).toBe(400)
    expect(res.body).toMatchObject({ success: false, code: 'EFORBIDDENURL' })
    const metadata = await post(freeUrl, '/v1/scrape', { url: 'http://169.254.169.254/latest/meta-data/' })
    expect(metadata.status).toBe(400)
    expect(metadata.body.code).toBe('EFORBIDDENURL')
  })

  it('auth on pro: Bearer or x-api-key; missing or unknown is 401 Unauthorized', async () => {
    expect((await post(proUrl, '/v2/scrape', { url: page() })).body).toEqual({ success: false, error: 'Unauthorized' })
    const wrong = await post(proUrl, '/v1/scrape', { url: page() }, { authorization: 'Bearer nope' })
    expect(wrong.status).toBe(401)
    expect(wrong.body).toEqual({ success: false, error: 'Unauthorized' })
    expect((await post(proUrl, '/v2/scrape', { url: page() }, { 'x-api-key': 'fc-key' })).status).toBe(200)
    const client = fc.v2('wrong')
    const err = await client.scrape(page()).catch((e: unknown) => e) as { status?: number, message: string }
    expect(err.status).toBe(401)
    expect(err.message).toBe('Unauthorized')
    // The key never reaches a log line.
    expect(app.rawLogs.some((line) => line.includes('fc-key'))).toBe(false)
  })

  it('pro-only options on the free listener: 402 naming the option', async () => {
    const res = await post(freeUrl, '/v2/scrape', { url: page(), headers: { 'x-test': '1' } })
    expect(res.status).toBe(402)
    expect(res.body).toMatchObject({ success: false, code: 'EHEADERS' })
  })
})

describe('team routes', () => {
  it('credit-usage (v1 and v2) and concurrency-check through the SDK', async () => {
    const client = fc.v2()
    const usage = await client.getCreditUsage()
    expect(usage.remainingCredits).toBeGreaterThan(1_000_000)
    const concurrency = await client.getConcurrency()
    expect(concurrency).toEqual({ concurrency: 0, maxConcurrency: 1 })
    const v1 = await fetch(`${proUrl}/v1/team/credit-usage`, { headers: { authorization: 'Bearer fc-key' } })
    expect(v1.status).toBe(200)
    expect(await v1.json()).toMatchObject({ success: true, data: { remaining_credits: 1_000_000_000 } })
    const free = await (await fetch(`${freeUrl}/v1/team/credit-usage`)).json()
    expect(free).toMatchObject({ success: true, data: { remaining_credits: 1000, plan_credits: 1000 } })
    const unauthorized = await fetch(`${proUrl}/v1/team/credit-usage`)
    expect(unauthorized.status).toBe(401)
  })
})

describe('/openapi.json', () => {
  it('describes the Firecrawl routes with the schema the bodies are checked against, and stays valid', async () => {
    const doc = (await app.free.inject('/openapi.json')).json()
    for (const path of ['/v1/scrape', '/v2/scrape']) {
      expect(doc.paths[path].post.requestBody.content['application/json'].schema).toEqual(JSON.parse(JSON.stringify(SCRAPE_BODY_SCHEMA)))
      expect(Object.keys(doc.paths[path].post.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '402', '408', '429', '500']))
    }
    for (const path of ['/v1/team/credit-usage', '/v2/team/credit-usage', '/v2/concurrency-check']) expect(doc.paths[path].get).toBeDefined()
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' })
    const result = await new Validator().validate(doc)
    expect(result.errors ?? []).toEqual([])
  })
})
