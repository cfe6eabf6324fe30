// Every answer held byte for byte (issue 22): a set of representative requests on both listeners (GET / miss and
// hit, HEAD, the content endpoints in both forms, CORS preflights, gzip / br / identity, if-none-match, MCP calls
// cached and not, the free quota's headers, errors), each answer recorded as its status, every header in order and
// its body, and compared with test/integration/__snapshots__/answers.json. The file was written by this test on the
// code before the one path (the hit lane), so it holds the one path to the answers the lanes gave. Only what differs
// from run to run is replaced by its shape: the date, ids, timings, the fixture's port, the reset time. A compressed
// body is recorded as its text and whether its bytes are exactly what @fastify/compress's settings make of it.
import http from 'node:http'
import { brotliCompressSync, brotliDecompressSync, constants as zlib, gunzipSync, gzipSync } from 'node:zlib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { build, qs, type Built } from '../helpers/build.ts'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'

const KEY = 'answers-key'

interface Request { name: string, on: 'free' | 'pro', method?: string, path: string, headers?: Record<string, string>, body?: string }

function send (base: string, r: Request): Promise<{ status: number, headers: Array<[string, string]>, raw: Buffer }> {
  return new Promise((resolve, reject) => {
    const headers = { ...(r.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(r.body)) }), ...r.headers }
    const req = http.request(`${base}${r.path}`, { method: r.method ?? 'GET', headers, agent: false }, res => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        const pairs: Array<[string, string]> = []
        for (let i = 0; i < res.rawHeaders.length; i += 2) pairs.push([res.rawHeaders[i]!.toLowerCase(), res.rawHeaders[i + 1]!])
        resolve({ status: res.statusCode ?? 0, headers: pairs, raw: Buffer.concat(chunks) })
      })
    })
    req.on('error', reject)
    req.end(r.body)
  })
}

let fx: FixtureServer
let built: Built
const base: Record<'free' | 'pro', string> = { free: '', pro: '' }

beforeAll(async () => {
  fx = await startFixtureServer()
  built = await build({ ALLOW_PRIVATE_HOSTS: fx.host, API_KEYS: KEY, LOG_LEVEL: 'info', FREE_DAILY_LIMIT: '1000' })
  base.free = await built.free.listen({ port: 0, host: '127.0.0.1' })
  base.pro = await built.pro.listen({ port: 0, host: '127.0.0.1' })
})
afterAll(async () => {
  await built.close()
  await fx.close()
})

/** The text with what differs from run to run (the fixture's origin, request ids) replaced. */
function plain (text: string): string {
  return text
    .replaceAll(encodeURIComponent(fx.origin), 'ORIGIN_ENCODED').replaceAll(fx.origin, 'ORIGIN')
    .replaceAll(base.free, 'FREE').replaceAll(base.pro, 'PRO')
    .replaceAll(String(fx.port), 'PORT')
    .replace(/\w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT/g, 'HTTP_DATE')
    .replace(/[\w-]+:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, 'REQUEST_ID')
}

const BROTLI = { params: { [zlib.BROTLI_PARAM_QUALITY]: 4 } }

/** The body as text, a compressed one decompressed and checked against the bytes our compression settings make. */
function bodyOf (raw: Buffer, encoding: string | undefined): string {
  if (encoding === 'gzip') {
    const text = gunzipSync(raw)
    return `gzip${gzipSync(text).equals(raw) ? '' : ' (other bytes)'}: ${plain(text.toString('utf8'))}`
  }
  if (encoding === 'br') {
    const text = brotliDecompressSync(raw)
    return `br${brotliCompressSync(text, BROTLI).equals(raw) ? '' : ' (other bytes)'}: ${plain(text.toString('utf8'))}`
  }
  return plain(raw.toString('utf8'))
}

const SHAPES: Record<string, (value: string, length: number) => string> = {
  'x-request-id': v => /^[\w-]+:[0-9a-f-]{36}$/.test(v) ? 'ID' : v,
  'x-response-time': v => /^(\d+(\.\d+)?(ms|s|m)\s?)+$/.test(v) ? 'MS' : v,
  'x-fetch-time': v => /^(\d+(\.\d+)?(ms|s|m)\s?)+$/.test(v) ? 'TIME' : v,
  'x-timestamp': v => /^\d{13}$/.test(v) ? 'TIMESTAMP' : v,
  'x-rate-limit-reset': v => /^\d{10}$/.test(v) ? 'RESET' : v,
  'retry-after': v => /^\d+$/.test(v) ? 'SECONDS' : v,
  'server-timing': v => v.replace(/dur=\d+\.\d/g, 'dur=N'),
  'cache-control': v => v.replace(/max-age=[1-9]\d*/, 'max-age=N'),
  'content-length': (v, length) => Number(v) === length ? 'LENGTH' : v,
  'x-markdown-tokens': v => /^\d+$/.test(v) ? 'TOKENS' : v
}

async function record (r: Request): Promise<{ request: string, status: number, headers: string[], body: string }> {
  const answer = await send(base[r.on], r)
  const encoding = answer.headers.find(([n]) => n === 'content-encoding')?.[1]
  const headers = answer.headers.filter(([name]) => name !== 'date')
    .map(([name, value]) => `${name}: ${plain(SHAPES[name]?.(value, answer.raw.length) ?? value)}`)
  return { request: `${r.on} ${r.method ?? 'GET'} ${plain(r.path)} ${JSON.stringify(r.headers ?? {})}${r.body === undefined ? '' : ` ${plain(r.body)}`}`, status: answer.status, headers, body: bodyOf(answer.raw, encoding) }
}

function requests (): Request[] {
  const pro = { 'x-api-key': KEY }
  const page = `${fx.origin}/article/?answers=1`
  const big = { url: `${fx.origin}/article/?answers=2`, 'data.head.selector': 'head', 'data.head.attr': 'html' }
  const q = `/?${qs({ url: page })}`
  const bigQ = `/?${qs(big)}`
  const mcp = { ...pro, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
  const call = (id: number, url: string, name = 'microlink_metadata'): string =>
    JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: { url } } })
  const list: Request[] = [
    { name: 'pro miss', on: 'pro', path: q, headers: pro },
    { name: 'pro hit', on: 'pro', path: q, headers: pro },
    { name: 'pro head', on: 'pro', method: 'HEAD', path: q, headers: pro },
    { name: 'pro if-none-match', on: 'pro', path: q, headers: { ...pro, 'if-none-match': '*' } },
    { name: 'pro big miss', on: 'pro', path: bigQ, headers: pro }
  ]
  for (const acceptEncoding of ['gzip', 'br', 'identity', 'gzip, deflate, br', '*', 'deflate', 'br;q=0, gzip;q=0.5']) {
    list.push({ name: `pro big ${acceptEncoding}`, on: 'pro', path: bigQ, headers: { ...pro, 'accept-encoding': acceptEncoding } })
  }
  list.push(
    { name: 'pro no compression', on: 'pro', path: bigQ, headers: { ...pro, 'accept-encoding': 'gzip', 'x-no-compression': '1' } },
    { name: 'pro filter', on: 'pro', path: `${q}&filter=title`, headers: pro },
    { name: 'pro filter again', on: 'pro', path: `${q}&filter=title`, headers: pro },
    { name: 'pro embed', on: 'pro', path: `${q}&embed=title`, headers: pro },
    { name: 'pro embed again', on: 'pro', path: `${q}&embed=title`, headers: pro }
  )
  for (const path of [`/markdown?${qs({ url: page })}`, `/markdown/${page}`, `/text?${qs({ url: page })}`, `/text/${page}`, `/html?${qs({ url: page })}`, `/html/${page}`]) {
    for (const round of [1, 2, 3]) list.push({ name: `pro ${path} ${round}`, on: 'pro', path, headers: pro })
    list.push({ name: `pro ${path} gzip`, on: 'pro', path, headers: { ...pro, 'accept-encoding': 'gzip' } })
  }
  list.push(
    { name: 'free miss', on: 'free', path: `/?${qs({ url: `${fx.origin}/article/?answers=3` })}` },
    { name: 'free hit', on: 'free', path: `/?${qs({ url: `${fx.origin}/article/?answers=3` })}` },
    { name: 'free hit of pro entry', on: 'free', path: q },
    { name: 'free hit gzip', on: 'free', path: bigQ, headers: { 'accept-encoding': 'gzip' } },
    { name: 'free hit br', on: 'free', path: bigQ, headers: { 'accept-encoding': 'br' } },
    { name: 'free head', on: 'free', method: 'HEAD', path: q },
    { name: 'free markdown', on: 'free', path: `/markdown?${qs({ url: page })}` },
    { name: 'free markdown path', on: 'free', path: `/markdown/${page}`, headers: { 'accept-encoding': 'br' } }
  )
  for (const on of ['free', 'pro'] as const) {
    for (const [path, extra] of [['/', {}], ['/mcp', { 'access-control-request-headers': 'content-type, x-api-key' }], ['/markdown', {}], ['/nothing', {}]] as const) {
      list.push({ name: `${on} preflight ${path}`, on, method: 'OPTIONS', path, headers: { origin: 'https://example.com', 'access-control-request-method': path === '/mcp' ? 'POST' : 'GET', ...extra } })
    }
    list.push({ name: `${on} options bare`, on, method: 'OPTIONS', path: '/' })
    list.push({ name: `${on} cors get`, on, path: q, headers: { ...(on === 'pro' ? pro : {}), origin: 'https://example.com' } })
  }
  list.push(
    { name: 'pro no key', on: 'pro', path: q },
    { name: 'pro wrong key', on: 'pro', path: q, headers: { 'x-api-key': 'nope' } },
    { name: 'free key', on: 'free', path: q, headers: pro },
    { name: 'bad query', on: 'free', path: `/?${qs({ url: 'not a url' })}` },
    { name: 'no route', on: 'free', path: '/nothing' },
    { name: 'bad escape', on: 'pro', path: `/markdown/${page}%E0%A4%A`, headers: pro },
    { name: 'embed missing', on: 'pro', path: `${q}&embed=nothing.here`, headers: pro },
    { name: 'post /', on: 'pro', method: 'POST', path: q, headers: { ...pro, 'content-type': 'text/plain' }, body: 'hello' },
    { name: 'get with body', on: 'pro', path: q, headers: { ...pro, 'content-type': 'text/plain' }, body: 'hello' },
    { name: 'mcp uncached', on: 'pro', method: 'POST', path: '/mcp', headers: mcp, body: call(1, `${fx.origin}/article/?answers=4`) },
    { name: 'mcp cached', on: 'pro', method: 'POST', path: '/mcp', headers: mcp, body: call(2, page) },
    { name: 'mcp cached again', on: 'pro', method: 'POST', path: '/mcp', headers: mcp, body: call(3, page) },
    { name: 'mcp cached gzip', on: 'pro', method: 'POST', path: '/mcp', headers: { ...mcp, 'accept-encoding': 'gzip' }, body: call(4, page) },
    { name: 'mcp cached text', on: 'pro', method: 'POST', path: '/mcp', headers: mcp, body: call(5, page, 'microlink_markdown') },
    { name: 'mcp free cached', on: 'free', method: 'POST', path: '/mcp', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: call(6, page) },
    { name: 'mcp tools/list', on: 'pro', method: 'POST', path: '/mcp', headers: mcp, body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/list' }) },
    { name: 'mcp bad json', on: 'pro', method: 'POST', path: '/mcp', headers: mcp, body: '{"jsonrpc":' },
    { name: 'mcp get', on: 'pro', path: '/mcp', headers: pro },
    { name: 'free hit last', on: 'free', path: `/?${qs({ url: `${fx.origin}/article/?answers=3` })}` }
  )
  return list
}

describe('answers held byte for byte', () => {
  it('answers every representative request as recorded before the one path', async () => {
    const recorded = []
    for (const r of requests()) recorded.push({ name: plain(r.name), ...await record(r) })
    await expect(`${JSON.stringify(recorded, null, 2)}\n`).toMatchFileSnapshot('./__snapshots__/answers.json')
  })
})
