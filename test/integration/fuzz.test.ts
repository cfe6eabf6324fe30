// Fuzzing the whole request path (routing, plan, quota, parsing, validation, cache, guard, fetch, reply) through
// `inject` on both listeners, with generated queries: random and known keys, deep dot paths, huge numbers, unicode,
// repeated keys, prototype-pollution keys, invalid percent escapes. The parser alone is property-tested in
// test/unit/query.property.test.ts; here the invariants are the HTTP ones: never a 500, never a crash, every
// non-2xx is a JSON error whose code is in the catalog with the catalog's status, and no prototype gains a property.
//
// Network rule: loopback only. The injected resolver knows no name (every name gives EINVALURL without DNS), the
// only exempt host is the loopback fixture, and a safety net refuses (and records) any socket this process opens to
// anything but 127.0.0.1/::1, so even a generated public IP literal (a proxy, an injected script) cannot leave.
import { installLoopbackNet, type ConnectAttempt } from '../helpers/loopback-net.ts'
import fc from 'fast-check'
import type { LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ERROR_CATALOG, ERROR_CODES } from '../../src/errors.ts'
import type { ErrorCode } from '../../src/errors.ts'
import { PARAMETERS } from '../../src/docs/parameters.ts'
import { build, type Built } from '../helpers/build.ts'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'

const KEY = 'fuzz-key'

// ---------------------------------------------------------------- safety net: no socket leaves loopback

const violations: ConnectAttempt[] = []
let uninstallSafetyNet = (): void => {}

function installSafetyNet (): void {
  uninstallSafetyNet = installLoopbackNet({ violations })
}

// ---------------------------------------------------------------- invariants

function protoSnapshot (): string[] {
  return [Object.prototype, Array.prototype, Function.prototype]
    .flatMap((proto, i) => Reflect.ownKeys(proto).map((name) => `${i}:${String(name)}`))
    .sort()
}

let baseline: string[] = []
let counted = 0
/** Outcomes seen (status or code), so the last test can check that the generators reach the interesting paths. */
const outcomes = new Map<string, number>()

function tally (outcome: string): void {
  outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1)
}

function checkResponse (res: LightMyRequestResponse, what: string): void {
  counted += 1
  expect(res.statusCode, what).not.toBe(500)
  expect(res.statusCode, what).toBeLessThan(600)
  if (res.statusCode >= 200 && res.statusCode < 300) { tally(String(res.statusCode)); return }
  expect(res.statusCode, `${what}: unexpected ${res.statusCode}`).toBeGreaterThanOrEqual(400)
  expect(String(res.headers['content-type']), what).toMatch(/^application\/json/)
  let body: { status?: unknown, code?: unknown, message?: unknown, data?: unknown, more?: unknown, id?: unknown }
  try {
    body = JSON.parse(res.body) as typeof body
  } catch {
    throw new Error(`${what}: a ${res.statusCode} with a body that is not JSON: ${res.body.slice(0, 200)}`)
  }
  expect(ERROR_CODES, `${what}: ${res.body.slice(0, 300)}`).toContain(body.code)
  tally(String(body.code))
  expect(res.statusCode, `${what}: ${String(body.code)}`).toBe(ERROR_CATALOG[body.code as ErrorCode].status)
  expect(body.status, what).toBe(res.statusCode >= 500 ? 'error' : 'fail')
  expect(typeof body.message === 'string' && body.message !== '', what).toBe(true)
  expect(typeof body.data === 'object' && body.data !== null, what).toBe(true)
  expect(res.body, what).not.toMatch(/\n\s+at /) // no stack trace
  expect(res.headers['cache-control'], what).toBe('no-store')
  expect(body.id, what).toBe(res.headers['x-request-id'])
  expect(String(body.more), what).toMatch(new RegExp(`#${String(body.code).toLowerCase()}$`))
}

function checkPrototypes (): void {
  expect(protoSnapshot()).toEqual(baseline)
  const probe: Record<string, unknown> = {}
  for (const name of ['x', 'polluted', 'isAdmin', 'prototype', 'selector']) expect(probe[name], name).toBeUndefined()
  expect(([] as unknown as Record<string, unknown>).polluted).toBeUndefined()
  expect((((): void => {}) as unknown as Record<string, unknown>).polluted).toBeUndefined()
}

// ---------------------------------------------------------------- generators

const KNOWN_NAMES = [...new Set([
  ...PARAMETERS.map((p) => p.name),
  'url', 'wait_until', 'wait_for_selector', 'color_scheme', 'media_type', 'stale_ttl', 'cache_key', 'path', 'pdf.path',
  'screenshot.path', 'screenshot.type', 'screenshot.fullPage', 'screenshot.element', 'screenshot.overlay.background',
  'screenshot.overlay.browser', 'screenshot.quality', 'screenshot.animated', 'pdf.margin', 'pdf.margin.top', 'pdf.format',
  'pdf.scale', 'pdf.pageRanges', 'pdf.landscape', 'viewport.width', 'viewport.deviceScaleFactor', 'viewport.isMobile',
  'data.title.selector', 'data.title.attr', 'data.title.type', 'data.title.evaluate', 'data.x.0.selector', 'data.x',
  'waitUntil.0', 'waitUntil.1', 'click.0', 'headers.user-agent', 'headers.x-forwarded-for', 'headers.host', 'meta.title',
  'meta.logo.square', 'insights.lighthouse', 'insights.technologies', 'ping.image', 'iframe.maxwidth', 'proxy.url',
  'fullPage', 'omitBackground', 'type', 'format', 'scale', 'margin', 'pageRanges', 'landscape', 'v', 'force'
])]

const POLLUTION_KEYS = [
  '__proto__', '__proto__.x', '__proto__.polluted', 'constructor', 'constructor.prototype', 'constructor.prototype.polluted',
  'prototype', 'data.__proto__.selector', 'data.__proto__', '__proto__.__proto__.x', 'headers.__proto__', 'meta.__proto__',
  'viewport.constructor.prototype.isAdmin', 'screenshot.__proto__.type', 'data.x.__proto__.polluted', 'toString',
  'hasOwnProperty', 'valueOf', '__defineGetter__', 'waitUntil.__proto__', 'click.length', 'data.constructor', 'ttl.__proto__',
  'a.__proto__.b.constructor.prototype.x', '__PROTO__', '__proto_', 'pdf.margin.__proto__.top'
]

const BAD_ESCAPES = ['%', '%%', '%Z', '%ZZ', '%E0%A4', '%C0%AF', '%FF', '%ED%A0%80', '%F4%90%80%80', '%00', '%C3', '%e2%82', '%u0041', '%2', '%%32%30']

const HUGE_NUMBERS = ['1e308', '1e309', '-1e309', '9007199254740993', '99999999999999999999999999', '-0', 'NaN', 'Infinity',
  '-Infinity', '0x10', '1_000', '.5', '5.', '1e-400', '0.0000001', '-1', '2147483648', '4294967296', '18446744073709551616',
  '1'.repeat(400)]

const segment = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...KNOWN_NAMES.flatMap((n) => n.split('.'))) },
  { weight: 2, arbitrary: fc.stringMatching(/^[a-zA-Z_$-]{1,12}$/) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 8 }) },
  { weight: 1, arbitrary: fc.constantFrom('__proto__', 'constructor', 'prototype', '0', '1', '-1', '4294967295', '1e3', '') }
)

const key = fc.oneof(
  { weight: 5, arbitrary: fc.constantFrom(...KNOWN_NAMES) },
  { weight: 2, arbitrary: fc.constantFrom(...POLLUTION_KEYS) },
  { weight: 2, arbitrary: fc.array(segment, { minLength: 1, maxLength: 5 }).map((parts) => parts.join('.')) },
  // Deep paths.
  { weight: 1, arbitrary: fc.array(segment, { minLength: 20, maxLength: 200 }).map((parts) => parts.join('.')) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) }
)

const jsonish = fc.oneof(
  fc.json({ maxDepth: 4 }),
  fc.constantFrom('{', '[', '{"__proto__":{"polluted":1}}', '{"constructor":{"prototype":{"polluted":1}}}',
    '[{"selector":"h1","attr":"text"}]', '{"selector":"title","attr":"text","type":"string"}', '[[[[[[[[]]]]]]]]',
    '{"a":' + '['.repeat(500), '{"selector":"h1","evaluate":"(() => 1)"}', '{"type":"nope"}', 'null', '[]', '{}')
)

const rawValue = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 30 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  { weight: 2, arbitrary: fc.constantFrom(...HUGE_NUMBERS) },
  { weight: 2, arbitrary: fc.oneof(fc.integer(), fc.double(), fc.bigInt({ min: -(2n ** 200n), max: 2n ** 200n })).map(String) },
  { weight: 2, arbitrary: fc.constantFrom('true', 'false', 'TRUE', 'False', '', 'yes', '0', '1', 'null', 'undefined', 'auto', 'min', 'max') },
  { weight: 2, arbitrary: jsonish },
  { weight: 1, arbitrary: fc.constantFrom('1s', '500ms', '2 days', '1.5h', '0ms', '-5s', '99999999d', '1e3s', 'ms') },
  { weight: 1, arbitrary: fc.constantFrom('png', 'jpeg', 'webp', 'gif', 'A4', 'Letter', '1cm', '-1px', '1e9in', 'iPhone 15', 'load', 'networkidle0', 'dark', 'print') },
  { weight: 1, arbitrary: fc.constantFrom('polluted', '__proto__', 'constructor', '#000', 'linear-gradient(red, blue)', 'https://fuzz.invalid/bg.png') },
  // Values that look like URLs: none resolves (the resolver knows no name), and public literals hit the safety net.
  { weight: 1, arbitrary: fc.constantFrom('http://fuzz.invalid/', 'socks5://user:pass@fuzz.invalid:1080', 'http://127.0.0.1:1/', 'ftp://x/', 'http://[::1]/', 'javascript:alert(1)', 'data:text/html,x') }
)

/** Values a client would plausibly send, so that more requests get past validation and into the pipeline. */
const plausibleValue = fc.oneof(
  fc.constantFrom('true', 'false', '', '1', '0', '2', '100', '800', '1280', '0.5', '1s', '3s', '500ms', 'load', 'domcontentloaded',
    'networkidle0', 'png', 'jpeg', 'webp', 'A4', 'Letter', '1cm', '10px', 'dark', 'light', 'print', 'screen', 'h1', 'title',
    'body', '#x', 'a', 'text', 'html', 'url', 'image', 'title,description', 'data.title', 'iPhone 15', 'Macbook Pro 13',
    '{"selector":"h1","attr":"text"}', '[{"selector":"title"}]', '1-2', '1'),
  rawValue
)

/** A query piece: `k=v`, `k` alone, `k=` or a piece with raw, invalid percent escapes. */
function encodePart (text: string): string {
  try { return encodeURIComponent(text) } catch { return encodeURIComponent(text.replace(/[\uD800-\uDFFF]/g, '\uFFFD')) }
}

const part = fc.oneof(
  { weight: 8, arbitrary: fc.tuple(key, rawValue).map(([k, v]) => `${encodePart(k)}=${encodePart(v)}`) },
  { weight: 1, arbitrary: key.map((k) => encodePart(k)) },
  { weight: 1, arbitrary: key.map((k) => `${encodePart(k)}=`) },
  { weight: 2, arbitrary: fc.tuple(key, fc.constantFrom(...BAD_ESCAPES), fc.constantFrom(...BAD_ESCAPES)).map(([k, a, b]) => `${encodePart(k)}${a}=${b}x`) },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...BAD_ESCAPES), fc.constantFrom(...BAD_ESCAPES)).map(([a, b]) => `${a}=${b}`) },
  { weight: 1, arbitrary: fc.constantFrom('=', '==', '&', '=x', '&&&', 'a=b=c', '?', '#', '+', '%20=%20', ';', 'url') }
)

/** Repeated keys: the same piece several times, or the same key with several values. */
const repeated = fc.tuple(key, fc.array(rawValue, { minLength: 2, maxLength: 6 }))
  .map(([k, values]) => values.map((v) => `${encodePart(k)}=${encodePart(v)}`))

const pieces = fc.tuple(fc.array(part, { maxLength: 12 }), fc.option(repeated, { nil: undefined }))
  .map(([parts, rep]) => (rep === undefined ? parts : [...parts, ...rep]))

/** Target URLs that can never lead to a connection: unresolvable names, blocked or bad literals, garbage. */
const safeTarget = fc.oneof(
  fc.constant(undefined),
  fc.constantFrom('', 'no', 'http://', 'https://', 'http:///x', 'ftp://fuzz.invalid/', 'file:///etc/passwd', 'javascript:1',
    'http://localhost/', 'http://127.0.0.1:1/', 'http://[::1]/', 'http://0/', 'http://10.0.0.1/', 'http://169.254.169.254/',
    'http://fuzz.invalid/', 'https://fuzz.invalid/a?b#c', 'http://xn--/', 'http://a b/', 'http://%zz/', 'http://ex%41mple.invalid/',
    'http://üñí.invalid/', 'http://fuzz.invalid:99999/', 'http://fuzz.invalid:-1/'),
  fc.string({ maxLength: 40 }).map((s) => `http://fuzz.invalid/${s}`),
  fc.string({ maxLength: 40 })
    // Never a string that parses as an http(s) URL with a host other than an unresolvable name.
    .filter((s) => { try { const u = new URL(s); return !/^https?:$/.test(u.protocol) } catch { return true } })
)

function queryOf (target: string | undefined, parts: string[], suffix: string[] = []): string {
  const all = [...(target === undefined ? [] : [`url=${encodePart(target)}`]), ...parts, ...suffix]
  return all.join('&')
}

// ---------------------------------------------------------------- setup

let fx: FixtureServer
let app: Built

beforeAll(async () => {
  installSafetyNet()
  fx = await startFixtureServer()
  app = await build({
    API_KEYS: KEY,
    FREE_DAILY_LIMIT: '0',
    ALLOW_PRIVATE_HOSTS: fx.host,
    BROWSER_CONCURRENCY: '2',
    LOG_LEVEL: 'fatal'
  }, {
    resolve: async (hostname) => { throw Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }) }
  })
  baseline = protoSnapshot()
}, 60_000)

afterAll(async () => {
  await app?.close()
  await fx?.close()
  uninstallSafetyNet()
})

async function send (listener: 'free' | 'pro', query: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  const target = listener === 'free' ? app.free : app.pro
  return await target.inject({
    method: 'GET',
    url: `/?${query}`,
    headers: listener === 'pro' ? { 'x-api-key': KEY, ...headers } : headers
  })
}

// ---------------------------------------------------------------- properties

describe('fuzzing the API through inject', () => {
  it('random queries with a target that cannot connect, on both listeners', async () => {
    await fc.assert(fc.asyncProperty(safeTarget, pieces, fc.constantFrom<'free' | 'pro'>('free', 'pro'), async (target, parts, listener) => {
      const query = queryOf(target, parts)
      checkResponse(await send(listener, query), `${listener} /?${query}`)
      checkPrototypes()
    }), { numRuns: 4000 })
  }, 60_000)

  it('known parameter names with random values, and an unresolvable target (validation runs in full)', async () => {
    const knownOnly = fc.array(fc.tuple(fc.constantFrom(...KNOWN_NAMES), rawValue), { minLength: 1, maxLength: 10 })
      .map((pairs) => pairs.map(([k, v]) => `${encodePart(k)}=${encodePart(v)}`))
    await fc.assert(fc.asyncProperty(knownOnly, fc.constantFrom<'free' | 'pro'>('free', 'pro'), async (parts, listener) => {
      // The target is set last, so a generated `url` cannot replace it.
      const query = queryOf(undefined, parts, ['url=http%3A%2F%2Ffuzz.invalid%2Fpage'])
      checkResponse(await send(listener, query), `${listener} /?${query}`)
      checkPrototypes()
    }), { numRuns: 3000 })
  }, 60_000)

  it('prototype-pollution keys and invalid escapes, in every position', async () => {
    const pollution = fc.array(fc.tuple(fc.constantFrom(...POLLUTION_KEYS), fc.oneof(rawValue, fc.constant('polluted')), fc.constantFrom('', ...BAD_ESCAPES)), { minLength: 1, maxLength: 8 })
      .map((triples) => triples.map(([k, v, bad]) => `${encodePart(k)}${bad}=${encodePart(v)}${bad}`))
    await fc.assert(fc.asyncProperty(pollution, fc.constantFrom<'free' | 'pro'>('free', 'pro'), safeTarget, async (parts, listener, target) => {
      const query = queryOf(target, parts)
      checkResponse(await send(listener, query), `${listener} /?${query}`)
      checkPrototypes()
    }), { numRuns: 2500 })
  }, 60_000)

  it('random x-api-header-* and odd headers on the pro listener', async () => {
    const headerName = fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/).map((n) => `x-api-header-${n}`)
    const headerValue = fc.string({ maxLength: 40 }).filter((v) => /^[\t\x20-\x7e]*$/.test(v))
    await fc.assert(fc.asyncProperty(fc.dictionary(headerName, headerValue, { maxKeys: 4 }), pieces, safeTarget, fc.constantFrom<'free' | 'pro'>('free', 'pro'), async (headers, parts, target, listener) => {
      const query = queryOf(target, parts)
      checkResponse(await send(listener, query, headers), `${listener} /?${query} ${JSON.stringify(headers)}`)
      checkPrototypes()
    }), { numRuns: 500 })
  }, 60_000)

  it('random queries against the loopback fixture (a real fetch, sometimes a render)', async () => {
    const pages = fc.constantFrom('/plain.html', '/', '/missing', '/red/')
    await fc.assert(fc.asyncProperty(pages, fc.array(fc.tuple(fc.constantFrom(...KNOWN_NAMES), plausibleValue), { maxLength: 5 }), fc.constantFrom<'free' | 'pro'>('free', 'pro'), async (pathname, pairs, listener) => {
      const parts = pairs.map(([k, v]) => `${encodePart(k)}=${encodePart(v)}`)
      // Set last: the fixture target, no browser unless a parameter insists, and a short deadline.
      const query = queryOf(undefined, parts, [`url=${encodePart(`${fx.origin}${pathname}`)}`, 'prerender=false', 'timeout=4s', 'force=true'])
      // timeout=4s bounds every request: an answer later than 15 s is a deadline that was not kept.
      let timer: NodeJS.Timeout | undefined
      const late = new Promise<never>((_resolve, reject) => { timer = setTimeout(() => { reject(new Error(`no answer within 15 s: ${listener} /?${query}`)) }, 15_000) })
      const res = await Promise.race([send(listener, query), late]).finally(() => { clearTimeout(timer) })
      checkResponse(res, `${listener} /?${query}`)
      checkPrototypes()
    }), { numRuns: 400, endOnFailure: true })
  }, 90_000)

  it('random methods and paths on both listeners', async () => {
    const method = fc.constantFrom<'GET' | 'HEAD' | 'POST' | 'PUT' | 'DELETE' | 'PATCH' | 'OPTIONS'>('GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS')
    const pathname = fc.oneof(
      fc.constantFrom('/', '//', '/./', '/%2e%2e/', '/files/', '/files/..%2f..%2fetc%2fpasswd', '/files/%00', '/health', '/ready', '/docs', '/openapi.json', '/__proto__', '/constructor/prototype', '/?'),
      fc.array(segment.map(encodePart), { maxLength: 4 }).map((parts) => `/${parts.join('/')}`)
    )
    await fc.assert(fc.asyncProperty(method, pathname, pieces, fc.constantFrom<'free' | 'pro'>('free', 'pro'), async (verb, where, parts, listener) => {
      const target = listener === 'free' ? app.free : app.pro
      const query = queryOf('http://fuzz.invalid/', parts)
      const res = await target.inject({ method: verb, url: `${where}${where.includes('?') ? '&' : '?'}${query}`, headers: listener === 'pro' ? { 'x-api-key': KEY } : {} })
      if (verb === 'HEAD') {
        expect(res.statusCode, `${verb} ${where}`).not.toBe(500)
        expect(res.body).toBe('')
        counted += 1
      } else if (verb === 'OPTIONS') {
        expect(res.statusCode, `${verb} ${where}`).toBe(204)
        counted += 1
      } else if (res.statusCode !== 503 || !where.startsWith('/ready')) {
        checkResponse(res, `${listener} ${verb} ${where}?${query}`)
      }
      checkPrototypes()
    }), { numRuns: 600 })
  }, 60_000)

  // A path with an invalid percent escape once got Fastify's own 400 body (FST_ERR_BAD_URL); now ENOTFOUND.
  it('a path with an invalid percent escape is a catalog error', async () => {
    for (const where of ['/%', '/%ZZ', '/%E0%A4', '/files/%ZZ', '/%?url=x']) {
      for (const target of [app.free, app.pro]) {
        checkResponse(await target.inject({ method: 'GET', url: where, headers: target === app.pro ? { 'x-api-key': KEY } : {} }), where)
      }
    }
  })

  it('ran the planned number of requests, and no socket left loopback', () => {
    expect(counted).toBeGreaterThanOrEqual(10_000)
    expect(violations).toEqual([])
    // The generators reach past the parser: successes, plan gates, value checks and the guard all show up.
    for (const outcome of ['200', 'EINVALQUERY', 'EINVALURL', 'EFORBIDDENURL', 'EINVALDATA', 'EHEADERS', 'ETTL', 'EPROXY', 'EINVALTTL']) {
      expect(outcomes.get(outcome) ?? 0, `${outcome} in ${JSON.stringify([...outcomes])}`).toBeGreaterThan(0)
    }
  })
})
