// `iframe` (docs/api.md §3.4) through the API, with fixture pages and oEmbed endpoints on loopback, in both load
// modes: discovery from a JSON and an XML link, `iframe.*` keys reaching the endpoint lower-cased, the registry
// path with a provider on loopback put in place of the bundled list, and the cases that give null (no endpoint, an
// endpoint refused by the address guard, 404, garbage). Every endpoint call is recorded, so each case also says
// what was (not) called.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { build, qs, type Built } from '../helpers/build.ts'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'
import { OEMBED_MAX_BYTES } from '../../src/oembed/index.ts'

let fx: FixtureServer
let app: Built
/** A second loopback server that ALLOW_PRIVATE_HOSTS does not list: the guard must keep every connection from it. */
let outsider: http.Server
let outsiderPort: number
let outsiderConnections = 0
/** The query of every call an endpoint route received, by route. */
const received: Record<string, URLSearchParams[]> = {}

const SCRIPTS = [
  { src: 'https://platform.example/widgets.js', async: true, defer: false, charset: 'utf-8' },
  { src: 'ORIGIN/oembed/helper.js', async: false, defer: true, charset: null }
]

function record (name: string, req: http.IncomingMessage): URLSearchParams {
  const query = new URL(req.url ?? '/', 'http://x').searchParams
  ;(received[name] ??= []).push(query)
  return query
}

beforeAll(async () => {
  fx = await startFixtureServer()
  fx.route('/oembed/endpoint', (req, res) => {
    const query = record('endpoint', req)
    const page = query.get('url') ?? ''
    const html = `<blockquote class="post">Post ${page}</blockquote>\n` +
      '<script async src="https://platform.example/widgets.js" charset="utf-8"></script><script defer src="/oembed/helper.js"></script>'
    if (query.get('format') === 'xml') {
      const escaped = html.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
      res.writeHead(200, { 'content-type': 'text/xml; charset=utf-8' })
      res.end(`<?xml version="1.0" encoding="utf-8" standalone="yes"?>\n<oembed><version>1.0</version><type>video</type><width>${query.get('maxwidth') ?? 640}</width><html>${escaped}</html></oembed>`)
      return
    }
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ version: '1.0', type: 'rich', provider_name: 'Loopback', width: Number(query.get('maxwidth') ?? 640), html }))
  })
  fx.route('/oembed/gone', (req, res) => {
    record('gone', req)
    res.writeHead(404, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ type: 'rich', html: '<p>a 404 body is not an answer</p>' }))
  })
  fx.route('/oembed/bad', (req, res) => {
    const query = record('bad', req)
    if (query.get('as') === 'xml') {
      res.writeHead(200, { 'content-type': 'text/xml' })
      res.end('<response><type>rich</type><html>&lt;p&gt;no oembed root&lt;/p&gt;</html></response>')
      return
    }
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end('{"type":"rich","html":"<p>cut')
  })
  // The registry's provider: a photo without html, which becomes an <img>.
  fx.route('/oembed/provider', (req, res) => {
    const query = record('provider', req)
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' })
    res.end(JSON.stringify({ version: '1.0', type: 'photo', url: `${fx.origin}/oembed/photo.png?w=${query.get('maxwidth') ?? ''}`, width: 300, height: 200, title: 'Bees & <honey>' }))
  })
  // Never answers: only the request's deadline ends the wait.
  fx.route('/oembed/stuck', (req) => { record('stuck', req) })
  fx.route('/oembed/stuck.html', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    res.end('<!doctype html><title>Stuck</title><link rel="alternate" type="application/json+oembed" href="/oembed/stuck?url=x">')
  })
  // A valid answer, but over the 1 MiB cap (OEMBED_MAX_BYTES): cut, so unusable.
  fx.route('/oembed/huge', (req, res) => {
    record('huge', req)
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ type: 'rich', html: `<p>${'x'.repeat(OEMBED_MAX_BYTES)}</p>` }))
  })
  fx.route('/oembed/huge.html', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    res.end('<!doctype html><title>Huge</title><link rel="alternate" type="application/json+oembed" href="/oembed/huge?url=x">')
  })
  fx.route('/oembed/registry/watch', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    res.end('<!doctype html><title>A page only the registry knows</title><h1>Watch</h1>')
  })

  outsider = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ type: 'rich', html: `<p>must not be read: ${req.url ?? ''}</p>` }))
  })
  outsider.on('connection', () => { outsiderConnections++ })
  await new Promise<void>((resolve) => outsider.listen(0, '127.0.0.1', resolve))
  outsiderPort = (outsider.address() as AddressInfo).port
  fx.route('/oembed/refused.html', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    res.end(`<!doctype html><title>Refused</title><link rel="alternate" type="application/json+oembed" href="http://127.0.0.1:${outsiderPort}/oembed?url=x">` +
      `<link rel="alternate" type="text/xml+oembed" href="http://localhost:${outsiderPort}/oembed?url=x&format=xml">`)
  })

  app = await build({ ALLOW_PRIVATE_HOSTS: fx.host, API_KEYS: 'k', BROWSER_CONCURRENCY: '1' }, {
    oembedProviders: [
      { provider_name: 'Elsewhere', endpoints: [{ schemes: ['https://elsewhere.example/*'], url: 'https://elsewhere.example/oembed' }] },
      { provider_name: 'Loopback', endpoints: [{ schemes: [`http://${fx.host}/oembed/registry/*`], url: `${fx.origin}/oembed/provider` }] }
    ]
  })
}, 120_000)

afterAll(async () => {
  await app?.close()
  await fx?.close()
  outsider?.closeAllConnections()
  await new Promise<void>((resolve) => { if (outsider === undefined) resolve(); else outsider.close(() => resolve()) })
})

beforeEach(() => {
  for (const name of Object.keys(received)) delete received[name]
})

async function call (query: Record<string, string | number | boolean>) {
  const res = await app.pro.inject({ method: 'GET', url: `/?${qs({ ...query, force: true })}`, headers: { 'x-api-key': 'k' } })
  expect(res.statusCode, res.body).toBe(200)
  return { res, data: (res.json() as { data: Record<string, unknown> }).data }
}

const withOrigin = (value: unknown): unknown => JSON.parse(JSON.stringify(value).replaceAll('ORIGIN', fx.origin))

describe.each([false, true])('prerender=%s', (prerender) => {
  it('reads a JSON discovery link: html without its scripts, scripts listed, iframe.maxWidth passed lower-cased', async () => {
    const { data } = await call({ url: `${fx.origin}/oembed/json.html`, prerender, iframe: true, 'iframe.maxWidth': 400, 'iframe.Hide_Media': 1 })
    expect(data.title).toBe('A post with a JSON oEmbed link')
    expect(data.iframe).toEqual({ html: '<blockquote class="post">Post post-json</blockquote>\n', scripts: withOrigin(SCRIPTS) })
    // JSON is preferred: the XML link was not called.
    expect(received.endpoint?.map((q) => Object.fromEntries(q))).toEqual([{ format: 'json', url: 'post-json', maxwidth: '400', hide_media: '1' }])
  })

  it('reads an XML discovery link', async () => {
    const { data } = await call({ url: `${fx.origin}/oembed/xml.html`, prerender, iframe: true })
    expect(data.iframe).toEqual({ html: '<blockquote class="post">Post post-xml</blockquote>\n', scripts: withOrigin(SCRIPTS) })
    expect(received.endpoint?.map((q) => q.get('format'))).toEqual(['xml'])
  })

  it('falls back to the registry: the page URL and format=json reach the provider, a photo becomes an <img>', async () => {
    const page = `${fx.origin}/oembed/registry/watch?v=1`
    const { data } = await call({ url: page, prerender, 'iframe.maxWidth': 320 })
    expect(data.iframe).toEqual({ html: `<img src="${fx.origin}/oembed/photo.png?w=320" width="300" height="200" alt="Bees &amp; &lt;honey&gt;">`, scripts: [] })
    expect(received.provider?.map((q) => Object.fromEntries(q))).toEqual([{ url: page, format: 'json', maxwidth: '320' }])
  })

  it('gives null when the page names no endpoint and no provider claims it', async () => {
    const { data } = await call({ url: `${fx.origin}/oembed/plain.html`, prerender, iframe: true })
    expect(data).toHaveProperty('iframe', null)
  })

  it('gives null for an endpoint answering 404, without reading its body', async () => {
    const { data } = await call({ url: `${fx.origin}/oembed/missing.html`, prerender, iframe: true })
    expect(data).toHaveProperty('iframe', null)
    expect(received.gone).toHaveLength(1)
  })

  it('gives null for bad JSON and for XML without an <oembed> root (both links tried)', async () => {
    const { data } = await call({ url: `${fx.origin}/oembed/bad.html`, prerender, iframe: true })
    expect(data).toHaveProperty('iframe', null)
    expect(received.bad?.map((q) => q.get('as'))).toEqual(['json', 'xml'])
  })

  it('gives null for endpoints on a private address ALLOW_PRIVATE_HOSTS does not list, with no connection made', async () => {
    const before = outsiderConnections
    const { data } = await call({ url: `${fx.origin}/oembed/refused.html`, prerender, iframe: true })
    expect(data).toHaveProperty('iframe', null)
    expect(outsiderConnections).toBe(before)
  })

  it('leaves data.iframe out when iframe is off, and calls nothing', async () => {
    const { data } = await call({ url: `${fx.origin}/oembed/json.html`, prerender })
    expect(data.title).toBe('A post with a JSON oEmbed link')
    expect(data).not.toHaveProperty('iframe')
    expect(received.endpoint).toBeUndefined()
  })
})

it('finds a link added by a script only when the page is rendered', async () => {
  const fetched = await call({ url: `${fx.origin}/oembed/scripted.html`, prerender: false, iframe: true })
  expect(fetched.data).toHaveProperty('iframe', null)
  expect(received.endpoint).toBeUndefined()
  const rendered = await call({ url: `${fx.origin}/oembed/scripted.html`, prerender: true, iframe: true })
  expect(rendered.data.iframe).toEqual({ html: '<blockquote class="post">Post post-scripted</blockquote>\n', scripts: withOrigin(SCRIPTS) })
})

it('loads the page for iframe with meta=false, and says how (x-fetch-mode)', async () => {
  const { res, data } = await call({ url: `${fx.origin}/oembed/json.html`, meta: false, iframe: true })
  expect(Object.keys(data)).toEqual(['iframe'])
  expect(data.iframe).toMatchObject({ html: '<blockquote class="post">Post post-json</blockquote>\n' })
  expect(res.headers['x-fetch-mode']).toBe('fetch')
})

it('gives null for an answer over the size cap', async () => {
  const { data } = await call({ url: `${fx.origin}/oembed/huge.html`, iframe: true })
  expect(data).toHaveProperty('iframe', null)
  expect(received.huge).toHaveLength(1)
})

it('waits for the endpoint no longer than the request\'s timeout (504 ETIMEOUT)', async () => {
  const started = Date.now()
  const res = await app.pro.inject({ method: 'GET', url: `/?${qs({ url: `${fx.origin}/oembed/stuck.html`, iframe: true, timeout: '1500ms', force: true })}`, headers: { 'x-api-key': 'k' } })
  expect(res.statusCode).toBe(504)
  expect(res.json()).toMatchObject({ status: 'error', code: 'ETIMEOUT' })
  expect(received.stuck).toHaveLength(1)
  // The endpoint never answers: any bound shows the deadline ended the wait; this one leaves room for a loaded machine.
  expect(Date.now() - started).toBeLessThan(12_000)
})

it('rejects a malformed iframe value with a JSON error', async () => {
  const res = await app.pro.inject({ method: 'GET', url: `/?${qs({ url: `${fx.origin}/oembed/json.html`, iframe: 'maybe' })}`, headers: { 'x-api-key': 'k' } })
  expect(res.statusCode).toBe(400)
  expect(res.json()).toMatchObject({ status: 'fail', code: 'EINVALQUERY' })
})

it('(control) calls the same outside endpoint once ALLOW_PRIVATE_HOSTS lists it', async () => {
  const allowed = await build({ ALLOW_PRIVATE_HOSTS: `${fx.host},127.0.0.1:${outsiderPort}` })
  try {
    const before = outsiderConnections
    const res = await allowed.free.inject({ method: 'GET', url: `/?${qs({ url: `${fx.origin}/oembed/refused.html`, iframe: true, meta: false })}` })
    expect(res.json()).toMatchObject({ data: { iframe: { html: '<p>must not be read: /oembed?url=x</p>', scripts: [] } } })
    expect(outsiderConnections).toBe(before + 1)
  } finally {
    await allowed.close()
  }
})
