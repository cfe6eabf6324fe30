// The metadata extractor end to end, one fixture folder per case (test/fixtures/metadata/<case>/): the page
// (input.html, or the file the case's URL names) is fetched from a node:http server on 127.0.0.1, then given to
// the extractor, whose probes fetch the referenced images from the same server through a real HTTP client.
// The server counts every request, so each case also states exactly which probes it makes.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createMetadataExtractor, type MetadataExtractor } from '../../src/metadata/extractor.ts'
import { META_FIELDS, type MetaField } from '../../src/schemas/options.ts'
import { probeMediaObject } from '../../src/media/objects.ts'
import { createLoopbackClient, type LoopbackClient } from '../helpers/loopback-probe.ts'

const FIXTURES = path.join(import.meta.dirname, '../fixtures/metadata')
/** Every response carries this `date`, so the date-header fallback is deterministic. */
const SERVER_DATE = 'Sat, 01 Mar 2025 12:00:00 GMT'

interface Run {
  fields?: MetaField[]
  ping?: { image: boolean, logo: boolean }
  result: Record<string, unknown>
  /** `host/path` of every request the extraction makes, in any order. */
  requests: string[]
}

interface CaseSpec {
  url: string
  /** Host name -> folder inside the case that serves it. */
  hosts: Record<string, string>
  /** Path -> extra response headers. */
  responseHeaders?: Record<string, Record<string, string>>
  runs: Run[]
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html',
  '.png': 'image/png',
  '.gif': 'image/gif',
  '.ico': 'image/x-icon',
  '.svg': 'image/svg+xml',
  '.json': 'application/json',
  '.pdf': 'application/pdf'
}

const cases = readdirSync(FIXTURES)
  .filter(name => existsSync(path.join(FIXTURES, name, 'expected.json')))
  .sort()
  .map(name => ({ name, spec: JSON.parse(readFileSync(path.join(FIXTURES, name, 'expected.json'), 'utf8')) as CaseSpec }))

interface Route {
  dir: string
  headers: Record<string, Record<string, string>>
}

function createFixtureServer (routes: Map<string, Route>, requests: string[]): http.Server {
  return http.createServer((req, res) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '')
    const target = new URL(req.url ?? '/', 'http://placeholder')
    requests.push(`${host}${target.pathname}${target.search}`)
    res.setHeader('date', SERVER_DATE)
    // Never answers: for deadline tests.
    if (target.pathname.startsWith('/__slow/')) return
    const route = routes.get(host)
    const file = route === undefined ? null : resolveFile(route.dir, decodeURIComponent(target.pathname))
    if (route === undefined || file === null) {
      res.writeHead(404, { 'content-type': 'text/html; charset=utf-8' })
      res.end('<!doctype html><title>Not found</title><h1>Not found</h1>')
      return
    }
    const body = readFileSync(file)
    const headers: Record<string, string> = {
      'content-type': CONTENT_TYPES[path.extname(file)] ?? 'application/octet-stream',
      'accept-ranges': 'bytes',
      ...route.headers[target.pathname]
    }
    const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '')
    if (range !== null && Number(range[1]) < body.length) {
      const start = Number(range[1])
      const end = Math.min(range[2] === '' ? body.length - 1 : Number(range[2]), body.length - 1)
      res.writeHead(206, { ...headers, 'content-range': `bytes ${start}-${end}/${body.length}`, 'content-length': String(end - start + 1) })
      res.end(body.subarray(start, end + 1))
      return
    }
    res.writeHead(200, { ...headers, 'content-length': String(body.length) })
    res.end(body)
  })
}

/** The file a path names inside a case folder; `/` is the case's input.html (or a host folder's index.html). */
function resolveFile (dir: string, pathname: string): string | null {
  const relative = pathname === '/'
    ? (existsSync(path.join(dir, 'input.html')) ? 'input.html' : 'index.html')
    : pathname.slice(1)
  const file = path.resolve(dir, relative)
  if (!file.startsWith(dir + path.sep) || path.basename(file) === 'expected.json') return null
  return existsSync(file) && statSync(file).isFile() ? file : null
}

function withPort<T> (value: T, port: number): T {
  return JSON.parse(JSON.stringify(value).replaceAll('{{port}}', String(port))) as T
}

let server: http.Server
let port: number
let client: LoopbackClient
let extractor: MetadataExtractor
const requests: string[] = []

beforeAll(async () => {
  const routes = new Map<string, Route>()
  for (const { name, spec } of cases) {
    for (const [host, folder] of Object.entries(spec.hosts)) {
      routes.set(host, { dir: path.resolve(FIXTURES, name, folder), headers: folder === '.' ? (spec.responseHeaders ?? {}) : {} })
    }
  }
  server = createFixtureServer(routes, requests)
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  port = (server.address() as AddressInfo).port
  client = createLoopbackClient()
  extractor = createMetadataExtractor({ probe: client.probe })
})

afterAll(async () => {
  await client.close()
  await new Promise<void>(resolve => server.close(() => resolve()))
})

async function extractPage (url: string, run: Pick<Run, 'fields' | 'ping'>, signal = AbortSignal.timeout(10_000)) {
  const page = await client.fetch(url, signal)
  requests.length = 0
  return extractor.extract({
    url: page.url,
    statusCode: page.statusCode,
    headers: page.headers,
    body: page.body,
    fields: run.fields ?? META_FIELDS,
    ping: run.ping ?? { image: true, logo: true },
    signal
  })
}

describe('metadata fixtures', () => {
  it('has the cases', () => {
    expect(cases.map(c => c.name)).toEqual(expect.arrayContaining([
      'article', 'icon-ranking', 'favicon-fallback', 'last-modified', 'publisher-domain', 'lang', 'fields-selection',
      'ping-image-false', 'image-target', 'json-target', 'pdf-target'
    ]))
  })

  for (const { name, spec } of cases) {
    spec.runs.forEach((run, index) => {
      const label = run.fields === undefined ? 'all fields' : run.fields.join(', ')
      it(`${name} (${label})${spec.runs.length > 1 ? ` #${index + 1}` : ''}`, async () => {
        const result = await extractPage(withPort(spec.url, port), run)
        const expected = withPort(run.result, port)
        expect(result).toStrictEqual(expected)
        // Every requested field and no other, in response order.
        const fields = run.fields ?? META_FIELDS
        expect(Object.keys(result)).toEqual(META_FIELDS.filter(field => fields.includes(field)))
        expect([...requests].sort()).toEqual([...run.requests].sort())
      })
    })
  }
})

describe('metadata extractor', () => {
  it('probes again on every extraction: the favicon lookup keeps no cross-request memo', async () => {
    const url = `http://fallback.example.com:${port}/`
    for (let i = 0; i < 2; i++) {
      const result = await extractPage(url, { fields: ['logo'] })
      expect(result.logo).toMatchObject({ url: `http://fallback.example.com:${port}/favicon.ico`, width: 32 })
      expect([...requests].sort()).toEqual(['fallback.example.com/favicon.ico', 'fallback.example.com/favicon.png'])
    }
  })

  it('with ping.logo off, makes no request and assumes the origin favicon.ico', async () => {
    const result = await extractPage(`http://fallback.example.com:${port}/`, { fields: ['logo'], ping: { image: true, logo: false } })
    expect(result).toStrictEqual({
      logo: { url: `http://fallback.example.com:${port}/favicon.ico`, type: 'ico', size: null, height: null, width: null, size_pretty: null }
    })
    expect(requests).toEqual([])
  })

  it('with ping.logo off, takes the best ranked icon link unchecked', async () => {
    const result = await extractPage(`http://icons.example.com:${port}/`, { fields: ['logo'], ping: { image: true, logo: false } })
    expect(result.logo).toStrictEqual({
      url: `http://icons.example.com:${port}/icons/fake-touch.png`, type: 'png', size: null, height: null, width: null, size_pretty: null
    })
    expect(requests).toEqual([])
  })

  it('returns an empty object and makes no request when no field is asked for', async () => {
    expect(await extractPage(`http://article.example.com:${port}/`, { fields: [] })).toStrictEqual({})
    expect(requests).toEqual([])
  })

  it('stops at the request deadline', async () => {
    const page = await client.fetch(`http://article.example.com:${port}/`, AbortSignal.timeout(10_000))
    const controller = new AbortController()
    controller.abort(new Error('deadline'))
    await expect(extractor.extract({
      url: page.url, statusCode: page.statusCode, headers: page.headers, body: page.body,
      fields: META_FIELDS, ping: { image: true, logo: true }, signal: controller.signal
    })).rejects.toThrow('deadline')
  })

  it('passes the deadline into the probes: a candidate that never answers fails the extraction at the deadline', async () => {
    const html = '<html><head><title>Slow</title><meta property="og:image" content="/__slow/cover.png"></head></html>'
    const started = performance.now()
    await expect(extractor.extract({
      url: `http://article.example.com:${port}/slow`,
      statusCode: 200,
      headers: { 'content-type': 'text/html' },
      body: Buffer.from(html),
      fields: ['title', 'image'],
      ping: { image: true, logo: true },
      signal: AbortSignal.timeout(300)
    })).rejects.toMatchObject({ name: 'TimeoutError' })
    expect(performance.now() - started).toBeLessThan(5_000)
  })

  it('answers a target error page like any page: status 404 HTML still gives metadata', async () => {
    const result = await extractPage(`http://article.example.com:${port}/no-such-page`, { fields: ['title', 'publisher'] })
    expect(result).toStrictEqual({ title: 'Not found', publisher: 'example.com' })
  })
})

describe('probeMediaObject with the real probe', () => {
  const options = () => ({ probe: client.probe, signal: AbortSignal.timeout(10_000) })

  it('builds the object from a ranged GET of the image', async () => {
    requests.length = 0
    const media = await probeMediaObject(`http://article.example.com:${port}/media/cover.png`, 'image', options())
    expect(media).toStrictEqual({
      url: `http://article.example.com:${port}/media/cover.png`, type: 'png', size: 3632, height: 630, width: 1200, size_pretty: '3.63 kB'
    })
    expect(requests).toEqual(['article.example.com/media/cover.png'])
  })

  it('gives null when the target cannot be reached', async () => {
    const closed = http.createServer()
    await new Promise<void>(resolve => closed.listen(0, '127.0.0.1', resolve))
    const closedPort = (closed.address() as AddressInfo).port
    await new Promise<void>(resolve => closed.close(() => resolve()))
    expect(await probeMediaObject(`http://gone.example.com:${closedPort}/a.png`, 'image', options())).toBeNull()
  })

  it('gives null when the probe refuses the address', async () => {
    await expect(client.probe('http://10.0.0.1/a.png', options())).rejects.toMatchObject({ code: 'EFORBIDDENURL' })
    expect(await probeMediaObject('http://10.0.0.1/a.png', 'logo', options())).toBeNull()
  })

  it('throws once the deadline has passed', async () => {
    const controller = new AbortController()
    controller.abort(new Error('deadline'))
    await expect(probeMediaObject(`http://article.example.com:${port}/media/cover.png`, 'image', { probe: client.probe, signal: controller.signal }))
      .rejects.toThrow('deadline')
  })
})

