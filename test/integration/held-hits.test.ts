// Held hits on the one path (docs/architecture.md#prepared-answers): a cache hit held in process is answered by
// Fastify from the entry's prepared answer, and leaves what every answer leaves: its access line, its metrics, its
// quota count; a cached tools/call is answered under each id. test/integration/answers.test.ts holds the bytes.
import http from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { build, qs, type Built } from '../helpers/build.ts'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'

const KEY = 'held-key'

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

let fx: FixtureServer
let built: Built
const url = { free: '', pro: '' }

beforeAll(async () => {
  fx = await startFixtureServer()
  built = await build({ ALLOW_PRIVATE_HOSTS: fx.host, API_KEYS: KEY, LOG_LEVEL: 'info', FREE_DAILY_LIMIT: '1000' })
  url.pro = await built.pro.listen({ port: 0, host: '127.0.0.1' })
  url.free = await built.free.listen({ port: 0, host: '127.0.0.1' })
})
afterAll(async () => {
  await built.close()
  await fx.close()
})

const accessLines = (): Array<Record<string, unknown>> => built.logs.filter(l => l.msg === 'request')

describe('held hits', () => {
  it('logs a held hit\'s access line and counts it in the metrics as a miss is', async () => {
    const query = `/?${qs({ url: `${fx.origin}/article/?held=pro` })}`
    const miss = await get(url.pro, query, { 'x-api-key': KEY })
    expect(header(miss, 'x-cache-status')).toBe('MISS')
    await new Promise(resolve => setTimeout(resolve, 50))
    const linesBefore = accessLines().length
    const metricsBefore = await built.ctx.metrics.scrape()
    const hits = [await get(url.pro, query, { 'x-api-key': KEY }), await get(url.pro, query, { 'x-api-key': KEY, 'accept-encoding': 'gzip' })]
    for (const hit of hits) expect(header(hit, 'x-cache-status')).toBe('HIT')
    expect(hits[0]!.body).toBe(miss.body)

    await new Promise(resolve => setTimeout(resolve, 50))
    const lines = accessLines().slice(linesBefore)
    expect(lines).toHaveLength(2)
    lines.forEach((line, i) => {
      expect(line.reqId).toBe(header(hits[i]!, 'x-request-id'))
      expect(line).toMatchObject({ method: 'GET', url: query, status: 200, cache: 'HIT', listener: 'pro' })
    })

    const after = (await built.ctx.metrics.scrape()).body
    const count = (text: string, re: RegExp): number => Number(re.exec(text)?.[1] ?? 0)
    const requests = /pagecast_requests_total\{listener="pro",status="200",code="none"\} (\d+)/
    const cacheHits = /pagecast_cache_total\{status="HIT"\} (\d+)/
    expect(count(after, requests) - count(metricsBefore.body, requests)).toBe(2)
    expect(count(after, cacheHits) - count(metricsBefore.body, cacheHits)).toBe(2)
  })

  it('counts the free quota once per held hit and refuses a spent quota with ERATE', async () => {
    const query = `/?${qs({ url: `${fx.origin}/article/?held=free` })}`
    const limited = await build({ ALLOW_PRIVATE_HOSTS: fx.host, LOG_LEVEL: 'info', FREE_DAILY_LIMIT: '4' })
    const free = await limited.free.listen({ port: 0, host: '127.0.0.1' })
    try {
      const remaining: Array<string | undefined> = []
      for (let i = 0; i < 4; i++) {
        const res = await get(free, query)
        expect(res.status).toBe(200)
        remaining.push(header(res, 'x-rate-limit-remaining'))
      }
      expect(remaining).toEqual(['3', '2', '1', '0'])
      const refused = await get(free, query)
      expect(refused.status).toBe(429)
      expect(JSON.parse(refused.body)).toMatchObject({ status: 'fail', code: 'ERATE' })
      expect(header(refused, 'retry-after')).toMatch(/^\d+$/)
      expect(header(refused, 'x-rate-limit-remaining')).toBe('0')
    } finally {
      await limited.close()
    }
  }, 120_000)

  it('answers a cached tools/call under each new id, and what the checks refuse as the SDK refuses it', async () => {
    const target = `${fx.origin}/article/?held=mcp`
    await get(url.pro, `/?${qs({ url: target, prerender: 'false' })}`, { 'x-api-key': KEY })
    const post = (body: string, headers: Record<string, string> = {}): Promise<Answer> =>
      get(url.pro, '/mcp', { 'content-type': 'application/json', 'x-api-key': KEY, 'content-length': String(Buffer.byteLength(body)), ...headers }, 'POST', body)
    // As the SDK's client writes it: the id last.
    const call = (id: unknown, args: Record<string, unknown> = { url: target, prerender: false }): string =>
      JSON.stringify({ method: 'tools/call', params: { name: 'microlink_metadata', arguments: args }, jsonrpc: '2.0', id })
    const first = await post(call(1))
    const fetched = fx.hitsOf('/article/')
    for (const id of [2, 'a1b2', 3, -4, 'x/y+z', 2]) {
      const answer = await post(call(id))
      expect(answer.status).toBe(200)
      expect(JSON.parse(answer.body).id).toBe(id)
      expect(answer.body.replace(`"id":${JSON.stringify(id)}`, '"id":1')).toBe(first.body)
    }
    expect(JSON.parse(first.body)).toMatchObject({ result: { structuredContent: { data: { title: 'Shipping faster' } } } })
    expect(fx.hitsOf('/article/')).toBe(fetched)
    // Arguments the schema refuses, an id the SDK refuses, an unknown tool.
    const refused = [call(5, { url: target, prerender: 'sometimes' }), call(5, { url: target, prerender: false, extra: 1 }), call(null), call(1.5), call(5).replace('microlink_metadata', 'microlink_nothing')]
    for (const body of refused) {
      const answer = await post(body)
      const parsed = JSON.parse(answer.body) as { error?: unknown, result?: { isError?: boolean } }
      expect(parsed.error !== undefined || parsed.result?.isError === true, body).toBe(true)
    }
  })

  it('reads the client address as TRUST_PROXY says (a hop count trusts that many hops)', async () => {
    const query = `/?${qs({ url: `${fx.origin}/article/?held=proxy` })}`
    for (const [trust, forwarded, sameSubject] of [['1', '192.0.2.7', false], ['127.0.0.1', '192.0.2.8', false], ['false', '192.0.2.9', true]] as const) {
      const trusting = await build({ ALLOW_PRIVATE_HOSTS: fx.host, LOG_LEVEL: 'info', TRUST_PROXY: trust, FREE_DAILY_LIMIT: '100' })
      const free = await trusting.free.listen({ port: 0, host: '127.0.0.1' })
      try {
        await get(free, query) // the miss, from the loopback client itself
        const forwardedHit = await get(free, query, { 'x-forwarded-for': forwarded })
        expect(header(forwardedHit, 'x-cache-status')).toBe('HIT')
        // A trusted proxy's client is counted apart from the proxy's own requests; an untrusted header is ignored.
        expect(header(forwardedHit, 'x-rate-limit-remaining')).toBe(sameSubject ? '98' : '99')
      } finally {
        await trusting.close()
      }
    }
  }, 120_000)
})
