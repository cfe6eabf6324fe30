// Firecrawl `actions` run in the page in the order given (docs/firecrawl.md#actions), through the real
// @mendable/firecrawl-js client against pagecast on loopback, real Chromium, fixture pages: a form filled by click,
// write and press Enter; two screenshots around a click that differ; the order of scripts and clicks kept; script
// values; a selector that never appears (400 EACTION, in time); different actions never sharing a cache entry; and
// `GET /`'s own `actions` parameter.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import Firecrawl from '@mendable/firecrawl-js'
import { build, type Built } from '../helpers/build.ts'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'

let fx: FixtureServer
let app: Built
let proUrl: string

const html = (body: string, title = 'Actions'): string => `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body>${body}</body></html>`

beforeAll(async () => {
  fx = await startFixtureServer()
  const serve = (path: string, body: (url: URL) => string): void => {
    fx.route(path, (req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      res.end(body(new URL(req.url ?? '/', fx.origin)))
    })
  }
  serve('/form/', () => html('<main><form action="/result/" method="get"><input id="q" name="q" autocomplete="off"><button type="submit">Search</button></form></main>', 'Search'))
  serve('/result/', (url) => html(`<main><p id="result">You searched for: ${(url.searchParams.get('q') ?? '').replace(/[<&]/g, '')}</p></main>`, 'Result'))
  serve('/counter/', () => html('<main><p id="n">0</p><button id="inc" onclick="var n=document.getElementById(\'n\');n.textContent=String(Number(n.textContent)+1)">+1</button></main>'))
  serve('/paint/', () => html('<style>html,body{margin:0;height:100%;background:#fff}.dark{background:#123456}</style><button id="paint" style="position:fixed;top:0;left:0" onclick="document.body.className=\'dark\'">paint</button>'))
  app = await build({ ALLOW_PRIVATE_HOSTS: fx.host, API_KEYS: 'fc-key', BROWSER_CONCURRENCY: '1' })
  proUrl = await app.pro.listen({ port: 0, host: '127.0.0.1' })
}, 120_000)

afterAll(async () => {
  await app?.close()
  await fx?.close()
})

const page = (path: string): string => `${fx.origin}${path}`
const client = (): Firecrawl => new Firecrawl({ apiKey: 'fc-key', apiUrl: proUrl })

interface Actions {
  screenshots: string[]
  scrapes: Array<{ url: string, html: string }>
  javascriptReturns: Array<{ type: string, value: unknown }>
  pdfs: string[]
}

describe('Firecrawl actions, in the order given', () => {
  it('click -> write -> press Enter -> wait for the result -> scrape gives the submitted result', async () => {
    const doc = await client().scrape(page('/form/'), {
      formats: ['markdown'],
      maxAge: 0,
      actions: [
        { type: 'click', selector: '#q' },
        { type: 'write', text: 'spring tides' },
        { type: 'press', key: 'Enter' },
        { type: 'wait', selector: '#result' },
        { type: 'scrape' }
      ]
    })
    const actions = doc.actions as unknown as Actions
    expect(actions.scrapes).toHaveLength(1)
    expect(actions.scrapes[0]!.url).toBe(`${fx.origin}/result/?q=spring+tides`)
    expect(actions.scrapes[0]!.html).toContain('You searched for: spring tides')
    // The document is the page as the actions left it.
    expect(doc.markdown).toContain('You searched for: spring tides')
    expect(fx.hitsOf('/result/')).toBeGreaterThan(0)
  }, 90_000)

  it('two screenshots around a click are two stored files that differ', async () => {
    const doc = await client().scrape(page('/paint/'), {
      formats: ['markdown'],
      maxAge: 0,
      actions: [{ type: 'screenshot' }, { type: 'click', selector: '#paint' }, { type: 'screenshot' }]
    })
    const shots = (doc.actions as unknown as Actions).screenshots
    expect(shots).toHaveLength(2)
    expect(shots[0]).not.toBe(shots[1])
    // The files' URLs are under PUBLIC_URL; the listener that serves them is asked for their paths.
    const [before, after] = await Promise.all(shots.map(async (url) => {
      const res = await app.pro.inject({ method: 'GET', url: new URL(url).pathname })
      expect(res.statusCode).toBe(200)
      expect(res.headers['content-type']).toBe('image/png')
      return res.rawPayload
    }))
    expect(before!.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a')
    expect(before!.equals(after!)).toBe(false)
  }, 90_000)

  it('keeps the order: a script before a click sees the page before it (sorted as before, both saw it after)', async () => {
    const read = "document.getElementById('n').textContent"
    const doc = await client().scrape(page('/counter/'), {
      formats: ['markdown'],
      maxAge: 0,
      actions: [
        { type: 'executeJavascript', script: read },
        { type: 'scrape' },
        { type: 'click', selector: '#inc' },
        { type: 'executeJavascript', script: read },
        { type: 'click', selector: '#inc' },
        { type: 'scrape' },
        { type: 'executeJavascript', script: read }
      ]
    })
    const actions = doc.actions as unknown as Actions
    expect(actions.javascriptReturns.map((r) => r.value)).toEqual(['0', '1', '2'])
    expect(actions.scrapes).toHaveLength(2)
    expect(actions.scrapes[0]!.html).toContain('<p id="n">0</p>')
    expect(actions.scrapes[1]!.html).toContain('<p id="n">2</p>')
  }, 90_000)

  it('javascriptReturns: an expression, statements that return, a promise, nothing', async () => {
    const doc = await client().scrape(page('/counter/'), {
      formats: ['markdown'],
      maxAge: 0,
      actions: [
        { type: 'executeJavascript', script: '6 * 7' },
        { type: 'executeJavascript', script: 'const t = document.title; return { title: t, list: [1, 2] }' },
        { type: 'executeJavascript', script: 'new Promise((resolve) => setTimeout(() => resolve(true), 10))' },
        { type: 'executeJavascript', script: 'void 0' }
      ]
    })
    expect((doc.actions as unknown as Actions).javascriptReturns).toEqual([
      { type: 'number', value: 42 },
      { type: 'object', value: { title: 'Actions', list: [1, 2] } },
      { type: 'boolean', value: true },
      { type: 'null', value: null }
    ])
  }, 90_000)

  it('different actions never share a cache entry; the same ones do', async () => {
    const run = async (script: string): Promise<{ value: unknown, cacheState: unknown }> => {
      const doc = await client().scrape(page('/counter/'), { formats: ['markdown'], actions: [{ type: 'executeJavascript', script }] })
      return { value: (doc.actions as unknown as Actions).javascriptReturns[0]?.value, cacheState: doc.metadata?.cacheState }
    }
    expect(await run('"first"')).toEqual({ value: 'first', cacheState: 'miss' })
    expect(await run('"second"')).toEqual({ value: 'second', cacheState: 'miss' })
    expect(await run('"first"')).toEqual({ value: 'first', cacheState: 'hit' })
  }, 90_000)

  it('a selector that never appears: 400 EACTION naming the action, well before the deadline', async () => {
    const t = performance.now()
    const err = await client().scrape(page('/counter/'), {
      formats: ['markdown'],
      timeout: 8000,
      maxAge: 0,
      actions: [{ type: 'click', selector: '#inc' }, { type: 'wait', selector: '#never-there' }, { type: 'scrape' }]
    }).catch((e: unknown) => e) as { status?: number, code?: string, message: string }
    expect(err.status).toBe(400)
    expect(err.code).toBe('EACTION')
    expect(err.message).toContain('actions[1] (wait)')
    expect(err.message).toContain('#never-there')
    // Wide margin: the wait uses at most two thirds of what was left of 8 s; the machine may be loaded.
    expect(performance.now() - t).toBeLessThan(60_000)
  }, 90_000)

  it('a bad action is refused before anything loads: 400 EINVALQUERY naming it', async () => {
    const res = await fetch(`${proUrl}/v2/scrape`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer fc-key' },
      body: JSON.stringify({ url: page('/counter/'), actions: [{ type: 'press' }] })
    })
    expect(res.status).toBe(400)
    const body = await res.json() as { code: string, error: string }
    expect(body.code).toBe('EINVALQUERY')
    expect(body.error).toContain('actions[0] (press) needs `key`')
  })
})

describe('GET / actions', () => {
  it('runs the JSON list and answers data.actions', async () => {
    const actions = JSON.stringify([{ type: 'click', selector: '#inc' }, { type: 'executeJavascript', script: "document.getElementById('n').textContent" }, { type: 'screenshot', quality: 50 }])
    const res = await fetch(`${proUrl}/?url=${encodeURIComponent(page('/counter/'))}&actions=${encodeURIComponent(actions)}&force`, { headers: { 'x-api-key': 'fc-key' } })
    expect(res.status).toBe(200)
    const body = await res.json() as { data: { actions: { javascriptReturns: unknown[], screenshots: Array<{ url: string, type: string, width: number }> } } }
    expect(body.data.actions.javascriptReturns).toEqual([{ type: 'string', value: '1' }])
    expect(body.data.actions.screenshots).toHaveLength(1)
    expect(body.data.actions.screenshots[0]).toMatchObject({ type: 'jpg' })
    expect(body.data.actions.screenshots[0]!.width).toBeGreaterThan(0)
  }, 90_000)

  it('refuses a list that is not JSON: 400 EINVALQUERY', async () => {
    const res = await fetch(`${proUrl}/?url=${encodeURIComponent(page('/counter/'))}&actions=%5Bnope`, { headers: { 'x-api-key': 'fc-key' } })
    expect(res.status).toBe(400)
    const body = await res.json() as { code: string, data: Record<string, string> }
    expect(body.code).toBe('EINVALQUERY')
    expect(body.data.actions).toContain('JSON')
  })
})
