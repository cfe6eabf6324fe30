// The hit lane (src/routes/hit-lane.ts): a cache hit held in process is answered before Fastify, and must answer
// exactly as Fastify's path does (status, headers in order, body, access line, metrics, quota); everything it is not
// sure of must reach Fastify. Real listeners at info level (debug logging turns the lane off).
import http from 'node:http'
import { gunzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.ts'
import { build, qs, type Built } from '../helpers/build.ts'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'

const KEY = 'lane-key'

interface Answer { status: number, headers: Array<[string, string]>, body: string, raw: Buffer }

function get (base: string, path: string, headers: Record<string, string> = {}, method = 'GET', body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${path}`, { method, headers, agent: false }, res => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        const pairs: Array<[string, string]> = []
        for (let i = 0; i < res.rawHeaders.length; i += 2) pairs.push([res.rawHeaders[i]!.toLowerCase(), res.rawHeaders[i + 1]!])
        const raw = Buffer.concat(chunks)
        resolve({ status: res.statusCode ?? 0, headers: pairs, body: raw.toString('utf8'), raw })
      })
    })
    req.on('error', reject)
    req.end(body)
  })
}

const header = (a: Answer, name: string): string | undefined => a.headers.find(([n]) => n === name)?.[1]

/** The headers with the values that change from request to request replaced by their shape. */
function shape (a: Answer): Array<[string, string]> {
  return a.headers.filter(([name]) => name !== 'date').map(([name, value]) => {
    if (name === 'x-request-id') return [name, /^[\w-]+:[0-9a-f-]{36}$/.test(value) ? 'id' : value]
    if (name === 'x-response-time') return [name, /^\d+ms$/.test(value) ? 'ms' : value]
    if (name === 'server-timing') return [name, /^cache;dur=\d+\.\d, total;dur=\d+\.\d$/.test(value) ? 'timing' : value]
    if (name === 'cache-control') return [name, value.replace(/max-age=\d+/, 'max-age=n')]
    return [name, value]
  })
}

interface Listener { app: FastifyInstance, url: string, reachedFastify: () => number }

async function listen (built: Built, plan: 'free' | 'pro', hitLane: boolean): Promise<Listener> {
  const app = await buildApp(built.ctx, { plan, hitLane })
  let reached = 0
  app.addHook('onRequest', (_request, _reply, done) => { reached++; done() })
  const url = await app.listen({ port: 0, host: '127.0.0.1' })
  return { app, url, reachedFastify: () => reached }
}

let fx: FixtureServer
let built: Built
let lane: { pro: Listener, free: Listener }
let path: { pro: Listener, free: Listener }
const pathListener = (): Listener => path.pro

beforeAll(async () => {
  fx = await startFixtureServer()
  built = await build({ ALLOW_PRIVATE_HOSTS: fx.host, API_KEYS: KEY, LOG_LEVEL: 'info', FREE_DAILY_LIMIT: '1000' })
  lane = { pro: await listen(built, 'pro', true), free: await listen(built, 'free', true) }
  path = { pro: await listen(built, 'pro', false), free: await listen(built, 'free', false) }
})
afterAll(async () => {
  for (const l of [lane.pro, lane.free, path.pro, path.free]) await l.app.close()
  await built.close()
  await fx.close()
})

const accessLines = (): Array<Record<string, unknown>> => built.logs.filter(l => l.msg === 'request')

describe('the hit lane', () => {
  it('answers a pro hit as the Fastify path does, without reaching Fastify, with the same access line and metrics', async () => {
    const query = `/?${qs({ url: `${fx.origin}/article/?lane=pro` })}`
    const miss = await get(lane.pro.url, query, { 'x-api-key': KEY })
    expect(header(miss, 'x-cache-status')).toBe('MISS')
    const before = lane.pro.reachedFastify()
    const linesBefore = accessLines().length
    const metricsBefore = await built.ctx.metrics.scrape()

    const viaLane = await get(lane.pro.url, query, { 'x-api-key': KEY })
    expect(lane.pro.reachedFastify()).toBe(before)
    const viaPath = await get(path.pro.url, query, { 'x-api-key': KEY })
    expect(path.pro.reachedFastify()).toBeGreaterThan(0)

    expect(viaLane.status).toBe(200)
    expect(header(viaLane, 'x-cache-status')).toBe('HIT')
    expect(viaLane.body).toBe(viaPath.body)
    expect(viaLane.body).toBe(miss.body)
    expect(shape(viaLane)).toEqual(shape(viaPath))
    expect(header(viaLane, 'content-length')).toBe(String(Buffer.byteLength(viaLane.body)))

    // Both answers logged the same line (the lane's first), with their own request ids.
    await new Promise(resolve => setTimeout(resolve, 50))
    const [laneLine, pathLine] = accessLines().slice(linesBefore)
    expect(laneLine).toBeDefined()
    const strip = (l: Record<string, unknown>): Record<string, unknown> => ({ ...l, time: 0, ms: 0, reqId: '' })
    expect(strip(laneLine!)).toEqual(strip(pathLine!))
    expect(laneLine!.reqId).toBe(header(viaLane, 'x-request-id'))
    expect(laneLine).toMatchObject({ method: 'GET', status: 200, cache: 'HIT', listener: 'pro' })

    // Two more 200s and two more HITs in the metrics: one from each path.
    const after = (await built.ctx.metrics.scrape()).body
    const count = (body: string, re: RegExp): number => Number(re.exec(body)?.[1] ?? 0)
    const requests = /pagecast_requests_total\{listener="pro",status="200",code="none"\} (\d+)/
    const hits = /pagecast_cache_total\{status="HIT"\} (\d+)/
    expect(count(after, requests) - count(metricsBefore.body, requests)).toBe(2)
    expect(count(after, hits) - count(metricsBefore.body, hits)).toBe(2)
  })

  it('counts the free quota once per hit and hands a spent quota to the usual ERATE answer', async () => {
    const query = `/?${qs({ url: `${fx.origin}/article/?lane=free` })}`
    const limited = await build({ ALLOW_PRIVATE_HOSTS: fx.host, LOG_LEVEL: 'info', FREE_DAILY_LIMIT: '4' })
    const free = await listen(limited, 'free', true)
    try {
      const remaining: Array<string | undefined> = []
      for (let i = 0; i < 4; i++) {
        const res = await get(free.url, query)
        expect(res.status).toBe(200)
        remaining.push(header(res, 'x-rate-limit-remaining'))
      }
      expect(remaining).toEqual(['3', '2', '1', '0'])
      // Only the first (the miss) reached Fastify.
      expect(free.reachedFastify()).toBe(1)
      const refused = await get(free.url, query)
      expect(refused.status).toBe(429)
      expect(JSON.parse(refused.body)).toMatchObject({ status: 'fail', code: 'ERATE' })
      expect(header(refused, 'retry-after')).toMatch(/^\d+$/)
      expect(header(refused, 'x-rate-limit-remaining')).toBe('0')
      expect(free.reachedFastify()).toBe(2)
    } finally {
      await free.app.close()
      await limited.close()
    }
  })

  it('answers a free hit with the same headers as the Fastify path, quota headers in place', async () => {
    const query = `/?${qs({ url: `${fx.origin}/article/?lane=free-shape` })}`
    await get(lane.free.url, query)
    const before = lane.free.reachedFastify()
    const viaLane = await get(lane.free.url, query)
    expect(lane.free.reachedFastify()).toBe(before)
    const viaPath = await get(path.free.url, query)
    const rateFree = (a: Answer): Array<[string, string]> => shape(a).map(([n, v]) => [n, n.startsWith('x-rate-limit-') ? 'n' : v])
    expect(rateFree(viaLane)).toEqual(rateFree(viaPath))
    expect(Number(header(viaPath, 'x-rate-limit-remaining'))).toBe(Number(header(viaLane, 'x-rate-limit-remaining')) - 1)
  })

  it('leaves to Fastify what it must not answer (bad keys, keys on free, HEAD, bodies) and compresses as Fastify does', async () => {
    const query = `/?${qs({ url: `${fx.origin}/article/?lane=others`, 'data.head.selector': 'head', 'data.head.attr': 'html' })}`
    const first = await get(lane.pro.url, query, { 'x-api-key': KEY })
    expect(Buffer.byteLength(first.body)).toBeGreaterThanOrEqual(1024)
    let reached = lane.pro.reachedFastify()
    const expectFastify = (l: Listener, n: number): void => { expect(l.reachedFastify()).toBe(n) }

    const wrongKey = await get(lane.pro.url, query, { 'x-api-key': 'nope' })
    expect(JSON.parse(wrongKey.body).code).toBe('EAUTH')
    expectFastify(lane.pro, ++reached)

    const freeReached = lane.free.reachedFastify()
    const keyOnFree = await get(lane.free.url, query, { 'x-api-key': KEY })
    expect(JSON.parse(keyOnFree.body).code).toBe('EPRO')
    expectFastify(lane.free, freeReached + 1)

    const head = await get(lane.pro.url, query, { 'x-api-key': KEY }, 'HEAD')
    expect(head.status).toBe(200)
    expectFastify(lane.pro, ++reached)

    const withBody = await get(lane.pro.url, query, { 'x-api-key': KEY, 'content-type': 'text/plain', 'content-length': '5' }, 'GET', 'hello')
    expect(withBody.status).toBe(200)
    expect(header(withBody, 'x-cache-status')).toBe('HIT')
    expectFastify(lane.pro, ++reached)

    // Compressed as @fastify/compress compresses it, byte for byte, by the lane (once per entry and encoding).
    for (const acceptEncoding of ['gzip', 'br', 'gzip, deflate, br', '*', 'deflate', 'identity', 'br;q=0, gzip;q=0.5']) {
      const viaLane = await get(lane.pro.url, query, { 'x-api-key': KEY, 'accept-encoding': acceptEncoding })
      expectFastify(lane.pro, reached)
      const viaPath = await get(path.pro.url, query, { 'x-api-key': KEY, 'accept-encoding': acceptEncoding })
      expect(shape(viaLane), acceptEncoding).toEqual(shape(viaPath))
      expect(viaLane.raw.equals(viaPath.raw), acceptEncoding).toBe(true)
    }
    const gzip = await get(lane.pro.url, query, { 'x-api-key': KEY, 'accept-encoding': 'gzip' })
    expect(header(gzip, 'content-encoding')).toBe('gzip')
    expect(gunzipSync(gzip.raw).toString('utf8')).toBe(first.body)
    expect(header(await get(lane.pro.url, query, { 'x-api-key': KEY, 'accept-encoding': 'deflate' }), 'content-encoding')).toBeUndefined()
    // x-no-compression, as @fastify/compress reads it.
    const none = await get(lane.pro.url, query, { 'x-api-key': KEY, 'accept-encoding': 'gzip', 'x-no-compression': '1' })
    expect(header(none, 'content-encoding')).toBeUndefined()
    expectFastify(lane.pro, reached)

    // filter and embed are shaped by the Fastify path.
    await get(lane.pro.url, `${query}&filter=title`, { 'x-api-key': KEY })
    const filtered = await get(lane.pro.url, `${query}&filter=title`, { 'x-api-key': KEY })
    expect(Object.keys(JSON.parse(filtered.body).data)).toEqual(['title'])
    expectFastify(lane.pro, reached + 2)
  })

  it('answers the content endpoints\' hits (query and path forms) as the Fastify path does, x-markdown-tokens included', async () => {
    const target = `${fx.origin}/article/?lane=content`
    for (const path of [`/markdown?${qs({ url: target })}`, `/markdown/${target}`, `/text?${qs({ url: target })}`, `/html/${target}`]) {
      const first = await get(lane.pro.url, path, { 'x-api-key': KEY })
      expect(first.status).toBe(200)
      // The second answer may still need Fastify (the first counted the tokens on the entry it computed); the third not.
      await get(lane.pro.url, path, { 'x-api-key': KEY })
      const before = lane.pro.reachedFastify()
      const viaLane = await get(lane.pro.url, path, { 'x-api-key': KEY })
      expect(lane.pro.reachedFastify(), path).toBe(before)
      const fastify = await get(pathListener().url, path, { 'x-api-key': KEY })
      expect(viaLane.body).toBe(fastify.body)
      expect(viaLane.body).toBe(first.body)
      expect(shape(viaLane), path).toEqual(shape(fastify))
      if (path.startsWith('/markdown')) expect(header(viaLane, 'x-markdown-tokens')).toMatch(/^\d+$/)
      expect(header(viaLane, 'content-security-policy')).toBe("sandbox; script-src 'none'")
    }
    // A path with an invalid escape is left to Fastify's router, whatever it answers.
    const before = lane.pro.reachedFastify()
    const odd = await get(lane.pro.url, `/markdown/${target}%E0%A4%A`, { 'x-api-key': KEY })
    const fastify = await get(pathListener().url, `/markdown/${target}%E0%A4%A`, { 'x-api-key': KEY })
    expect(lane.pro.reachedFastify()).toBe(before + 1)
    expect(odd.status).toBe(fastify.status)
  })

  it('answers a cached tools/call on pro as the Fastify path does, and hands every other POST /mcp over with its body', async () => {
    const target = `${fx.origin}/article/?lane=mcp`
    await get(lane.pro.url, `/?${qs({ url: target })}`, { 'x-api-key': KEY })
    const post = (l: Listener, message: unknown, headers: Record<string, string> = { 'x-api-key': KEY }, raw?: string): Promise<Answer> => {
      const body = raw ?? JSON.stringify(message)
      return get(l.url, '/mcp', { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'content-length': String(Buffer.byteLength(body)), ...headers }, 'POST', body)
    }
    const call = (id: number, args: Record<string, unknown> = { url: target }): unknown => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'microlink_metadata', arguments: args } })

    let reached = lane.pro.reachedFastify()
    const viaLane = await post(lane.pro, call(7))
    expect(lane.pro.reachedFastify()).toBe(reached)
    const viaPath = await post(path.pro, call(7))
    expect(viaLane.status).toBe(200)
    expect(viaLane.body).toBe(viaPath.body)
    expect(JSON.parse(viaLane.body)).toMatchObject({ jsonrpc: '2.0', id: 7, result: { structuredContent: { data: { title: 'Shipping faster' } } } })
    expect(shape(viaLane)).toEqual(shape(viaPath))
    // The Bearer form of the key too.
    const bearer = await post(lane.pro, call(8), { authorization: `Bearer ${KEY}` })
    expect(JSON.parse(bearer.body).id).toBe(8)
    expect(lane.pro.reachedFastify()).toBe(reached)

    // Handed over, body and all: another method, an apiKey argument, a batch, bad JSON, a call not in hand, gzip.
    const handedOver: Array<[string, () => Promise<Answer>, (a: Answer) => void]> = [
      ['tools/list', async () => await post(lane.pro, { jsonrpc: '2.0', id: 1, method: 'tools/list' }), a => { expect(JSON.parse(a.body).result.tools.length).toBe(19) }],
      ['apiKey', async () => await post(lane.pro, call(2, { url: target, apiKey: KEY })), a => { expect(JSON.parse(a.body).result.structuredContent.data.title).toBe('Shipping faster') }],
      ['batch', async () => await post(lane.pro, [call(3)]), a => { const v = JSON.parse(a.body) as { id: number } | Array<{ id: number }>; expect((Array.isArray(v) ? v[0]! : v).id).toBe(3) }],
      ['bad JSON', async () => await post(lane.pro, undefined, undefined, '{"jsonrpc":'), a => { expect(JSON.parse(a.body).code).toBe('EINVALQUERY') }],
      ['poisoned', async () => await post(lane.pro, undefined, undefined, '{"jsonrpc":"2.0","id":4,"method":"tools/call","__proto__":{"x":1}}'), a => { expect(a.status).toBe(400) }],
      ['not in hand', async () => await post(lane.pro, call(5, { url: `${target}&other=1` })), a => { expect(JSON.parse(a.body).id).toBe(5) }],
      ['gzip', async () => await post(lane.pro, call(6), { 'x-api-key': KEY, 'accept-encoding': 'gzip' }), a => { expect(header(a, 'content-encoding')).toBe('gzip') }]
    ]
    for (const [name, send, check] of handedOver) {
      const answer = await send()
      // The same POST to the listener without the lane answers the same.
      const direct = await (async () => { const saved = lane.pro; lane.pro = path.pro; try { return await send() } finally { lane.pro = saved } })()
      check(answer)
      expect(answer.status, name).toBe(direct.status)
      expect(lane.pro.reachedFastify(), name).toBe(++reached)
    }
  })

  it('answers a repeated tools/call under each new id as the Fastify path does, and hands over what the checks refuse', async () => {
    const target = `${fx.origin}/article/?lane=memo`
    await get(lane.pro.url, `/?${qs({ url: target, prerender: 'false' })}`, { 'x-api-key': KEY })
    const post = (l: Listener, body: string, headers: Record<string, string> = {}): Promise<Answer> =>
      get(l.url, '/mcp', { 'content-type': 'application/json', 'x-api-key': KEY, 'content-length': String(Buffer.byteLength(body)), ...headers }, 'POST', body)
    // As the SDK's client writes it: the id last.
    const call = (id: unknown, args: Record<string, unknown> = { url: target, prerender: false }): string =>
      JSON.stringify({ method: 'tools/call', params: { name: 'microlink_metadata', arguments: args }, jsonrpc: '2.0', id })
    let reached = lane.pro.reachedFastify()
    for (const id of [1, 2, 'a1b2', 3, -4, 'x/y+z', 2]) {
      const viaLane = await post(lane.pro, call(id))
      const viaPath = await post(path.pro, call(id))
      expect(viaLane.body).toBe(viaPath.body)
      expect(JSON.parse(viaLane.body).id).toBe(id)
      expect(shape(viaLane)).toEqual(shape(viaPath))
    }
    expect(lane.pro.reachedFastify()).toBe(reached)
    // The same call with arguments the schema refuses, an id the SDK refuses, another tool: Fastify's, as without the lane.
    for (const body of [call(5, { url: target, prerender: 'sometimes' }), call(5, { url: target, prerender: false, extra: 1 }), call(null), call(1.5), call(5).replace('microlink_metadata', 'microlink_nothing')]) {
      const viaLane = await post(lane.pro, body)
      expect(lane.pro.reachedFastify(), body).toBe(++reached)
      const viaPath = await post(path.pro, body)
      expect(viaLane.status, body).toBe(viaPath.status)
      expect(viaLane.body.replace(/"id":"[^"]*"/g, ''), body).toBe(viaPath.body.replace(/"id":"[^"]*"/g, ''))
    }
    // A forwarded x-api-header-* makes another request of the same call: not in hand, so Fastify's too.
    await post(lane.pro, call(6), { 'x-api-header-x-test': '1' })
    expect(lane.pro.reachedFastify()).toBe(++reached)
    expect(JSON.parse((await post(lane.pro, call(7))).body).id).toBe(7)
    expect(lane.pro.reachedFastify()).toBe(reached)
  })

  it('reads the client address as TRUST_PROXY says, as Fastify does (a hop count trusts that many hops)', async () => {
    const query = `/?${qs({ url: `${fx.origin}/article/?lane=proxy` })}`
    for (const [trust, forwarded, sameSubject] of [['1', '192.0.2.7', false], ['127.0.0.1', '192.0.2.8', false], ['false', '192.0.2.9', true]] as const) {
      const trusting = await build({ ALLOW_PRIVATE_HOSTS: fx.host, LOG_LEVEL: 'info', TRUST_PROXY: trust, FREE_DAILY_LIMIT: '100' })
      const free = await listen(trusting, 'free', true)
      try {
        await get(free.url, query) // the miss, from the loopback client itself
        const forwardedHit = await get(free.url, query, { 'x-forwarded-for': forwarded })
        expect(free.reachedFastify()).toBe(1)
        // A trusted proxy's client is counted apart from the proxy's own requests; an untrusted header is ignored.
        expect(header(forwardedHit, 'x-rate-limit-remaining')).toBe(sameSubject ? '98' : '99')
      } finally {
        await free.app.close()
        await trusting.close()
      }
    }
  })
})
