// The content endpoints (docs/api.md §14) on both listeners, over fixture pages on loopback: query and path form of
// /markdown, /text and /html, their types and headers, mainContent and selector, the refused parameters, HEAD,
// x-markdown-tokens, the cache entry shared with GET /, the free quota, and prerender giving the same Markdown.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { build, qs, type Built } from '../helpers/build.ts'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'

let fx: FixtureServer
let app: Built
let freeUrl: string

beforeAll(async () => {
  fx = await startFixtureServer()
  fx.route('/long/', (_req, res) => {
    const body = Array.from({ length: 40 }, (_, i) => `<p>Paragraph ${i} of a much longer page about caching builds.</p>`).join('')
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    res.end(`<!doctype html><title>Long</title><body><h1>Long</h1>${body}</body>`)
  })
  fx.route('/slow/', (_req, res) => {
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      res.end('<!doctype html><title>Slow</title><body><p>Slow</p></body>')
    }, 300)
  })
  app = await build({ ALLOW_PRIVATE_HOSTS: fx.host, API_KEYS: 'k', BROWSER_CONCURRENCY: '1', FREE_DAILY_LIMIT: '1000' })
  freeUrl = await app.free.listen({ port: 0, host: '127.0.0.1' })
}, 120_000)

afterAll(async () => {
  await app?.close()
  await fx?.close()
})

const page = (path = '/rules/'): string => `${fx.origin}${path}`
const pro = async (url: string, method: 'GET' | 'HEAD' = 'GET') => await app.pro.inject({ method, url, headers: { 'x-api-key': 'k' } })

describe('query form', () => {
  it('/markdown: text/markdown, the body as Markdown, x-markdown-tokens, the embed headers', async () => {
    const res = await pro(`/markdown?${qs({ url: page() })}`)
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('text/markdown; charset=utf-8')
    expect(res.body).toContain('# The main story')
    expect(res.body).toContain(`[relative link](${fx.origin}/docs/guide?x=1#top "Guide")`)
    expect(res.body).toContain('| Name | Value |')
    expect(res.body).toContain('```js')
    expect(res.body).toContain('Copyright footer text')
    expect(res.body).not.toMatch(/script text|hidden div|invisible paragraph/)
    expect(res.headers['content-security-policy']).toBe("sandbox; script-src 'none'")
    expect(res.headers['x-content-type-options']).toBe('nosniff')
    expect(res.headers['x-cache-status']).toBe('MISS')
    expect(res.headers['x-pricing-plan']).toBe('pro')
    expect(res.headers['x-request-id']).toBeDefined()
    const tokens = Number(res.headers['x-markdown-tokens'])
    expect(tokens).toBeGreaterThan(res.body.length / 10)
    expect(tokens).toBeLessThan(res.body.length)
  })

  it('/text: text/plain, the body text collapsed', async () => {
    const res = await pro(`/text?${qs({ url: page() })}`)
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('text/plain; charset=utf-8')
    expect(res.body).toMatch(/^Home About Pagecast Tests The main story By @Ada Lovelace/)
    expect(res.headers['x-markdown-tokens']).toBeUndefined()
  })

  it('/html: text/html with the sandbox headers; without a selector, the whole document', async () => {
    const res = await pro(`/html?${qs({ url: page() })}`)
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(res.headers['content-security-policy']).toBe("sandbox; script-src 'none'")
    expect(res.body).toMatch(/^<!doctype html>/i)
    expect(res.body).toContain('<title>Rules fixture | Pagecast Tests</title>')
    expect(res.body).toContain('</html>')
  })

  it('selector converts only the first match; mainContent keeps the article only', async () => {
    const li = await pro(`/markdown?${qs({ url: page(), selector: '.item' })}`)
    expect(li.body).toBe('[First](' + fx.origin + '/p/1)')
    const html = await pro(`/html?${qs({ url: page(), selector: 'ul.items' })}`)
    expect(html.body.trim()).toMatch(/^<li class="item"[^>]*><a href="\/p\/1">First<\/a><\/li>/)
    const main = await pro(`/markdown?${qs({ url: page(), mainContent: true })}`)
    expect(main.body).toContain('The build farm used to spend')
    expect(main.body).not.toContain('Copyright footer text')
    expect(main.body).not.toContain('[About]')
    const text = await pro(`/text?${qs({ url: page(), mainContent: true, selector: 'table' })}`)
    // `text` is the match's textContent, whitespace collapsed (docs/api.md §3.3).
    expect(text.body).toBe('NameValue alpha1beta2')
    const none = await pro(`/markdown?${qs({ url: page(), selector: '.nothing-here' })}`)
    expect(none.statusCode).toBe(404)
    expect(none.json()).toMatchObject({ status: 'fail', code: 'ENOTFOUND' })
  })

  it.each(['meta=false', 'data.x.selector=h1', 'embed=title', 'filter=title'])('refuses %s with EINVALQUERY naming it', async (pair) => {
    const res = await pro(`/markdown?${qs({ url: page() })}&${pair}`)
    expect(res.statusCode).toBe(400)
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
    const name = pair.split(/[.=]/)[0] ?? ''
    expect(res.json()).toMatchObject({ status: 'fail', code: 'EINVALQUERY', data: { [name]: expect.any(String) } })
  })

  it('keeps the errors of GET /: EINVALURL, EAUTH', async () => {
    expect((await pro('/text?url=nope')).json().code).toBe('EINVALURL')
    expect((await app.pro.inject({ url: `/text?${qs({ url: page() })}` })).json().code).toBe('EAUTH')
  })

  it('HEAD answers the headers without a body', async () => {
    const res = await pro(`/markdown?${qs({ url: page() })}`, 'HEAD')
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('text/markdown; charset=utf-8')
    expect(Number(res.headers['x-markdown-tokens'])).toBeGreaterThan(0)
    expect(res.body).toBe('')
  })
})

describe('path form', () => {
  it('takes everything after the slash as the target, its own query string included', async () => {
    const target = `${fx.origin}/rules/?a=1&meta=true&embed=title`
    const res = await fetch(`${freeUrl}/markdown/${target}`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('text/markdown; charset=utf-8')
    expect(await res.text()).toContain('# The main story')
    const html = await pro(`/html/${page('/article/')}`)
    expect(html.body).toContain('<h1 class="post-title">Shipping faster</h1>')
    const text = await pro(`/text/${page('/article/')}?x=1`)
    expect(text.body).toBe('Shipping faster We cut our build times in half by caching what never changes.')
  })

  it('single-flights with the query form and the equivalent GET /: one fetch of the page', async () => {
    const target = page('/slow/')
    const all = await Promise.all([
      pro(`/markdown/${target}`),
      pro(`/markdown?${qs({ url: target })}`),
      pro(`/?${qs({ url: target, meta: false, 'data.content.attr': 'markdown', embed: 'content' })}`)
    ])
    expect(all.map((res) => res.statusCode)).toEqual([200, 200, 200])
    expect(new Set(all.map((res) => res.body)).size).toBe(1)
    expect(all[0]?.body).toBe('Slow')
    expect(fx.hitsOf('/slow/')).toBe(1)
  })

  it('takes long targets and keeps their encoding', async () => {
    const target = `${page('/article/')}?q=${'a%20b'.repeat(200)}`
    const res = await pro(`/text/${target}`)
    expect(res.statusCode).toBe(200)
    expect(res.body).toContain('Shipping faster')
    const json = await pro(`/?${qs({ url: target, meta: false, 'data.content.attr': 'text' })}`)
    expect(json.headers['x-cache-status']).toBe('HIT')
  })

  it('shares the cache entry of the query form and of the equivalent GET /', async () => {
    const target = page('/article/?shared=1')
    const first = await pro(`/markdown/${target}`)
    expect(first.headers['x-cache-status']).toBe('MISS')
    const again = await pro(`/markdown?${qs({ url: target })}`)
    expect(again.headers['x-cache-status']).toBe('HIT')
    expect(again.body).toBe(first.body)
    expect(again.headers['x-markdown-tokens']).toBe(first.headers['x-markdown-tokens'])
    const json = await pro(`/?${qs({ url: target, meta: false, 'data.content.attr': 'markdown' })}`)
    expect(json.headers['x-cache-status']).toBe('HIT')
    expect(json.json().data.content).toBe(first.body)
  })
})

describe('reference', () => {
  it('/openapi.json describes both forms, with the content parameters and without the refused ones', async () => {
    const doc = (await app.free.inject('/openapi.json')).json()
    const names = (doc.paths['/markdown'].get.parameters as Array<{ name: string }>).map((p) => p.name)
    expect(names).toEqual(expect.arrayContaining(['url', 'prerender', 'waitForSelector', 'ttl', 'mainContent', 'selector']))
    expect(names.filter((name) => /^(meta|data|embed|filter|stream)(\.|$)/.test(name))).toEqual([])
    expect(doc.paths['/html/{target}'].get.parameters[0].in).toBe('path')
  })
})

describe('free listener and load modes', () => {
  it('counts the free quota as GET / does', async () => {
    const first = await app.free.inject({ url: `/markdown?${qs({ url: page('/article/') })}`, remoteAddress: '198.51.100.40' })
    expect(first.statusCode).toBe(200)
    expect(first.headers['x-rate-limit-limit']).toBe('1000')
    expect(first.headers['x-rate-limit-remaining']).toBe('999')
    const second = await app.free.inject({ url: `/text/${page('/article/')}`, remoteAddress: '198.51.100.40' })
    expect(second.headers['x-rate-limit-remaining']).toBe('998')
    const refused = await app.free.inject({ url: `/markdown?${qs({ url: page('/article/') })}&filter=x`, remoteAddress: '198.51.100.40' })
    expect(refused.json().code).toBe('EINVALQUERY')
    expect(refused.headers['x-rate-limit-remaining']).toBe('997')
    const cors = await app.free.inject({ url: `/markdown?${qs({ url: page('/article/') })}`, remoteAddress: '198.51.100.41', headers: { origin: 'https://a.example' } })
    expect(String(cors.headers['access-control-expose-headers'])).toContain('x-markdown-tokens')
  })

  it('x-markdown-tokens grows with the content', async () => {
    const short = await pro(`/markdown?${qs({ url: page('/article/') })}`)
    const long = await pro(`/markdown?${qs({ url: page('/long/') })}`)
    expect(Number(short.headers['x-markdown-tokens'])).toBeGreaterThan(5)
    expect(Number(long.headers['x-markdown-tokens'])).toBeGreaterThan(10 * Number(short.headers['x-markdown-tokens']))
  })

  it('prerender=true gives the same Markdown for a static page', async () => {
    const fetched = await pro(`/markdown?${qs({ url: page(), prerender: false })}`)
    const rendered = await pro(`/markdown?${qs({ url: page(), prerender: true })}`)
    expect(rendered.statusCode).toBe(200)
    expect(rendered.headers['x-fetch-mode']).toBe('prerender')
    expect(fetched.headers['x-fetch-mode']).toBe('fetch')
    expect(rendered.body).toBe(fetched.body)
  }, 60_000)
})
