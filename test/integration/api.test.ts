// GET / end to end through inject: envelope, headers, cache, filter, embed, errors, plan gates.
import { createHash } from 'node:crypto'
import net from 'node:net'
import zlib from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { build, qs, type Built } from '../helpers/build.ts'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'
import { ERROR_CATALOG, ERROR_CODES } from '../../src/errors.ts'

const KEY = 'test-pro-key'
const HASHED_KEY = 'another-key'

let fx: FixtureServer
let app: Built
let closedPort: number

async function unusedPort (): Promise<number> {
  const server = net.createServer()
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as net.AddressInfo
  await new Promise(resolve => server.close(resolve))
  return port
}

beforeAll(async () => {
  fx = await startFixtureServer()
  closedPort = await unusedPort()
  fx.route('/redirect', (_req, res) => { res.writeHead(301, { location: '/article/' }); res.end() })
  fx.route('/loop', (req, res) => {
    const n = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('n') ?? '0')
    res.writeHead(302, { location: `/loop?n=${n + 1}` }); res.end()
  })
  fx.route('/slow', (_req, res) => { setTimeout(() => { res.writeHead(200, { 'content-type': 'text/html' }); res.end('<title>Slow</title>') }, 15_000) })
  fx.route('/server-error', (_req, res) => { res.writeHead(503, { 'content-type': 'text/html' }); res.end('<title>Down</title>') })
  fx.route('/echo-header', (req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' })
    res.end(`<title>secret=${String(req.headers['x-secret'] ?? 'none')}</title>`)
  })
  fx.route('/big', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' })
    res.end(`<title>Big</title><meta name="description" content="${'lorem ipsum '.repeat(200)}">`)
  })
  app = await build({
    ALLOW_PRIVATE_HOSTS: `${fx.host},127.0.0.1:${closedPort}`,
    API_KEYS: `${KEY},sha256:${createHash('sha256').update(HASHED_KEY).digest('hex')}`,
    FREE_DAILY_LIMIT: '1000'
  })
})

afterAll(async () => {
  await app?.close()
  await fx?.close()
})

function url (path: string): string {
  return `${fx.origin}${path}`
}

async function get (target: 'free' | 'pro', query: string, headers: Record<string, string> = {}) {
  const instance = target === 'free' ? app.free : app.pro
  return await instance.inject({
    method: 'GET',
    url: `/?${query}`,
    headers: target === 'pro' ? { 'x-api-key': KEY, ...headers } : headers
  })
}

function expectErrorEnvelope (res: Awaited<ReturnType<typeof get>>, code: keyof typeof ERROR_CATALOG): void {
  expect(res.statusCode).toBe(ERROR_CATALOG[code].status)
  expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
  expect(res.headers['cache-control']).toBe('no-store')
  const body = res.json()
  expect(body).toMatchObject({
    status: ERROR_CATALOG[code].status >= 500 ? 'error' : 'fail',
    code,
    more: `http://localhost:3000/docs#${code.toLowerCase()}`,
    id: res.headers['x-request-id']
  })
  expect(typeof body.message).toBe('string')
  expect(body.message.length).toBeGreaterThan(0)
  expect(body.data).toBeTypeOf('object')
  expect(body.data).not.toBeNull()
  expect(JSON.stringify(body)).not.toMatch(/at .*\.ts:\d+|node_modules/)
}

describe('metadata envelope', () => {
  it('returns normalized metadata with media objects and every header', async () => {
    const res = await get('free', qs({ url: url('/article/') }))
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
    const body = res.json()
    expect(body.status).toBe('success')
    expect(body.data).toMatchObject({
      title: 'Shipping faster',
      description: 'How we cut build times in half.',
      author: 'Ada Lovelace',
      publisher: 'Example Blog',
      lang: 'en',
      date: '2025-03-01T10:00:00.000Z',
      url: url('/article/'),
      image: { url: url('/article/cover.png'), type: 'png', width: 1200, height: 630, size: 3161, size_pretty: '3.16 kB' },
      logo: { url: url('/article/icon-180.png'), type: 'png', width: 180, height: 180 }
    })
    expect(body.statusCode).toBe(200)
    expect(body.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(body.redirects).toEqual([])
    expect(res.headers['x-request-id']).toMatch(/^local:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(res.headers['x-pricing-plan']).toBe('free')
    expect(res.headers['x-response-time']).toMatch(/^\d+(\.\d+)?(ms|s)$/)
    expect(res.headers['x-cache-status']).toBe('MISS')
    expect(res.headers['x-cache-ttl']).toBe('86400000')
    expect(Number(res.headers['x-timestamp'])).toBeGreaterThan(Date.now() - 60_000)
    expect(res.headers['cache-control']).toMatch(/^public, immutable, max-age=86(39\d|400)$/)
    expect(res.headers['x-fetch-mode']).toBe('fetch')
    expect(res.headers['x-fetch-time']).toMatch(/^\d+(\.\d+)?(ms|s)$/)
    expect(res.headers['server-timing']).toMatch(/cache;dur=[\d.]+, fetch;dur=[\d.]+, extract;dur=[\d.]+, cache-write;dur=[\d.]+, total;dur=[\d.]+/)
    expect(res.headers['x-rate-limit-limit']).toBe('1000')
    expect(res.headers['access-control-allow-origin']).toBe('*')
    expect(String(res.headers['access-control-expose-headers'])).toContain('x-cache-status')
    expect(res.headers['x-content-type-options']).toBe('nosniff')
  })

  it('answers on the pro listener with a registered key, plain or sha256:', async () => {
    const res = await get('pro', qs({ url: url('/article/') }))
    expect(res.statusCode).toBe(200)
    expect(res.headers['x-pricing-plan']).toBe('pro')
    expect(res.headers['x-rate-limit-limit']).toBeUndefined()
    const hashed = await get('pro', qs({ url: url('/plain/'), force: true }), { 'x-api-key': HASHED_KEY })
    expect(hashed.statusCode).toBe(200)
  })

  it('records redirects and the final url', async () => {
    const res = await get('free', qs({ url: url('/redirect'), 'meta.title': true }))
    const body = res.json()
    expect(body.redirects).toEqual([{ statusCode: 301, url: url('/redirect') }])
    expect(body.statusCode).toBe(200)
    expect(body.data).toEqual({ title: 'Shipping faster' })
  })

  it('falls back to the origin favicon for the logo and the domain for the publisher', async () => {
    const body = (await get('free', qs({ url: url('/plain/') }))).json()
    expect(body.data.title).toBe('A plain page')
    expect(body.data.logo).toMatchObject({ url: url('/favicon.png'), type: 'png', width: 32, height: 32 })
    expect(body.data.author).toBeNull()
    expect(body.data.image).toBeNull()
    expect(Object.keys(body.data).sort()).toEqual(['author', 'date', 'description', 'image', 'lang', 'logo', 'publisher', 'title', 'url'])
  })

  it('selects fields with meta.*', async () => {
    const only = (await get('free', qs({ url: url('/article/'), 'meta.title': true, 'meta.image': false }))).json()
    expect(only.data).toEqual({ title: 'Shipping faster' })
    const allBut = (await get('free', qs({ url: url('/article/'), 'meta.image': false, 'meta.logo': false }))).json()
    expect(Object.keys(allBut.data).sort()).toEqual(['author', 'date', 'description', 'lang', 'publisher', 'title', 'url'])
  })

  it('skips the fetch entirely with meta=false', async () => {
    const before = fx.hitsOf('/article/')
    const res = await get('free', qs({ url: url('/article/'), meta: false }))
    expect(res.statusCode).toBe(200)
    expect(res.headers['x-fetch-mode']).toBe('skipped')
    expect(res.headers['x-fetch-time']).toBe('0ms')
    expect(res.json()).toEqual({ status: 'success', data: {}, statusCode: null, headers: {}, redirects: [] })
    expect(fx.hitsOf('/article/')).toBe(before)
  })

  it('answers for non-HTML targets: an image and JSON', async () => {
    const image = (await get('free', qs({ url: url('/article/cover.png') }))).json()
    expect(image.status).toBe('success')
    expect(image.data.image).toMatchObject({ type: 'png', width: 1200, height: 630 })
    const json = await get('free', qs({ url: url('/data.json') }))
    expect(json.statusCode).toBe(200)
    expect(json.json().data.title).toBeNull()
    expect(json.json().data.url).toBe(url('/data.json'))
  })

  it('reports a target 5xx as a success, cached for one minute at most', async () => {
    const res = await get('free', qs({ url: url('/server-error') }))
    expect(res.statusCode).toBe(200)
    expect(res.json().statusCode).toBe(503)
    expect(res.json().data.title).toBe('Down')
    expect(res.headers['x-cache-ttl']).toBe('60000')
  })

  it('compresses bodies over 1 KiB as the client asks', async () => {
    const res = await app.free.inject({ method: 'GET', url: `/?${qs({ url: url('/big') })}`, headers: { 'accept-encoding': 'br' } })
    expect(res.headers['content-encoding']).toBe('br')
    expect(String(res.headers.vary)).toMatch(/accept-encoding/i)
    expect(JSON.parse(zlib.brotliDecompressSync(res.rawPayload).toString()).data.title).toBe('Big')
  })

  it('answers HEAD like GET without a body', async () => {
    const res = await app.free.inject({ method: 'HEAD', url: `/?${qs({ url: url('/article/') })}` })
    expect(res.statusCode).toBe(200)
    expect(res.body).toBe('')
    expect(res.headers['x-cache-status']).toBeDefined()
  })
})

describe('cache', () => {
  it('is a HIT for the same request spelled and ordered differently, with no fetch', async () => {
    const target = url('/article/?cachetest=1')
    const first = await get('free', `url=${encodeURIComponent(target)}&meta.title=true&screenshot=false&wait_until=auto`)
    expect(first.headers['x-cache-status']).toBe('MISS')
    const hits = fx.hitsOf('/article/')
    const second = await get('free', `waitUntil=auto&meta.title&url=${encodeURIComponent(target)}&v=42`)
    expect(second.headers['x-cache-status']).toBe('HIT')
    expect(second.headers['x-timestamp']).toBe(first.headers['x-timestamp'])
    expect(second.headers['x-fetch-time']).toBe(first.headers['x-fetch-time'])
    expect(second.headers['cache-control']).toMatch(/^public, immutable, max-age=\d+$/)
    expect(second.body).toBe(first.body)
    expect(fx.hitsOf('/article/')).toBe(hits)
  })

  it('recomputes with force (BYPASS) and cacheKey/ttl split entries on pro', async () => {
    const q = { url: url('/plain/?forcetest=1'), 'meta.title': true }
    await get('free', qs(q))
    const forced = await get('free', qs({ ...q, force: true }))
    expect(forced.headers['x-cache-status']).toBe('BYPASS')
    expect(forced.headers['cache-control']).toBe('public, must-revalidate, max-age=0')
    const proFirst = await get('pro', qs({ ...q, cacheKey: 'segment' }))
    expect(proFirst.headers['x-cache-status']).toBe('MISS')
    const ttl = await get('pro', qs({ ...q, ttl: '1h' }))
    expect(ttl.headers['x-cache-status']).toBe('MISS')
    expect(ttl.headers['x-cache-ttl']).toBe('3600000')
    expect((await get('pro', qs({ ...q, ttl: 3_600_000 }))).headers['x-cache-status']).toBe('HIT')
  })

  it('answers each hit with the headers of the entry it holds now, and its own request headers', async () => {
    const q = qs({ url: url('/plain/?preparedtest=1'), 'meta.title': true })
    await get('pro', q)
    const a = await get('pro', q)
    const b = await get('pro', q)
    expect([a.headers['x-cache-status'], b.headers['x-cache-status']]).toEqual(['HIT', 'HIT'])
    expect(b.headers['x-timestamp']).toBe(a.headers['x-timestamp'])
    expect(b.headers['x-request-id']).not.toBe(a.headers['x-request-id'])
    for (const res of [a, b]) {
      expect(res.headers['x-response-time']).toMatch(/^[\d.]+m?s$/)
      expect(res.headers['server-timing']).toMatch(/^cache;dur=\d+\.\d, total;dur=\d+\.\d$/)
    }
    await new Promise(r => setTimeout(r, 5))
    const forced = await get('pro', `${q}&force=true`)
    expect(forced.headers['x-cache-status']).toBe('BYPASS')
    expect(Number(forced.headers['x-timestamp'])).toBeGreaterThan(Number(a.headers['x-timestamp']))
    // The entry changed: the next hit carries the new entry's headers, not those prepared for the old one.
    const after = await get('pro', q)
    expect(after.headers['x-cache-status']).toBe('HIT')
    expect(after.headers['x-timestamp']).toBe(forced.headers['x-timestamp'])
    expect(after.headers['x-fetch-time']).toBe(forced.headers['x-fetch-time'])
    expect(after.body).toBe(forced.body)
  })

  it('serves a STALE copy within staleTtl and refreshes it in the background', async () => {
    const q = { url: url('/plain/?staletest=1'), 'meta.title': true, ttl: '1min', staleTtl: 59_000 }
    const first = await get('pro', qs(q))
    expect(first.headers['x-cache-status']).toBe('MISS')
    await new Promise(r => setTimeout(r, 1100))
    const stale = await get('pro', qs(q))
    expect(stale.headers['x-cache-status']).toBe('STALE')
    expect(stale.headers['cache-control']).toBe('private, must-revalidate, max-age=0')
    expect(stale.headers.vary).toBe('x-api-key')
    expect(stale.headers['x-timestamp']).toBe(first.headers['x-timestamp'])
    await Promise.all([...app.ctx.background])
    const refreshed = await get('pro', qs({ ...q, staleTtl: false }))
    expect(refreshed.headers['x-cache-status']).toBe('HIT')
    expect(Number(refreshed.headers['x-timestamp'])).toBeGreaterThan(Number(first.headers['x-timestamp']))
  })

  it('computes identical concurrent requests once', async () => {
    fx.route('/counted', (_req, res) => { setTimeout(() => { res.writeHead(200, { 'content-type': 'text/html' }); res.end('<title>Counted</title>') }, 300) })
    const q = qs({ url: url('/counted'), 'meta.title': true })
    const answers = await Promise.all(Array.from({ length: 10 }, async () => await get('free', q)))
    expect(answers.every(a => a.statusCode === 200 && a.json().data.title === 'Counted')).toBe(true)
    expect(answers.every(a => a.headers['x-cache-status'] === 'MISS')).toBe(true)
    expect(fx.hitsOf('/counted')).toBe(1)
  })

  it('does not cache errors', async () => {
    const q = qs({ url: url('/loop') })
    expect((await get('free', q)).statusCode).toBe(400)
    const before = fx.hitsOf('/loop')
    expect((await get('free', q)).statusCode).toBe(400)
    expect(fx.hitsOf('/loop')).toBeGreaterThan(before)
  })

  it('keys results by forwarded header values, so one client never reads another\'s', async () => {
    const a = await get('pro', qs({ url: url('/echo-header'), 'meta.title': true }), { 'x-api-header-x-secret': 'alpha' })
    const b = await get('pro', qs({ url: url('/echo-header'), 'meta.title': true, 'headers.x-secret': 'beta' }))
    expect(a.json().data.title).toBe('secret=alpha')
    expect(b.json().data.title).toBe('secret=beta')
    expect(b.headers['x-cache-status']).toBe('MISS')
  })
})

describe('filter and embed', () => {
  const target = () => url('/article/')

  it('keeps only the filtered paths', async () => {
    const body = (await get('free', qs({ url: target(), filter: 'title,image.url,nope' }))).json()
    expect(body.data).toEqual({ title: 'Shipping faster', image: { url: url('/article/cover.png') } })
    expect(body.status).toBe('success')
  })

  it('embeds a text field as text/plain and an object as JSON, with the safety headers', async () => {
    const text = await get('free', qs({ url: target(), embed: 'title' }))
    expect(text.statusCode).toBe(200)
    expect(text.headers['content-type']).toBe('text/plain; charset=utf-8')
    expect(text.body).toBe('Shipping faster')
    expect(text.headers['content-security-policy']).toBe("sandbox; script-src 'none'")
    expect(text.headers['x-content-type-options']).toBe('nosniff')
    expect(text.headers['x-cache-status']).toBeDefined()
    const object = await get('free', qs({ url: target(), embed: 'image', filter: 'title' }))
    expect(object.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(object.json()).toMatchObject({ url: url('/article/cover.png'), width: 1200 })
  })

  it('streams the bytes of a media url, and stream= is its alias', async () => {
    const res = await get('free', qs({ url: target(), embed: 'image.url' }))
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('image/png')
    expect(res.headers['content-length']).toBe('3161')
    expect(res.rawPayload.subarray(1, 4).toString()).toBe('PNG')
    const alias = await get('free', qs({ url: target(), stream: 'logo' }))
    expect(alias.headers['content-type']).toBe('image/png')
    expect(alias.rawPayload.length).toBe(385)
  })

  it('answers ENOTFOUND for an embed path with no value', async () => {
    const res = await get('free', qs({ url: target(), embed: 'nothing.here' }))
    expectErrorEnvelope(res, 'ENOTFOUND')
    expect(res.json().data.embed).toEqual(expect.any(String))
  })
})

describe('errors', () => {
  it.each([
    ['missing url', '', 'EINVALURL'],
    ['unparseable url', 'url=no', 'EINVALURL'],
    ['non-http scheme', 'url=ftp%3A%2F%2Fexample.com%2F', 'EINVALURL'],
    ['rejected path parameter', 'url=https%3A%2F%2Fexample.com&screenshot.path=%2Ftmp%2Fx', 'EINVALQUERY'],
    ['bad boolean', 'url=https%3A%2F%2Fexample.com&force=maybe', 'EINVALQUERY'],
    ['localhost', 'url=http%3A%2F%2Flocalhost%2F', 'EFORBIDDENURL']
  ])('%s -> %s', async (_name, query, code) => {
    expectErrorEnvelope(await get('free', query), code as keyof typeof ERROR_CATALOG)
  })

  it('refuses a loopback port that is not allowed, without connecting to it', async () => {
    const other = await startFixtureServer()
    try {
      const res = await get('free', qs({ url: `${other.origin}/` }))
      expectErrorEnvelope(res, 'EFORBIDDENURL')
      expect(other.hits.size).toBe(0)
    } finally {
      await other.close()
    }
  })

  it('EINVALURL when the target cannot be reached', async () => {
    expectErrorEnvelope(await get('free', qs({ url: `http://127.0.0.1:${closedPort}/` })), 'EINVALURL')
  })

  it('EMAXREDIRECTS after more than 10 redirects', async () => {
    expectErrorEnvelope(await get('free', qs({ url: url('/loop') , force: true })), 'EMAXREDIRECTS')
  })

  it('ETIMEOUT when the request runs out of time', async () => {
    const started = Date.now()
    const res = await get('free', qs({ url: url('/slow'), timeout: '500ms', prerender: false }))
    expectErrorEnvelope(res, 'ETIMEOUT')
    // The page would answer after 15 s: well under that is the 500 ms deadline, with room for a loaded machine.
    expect(Date.now() - started).toBeLessThan(8000)
  })

  it('EPRO for a key on the free listener, EAUTH for a missing or unknown key on pro', async () => {
    const epro = await get('free', qs({ url: url('/article/') }), { 'x-api-key': KEY })
    expectErrorEnvelope(epro, 'EPRO')
    expect(epro.json().message).toMatch(/pro/)
    const missing = await app.pro.inject({ method: 'GET', url: `/?${qs({ url: url('/article/') })}` })
    expectErrorEnvelope(missing, 'EAUTH')
    expect(missing.json().message).toBe('Invalid API key. Make sure you are attaching your API key as `x-api-key` header.')
    expectErrorEnvelope(await get('pro', qs({ url: url('/article/') }), { 'x-api-key': 'wrong' }), 'EAUTH')
  })

  it.each([
    ['ttl', 'ttl=100', 'ETTL'],
    ['staleTtl', 'staleTtl=1h', 'ESTTL'],
    ['cacheKey', 'cacheKey=x', 'ECACHEKEY'],
    ['headers', 'headers.cookie=a', 'EHEADERS'],
    ['proxy', 'proxy=http%3A%2F%2Fp%3A8080', 'EPROXY'],
    ['filename', 'filename=shot', 'EFILENAME']
  ])('plan gate on free: %s -> %s', async (_name, extra, code) => {
    expectErrorEnvelope(await get('free', `url=https%3A%2F%2Fexample.com&${extra}`), code as keyof typeof ERROR_CATALOG)
  })

  it('EHEADERS for an x-api-header-* request header on free', async () => {
    expectErrorEnvelope(await get('free', qs({ url: url('/article/') }), { 'x-api-header-cookie': 'a=b' }), 'EHEADERS')
  })

  it.each([
    ['data.foo=html', 'EINVALDATA'],
    ['data.x.selector=h1&data.x.type=nonsense', 'EINVALDATA'],
    ['data.x.evaluate=%29(', 'EINVALEVAL'],
    ['function=not%20a%20function%20(', 'EINVALFUNCTION'],
    ['screenshot.overlay.background=notacolour', 'EINVALOVERLAYBG'],
    ['proxy=gopher%3A%2F%2Fx', 'EINVALPROXY'],
    ['device=Nokia%203310', 'EINVALQUERY'],
    ['pdf.scale=5', 'EINVALQUERY'],
    ['timeout=0', 'EINVALQUERY']
  ])('%s -> %s on pro', async (extra, code) => {
    const res = await get('pro', `url=https%3A%2F%2Fexample.com&${extra}`)
    expectErrorEnvelope(res, code as keyof typeof ERROR_CATALOG)
    expect(Object.keys(res.json().data).length).toBeGreaterThan(0)
  })

  it('EINVALTTL and EINVALSTTL on pro', async () => {
    expectErrorEnvelope(await get('pro', 'url=https%3A%2F%2Fexample.com&ttl=100'), 'EINVALTTL')
    expectErrorEnvelope(await get('pro', 'url=https%3A%2F%2Fexample.com&ttl=1h&staleTtl=2h'), 'EINVALSTTL')
  })

  it('ENOTFOUND for other paths and methods, as JSON', async () => {
    expectErrorEnvelope(await app.free.inject({ method: 'GET', url: '/nope' }), 'ENOTFOUND')
    expectErrorEnvelope(await app.pro.inject({ method: 'POST', url: '/', payload: 'x' }), 'ENOTFOUND')
  })
})

describe('operations', () => {
  it('answers CORS preflights on any path', async () => {
    const res = await app.free.inject({
      method: 'OPTIONS',
      url: '/anything',
      headers: { origin: 'https://site.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-api-key, x-custom' }
    })
    expect(res.statusCode).toBe(204)
    expect(res.headers['access-control-allow-origin']).toBe('*')
    expect(res.headers['access-control-allow-methods']).toBe('GET, HEAD, OPTIONS')
    expect(res.headers['access-control-allow-headers']).toBe('x-api-key, x-custom')
    expect(res.headers['access-control-max-age']).toBe('86400')
  })

  it('serves /health, /ready and /docs with one anchor per error code on both listeners', async () => {
    for (const instance of [app.free, app.pro]) {
      expect((await instance.inject('/health')).json()).toEqual({ status: 'ok' })
      expect((await instance.inject('/ready')).json()).toMatchObject({ status: 'ok', checks: { store: 'ok' } })
      const docs = await instance.inject('/docs')
      expect(docs.headers['content-type']).toBe('text/html; charset=utf-8')
      for (const code of ERROR_CODES) expect(docs.body).toContain(`id="${code.toLowerCase()}"`)
      expect(docs.body).toContain('waitForSelector')
      const openapi = (await instance.inject('/openapi.json')).json()
      expect(openapi.openapi).toBe('3.1.0')
    }
  })

  it('never logs keys, cookies, authorization or forwarded header values', async () => {
    await get('pro', qs({ url: url('/echo-header'), 'headers.x-secret': 'query-secret-value', force: true }), {
      'x-api-key': KEY,
      cookie: 'session=cookie-secret-value',
      authorization: 'Bearer auth-secret-value',
      'x-api-header-x-other': 'header-secret-value'
    })
    await get('free', qs({ url: url('/article/') }), { 'x-api-key': 'free-key-secret-value' })
    const all = app.rawLogs.join('\n')
    expect(all).toContain('"reqId"')
    for (const secret of [KEY, 'cookie-secret-value', 'auth-secret-value', 'header-secret-value', 'query-secret-value', 'free-key-secret-value']) {
      expect(all).not.toContain(secret)
    }
  })

  it('tags every log line of a request with its id', async () => {
    const res = await get('free', qs({ url: url('/plain/?logtest=1') }))
    const id = res.headers['x-request-id']
    expect(app.logs.filter(l => l.reqId === id).length).toBeGreaterThanOrEqual(1)
  })
})
