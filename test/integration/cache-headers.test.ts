// cache-control and Vary of every answer (docs/api.md §6), through real listeners on loopback: the free listener's
// answers are `public`; the pro listener's, and any computed with forwarded headers or a proxy, are `private` with
// `Vary: x-api-key`, so a shared cache in front never hands one caller's answer to another. A held hit's prepared
// answer (http/prepared.ts) and a computed one alike; JSON, embeds and the content endpoints alike; errors are `no-store`.
import http from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.ts'
import { build, qs, type Built } from '../helpers/build.ts'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'

const KEY = 'cache-headers-key'

interface Answer { status: number, headers: Record<string, string | string[] | undefined> }

function get (base: string, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${path}`, { headers, agent: false }, res => {
      res.resume()
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, headers: res.headers }) })
    })
    req.on('error', reject)
    req.end()
  })
}

interface Listener { app: FastifyInstance, url: string }

let fx: FixtureServer
let built: Built
// Each listener twice over one context (`lane` and `path`, the names of the two paths a hit once had): a hit held
// in process answers the same on either.
let lane: { pro: Listener, free: Listener }
let path: { pro: Listener, free: Listener }

async function listen (plan: 'free' | 'pro', _second: boolean): Promise<Listener> {
  const app = await buildApp(built.ctx, { plan })
  return { app, url: await app.listen({ port: 0, host: '127.0.0.1' }) }
}

beforeAll(async () => {
  fx = await startFixtureServer()
  built = await build({ ALLOW_PRIVATE_HOSTS: fx.host, API_KEYS: KEY, LOG_LEVEL: 'info', FREE_DAILY_LIMIT: '1000' })
  lane = { pro: await listen('pro', true), free: await listen('free', true) }
  path = { pro: await listen('pro', false), free: await listen('free', false) }
})
afterAll(async () => {
  for (const l of [lane?.pro, lane?.free, path?.pro, path?.free]) await l?.app.close()
  await built?.close()
  await fx?.close()
})

const PUBLIC_KEPT = /^public, immutable, max-age=\d+$/
const PRIVATE_KEPT = /^private, immutable, max-age=\d+$/
const pro = { 'x-api-key': KEY }

describe('cache-control and Vary (docs/api.md §6)', () => {
  it('free: public on MISS and HIT (two listeners over one context), public must-revalidate on BYPASS, no Vary: x-api-key', async () => {
    const query = `/?${qs({ url: `${fx.origin}/article/?ch=free`, 'meta.title': true })}`
    const miss = await get(lane.free.url, query)
    expect(miss.headers['x-cache-status']).toBe('MISS')
    expect(miss.headers['cache-control']).toMatch(PUBLIC_KEPT)
    for (const listener of [lane.free, path.free]) {
      const hit = await get(listener.url, query)
      expect(hit.headers['x-cache-status']).toBe('HIT')
      expect(hit.headers['cache-control']).toMatch(PUBLIC_KEPT)
      expect(hit.headers.vary).toBeUndefined()
    }
    const forced = await get(lane.free.url, `${query}&force=true`)
    expect(forced.headers['x-cache-status']).toBe('BYPASS')
    expect(forced.headers['cache-control']).toBe('public, must-revalidate, max-age=0')
    expect(forced.headers.vary).toBeUndefined()
  })

  it('pro: private with Vary: x-api-key on MISS, HIT (two listeners over one context, compressed or not) and BYPASS', async () => {
    // Over 1 KiB, so compressed answers are compared too.
    const query = `/?${qs({ url: `${fx.origin}/article/?ch=pro`, 'data.head.selector': 'head', 'data.head.attr': 'html' })}`
    const miss = await get(lane.pro.url, query, pro)
    expect(miss.headers['x-cache-status']).toBe('MISS')
    expect(miss.headers['cache-control']).toMatch(PRIVATE_KEPT)
    expect(miss.headers.vary).toBe('x-api-key')
    for (const listener of [lane.pro, path.pro]) {
      const hit = await get(listener.url, query, pro)
      expect(hit.headers['x-cache-status']).toBe('HIT')
      expect(hit.headers['cache-control']).toMatch(PRIVATE_KEPT)
      expect(hit.headers.vary).toBe('x-api-key')
      const gzip = await get(listener.url, query, { ...pro, 'accept-encoding': 'gzip' })
      expect(gzip.headers['content-encoding']).toBe('gzip')
      expect(gzip.headers['cache-control']).toMatch(PRIVATE_KEPT)
      expect(gzip.headers.vary).toBe('x-api-key, accept-encoding')
    }
    const forced = await get(lane.pro.url, `${query}&force=true`, pro)
    expect(forced.headers['x-cache-status']).toBe('BYPASS')
    expect(forced.headers['cache-control']).toBe('private, must-revalidate, max-age=0')
    expect(forced.headers.vary).toBe('x-api-key')
  })

  it('pro with forwarded headers (headers.* or x-api-header-*): private, every way it is answered', async () => {
    const target = { url: `${fx.origin}/article/?ch=forwarded`, 'meta.title': true }
    for (const [query, headers] of [
      [`/?${qs({ ...target, 'headers.x-token': 'a' })}`, pro],
      [`/?${qs(target)}`, { ...pro, 'x-api-header-x-token': 'b' }]
    ] as const) {
      for (const listener of [lane.pro, lane.pro, path.pro]) {
        const res = await get(listener.url, query, headers)
        expect(res.status).toBe(200)
        expect(res.headers['cache-control']).toMatch(PRIVATE_KEPT)
        expect(res.headers.vary).toBe('x-api-key')
      }
    }
  })

  it('embeds and the content endpoints carry the same headers: public on free, private on pro', async () => {
    const target = `${fx.origin}/article/?ch=embed`
    const embed = `/?${qs({ url: target, embed: 'title' })}`
    for (const listener of [lane.free, lane.free, path.free]) {
      const res = await get(listener.url, embed)
      expect(res.headers['content-type']).toBe('text/plain; charset=utf-8')
      expect(res.headers['cache-control']).toMatch(PUBLIC_KEPT)
      expect(res.headers.vary).toBeUndefined()
    }
    for (const listener of [lane.pro, lane.pro, path.pro]) {
      const res = await get(listener.url, embed, pro)
      expect(res.headers['cache-control']).toMatch(PRIVATE_KEPT)
      expect(res.headers.vary).toBe('x-api-key')
    }
    const markdown = `/markdown?${qs({ url: target })}`
    // The first answers count the tokens; the lane answers the later ones.
    for (const listener of [lane.pro, lane.pro, lane.pro, path.pro]) {
      const res = await get(listener.url, markdown, pro)
      expect(res.status).toBe(200)
      expect(res.headers['content-type']).toBe('text/markdown; charset=utf-8')
      expect(res.headers['cache-control']).toMatch(PRIVATE_KEPT)
      expect(res.headers.vary).toBe('x-api-key')
    }
    for (const listener of [lane.free, lane.free, lane.free, path.free]) {
      const res = await get(listener.url, markdown)
      expect(res.headers['cache-control']).toMatch(PUBLIC_KEPT)
      expect(res.headers.vary).toBeUndefined()
    }
  })

  it('errors are no-store on both listeners, an embed with nothing at its path included', async () => {
    const missing = await get(lane.pro.url, `/?${qs({ url: `${fx.origin}/article/?ch=embed`, embed: 'nothing.here' })}`, pro)
    expect(missing.status).toBe(404)
    expect(missing.headers['cache-control']).toBe('no-store')
    const invalid = await get(lane.free.url, `/?${qs({ url: 'not a url' })}`)
    expect(invalid.status).toBe(400)
    expect(invalid.headers['cache-control']).toBe('no-store')
  })
})
