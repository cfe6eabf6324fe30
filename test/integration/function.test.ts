// `function` (docs/api.md §3.4) through the API, with a real Chromium on the rules fixture page served on loopback:
// the value and the named arguments, the `page` shim, compressed sources, throws and time limits that still answer
// 200, code that sees nothing of Node.js, an endless loop that ends and leaves the browser serving, and a fetch to a
// blocked address that makes no connection.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { brotliCompressSync, gzipSync } from 'node:zlib'
import { createRequire } from 'node:module'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { build, qs, type Built } from '../helpers/build.ts'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'

let fx: FixtureServer
let app: Built
let page: string
/** A loopback server the app is not allowed to reach, and the connections it saw. */
let blocked: Server
let blockedPort: number
let blockedConnections = 0

beforeAll(async () => {
  fx = await startFixtureServer()
  page = `${fx.origin}/rules/`
  blocked = createServer((_req, res) => { res.end('reached') })
  blocked.on('connection', () => { blockedConnections++ })
  await new Promise<void>((resolve) => blocked.listen(0, '127.0.0.1', resolve))
  blockedPort = (blocked.address() as AddressInfo).port
  // One browser slot: "the next request" runs in the same browser as the one before it.
  app = await build({ ALLOW_PRIVATE_HOSTS: fx.host, API_KEYS: 'k', BROWSER_CONCURRENCY: '1' })
}, 120_000)

afterAll(async () => {
  await app?.close()
  await fx?.close()
  await new Promise((resolve) => blocked?.close(resolve))
})

type Query = Record<string, string | number | boolean>

async function run (fn: string, query: Query = {}, plan: 'free' | 'pro' = 'pro') {
  const listener = plan === 'pro' ? app.pro : app.free
  return await listener.inject({
    method: 'GET',
    url: `/?${qs({ url: page, function: fn, force: true, ...query })}`,
    headers: plan === 'pro' ? { 'x-api-key': 'k' } : {}
  })
}

const TITLE = 'Rules fixture | Pagecast Tests'

describe('function: value and arguments', () => {
  it('awaits the value and passes url and the unknown parameters, nested by their dot paths', async () => {
    const res = await run('async ({ url, greeting, opts }) => ({ url, greeting, opts, title: document.title })', {
      greeting: 'hello', 'opts.size': '3', 'opts.tags.0': 'a', 'opts.tags.1': 'b'
    })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.headers['x-fetch-mode']).toBe('prerender')
    expect(res.json().data.function).toEqual({
      isFulfilled: true,
      isRejected: false,
      value: { url: page, greeting: 'hello', opts: { size: '3', tags: ['a', 'b'] }, title: TITLE }
    })
    // The metadata is still there beside it.
    expect(res.json().data.title).toBe('Rules fixture')
  })

  it('offers the page shim: evaluate, $eval, $$eval, title, url and content', async () => {
    const fn = `async ({ page }) => ({
      evaluated: await page.evaluate((a, b) => a + b + document.querySelectorAll('.item').length, 1, 2),
      evaluatedString: await page.evaluate('6 * 7'),
      heading: await page.$eval('h1.headline', (el, suffix) => el.textContent.trim() + suffix, '!'),
      ids: await page.$$eval('.item', (els) => els.map((el) => el.dataset.id)),
      title: await page.title(),
      url: await page.url(),
      doctype: (await page.content()).slice(0, 15).toLowerCase()
    })`
    const res = await run(fn)
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json().data.function.value).toEqual({
      evaluated: 6,
      evaluatedString: 42,
      heading: 'The   main   story!',
      ids: ['1', '2', '3'],
      title: TITLE,
      url: page,
      doctype: '<!doctype html>'
    })
  })

  it('gives null for undefined, and answers with only the function when meta=false', async () => {
    const res = await run('() => {}', { meta: false })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json().data).toEqual({ function: { isFulfilled: true, isRejected: false, value: null } })
  })

  it('runs compressed sources (lz#, br#, gz#)', async () => {
    const source = '({ page }) => page.title()'
    const lz = createRequire(import.meta.url)('lz-string') as { compressToEncodedURIComponent: (s: string) => string }
    for (const fn of [
      `lz#${lz.compressToEncodedURIComponent(source)}`,
      `br#${brotliCompressSync(source).toString('base64url')}`,
      `gz#${gzipSync(source).toString('base64url')}`
    ]) {
      const res = await run(fn, { meta: false })
      expect(res.statusCode, res.body).toBe(200)
      expect(res.json().data.function).toEqual({ isFulfilled: true, isRejected: false, value: TITLE })
    }
  })

  it('keys the cache on the arguments', async () => {
    const fn = '({ n }) => n'
    const first = await run(fn, { n: 1, force: false, meta: false })
    const second = await run(fn, { n: 2, force: false, meta: false })
    expect(first.json().data.function.value).toBe('1')
    expect(second.json().data.function.value).toBe('2')
  })
})

describe('function: failures still answer 200', () => {
  it('turns a throw into isRejected with its name and message', async () => {
    const res = await run('() => { null.x }')
    expect(res.statusCode, res.body).toBe(200)
    const result = res.json().data.function
    expect(result.isFulfilled).toBe(false)
    expect(result.isRejected).toBe(true)
    expect(result.value.name).toBe('TypeError')
    expect(result.value.message).toMatch(/null/)
  })

  it('rejects a source that is not a function at run time, and a value too large to return', async () => {
    const notFunction = await run('(() => 1)()')
    expect(notFunction.json().data.function).toMatchObject({ isRejected: true, value: { name: 'TypeError' } })
    const large = await run('() => "a".repeat(5 * 1024 * 1024)')
    expect(large.statusCode).toBe(200)
    expect(large.json().data.function).toMatchObject({ isRejected: true, value: { name: 'RangeError' } })
  })

  it('sees no process, require or module: it runs in the page, not in the service', async () => {
    const res = await run('() => [typeof process, typeof require, typeof module, typeof globalThis.Buffer, typeof window]')
    expect(res.json().data.function.value).toEqual(['undefined', 'undefined', 'undefined', 'undefined', 'object'])
  })

  it('ends an endless loop at the time limit, answers 200, and the browser serves the next request', async () => {
    // The free plan's 5 s limit ends the loop; the request's 20 s leave the rest of the work (stopping the script,
    // the screenshot, the metadata) well over 10 s, so a loaded 2-core machine still answers in time. (With a 4.5 s
    // request, the ⅓ left after the loop's ⅔ share was not enough at load average 8: a 504.)
    const started = Date.now()
    const res = await run('() => { while (true) {} }', { timeout: 20_000, screenshot: true }, 'free')
    const took = Date.now() - started
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json().data.function).toMatchObject({ isFulfilled: false, isRejected: true, value: { name: 'TimeoutError' } })
    // The page still works after the loop is stopped: the screenshot after it was taken.
    expect(res.json().data.screenshot.type).toBe('png')
    expect(took).toBeGreaterThanOrEqual(5000)
    expect(took).toBeLessThan(20_000)
    const next = await run('({ page }) => page.title()', { meta: false })
    expect(next.statusCode).toBe(200)
    expect(next.json().data.function.value).toBe(TITLE)
  }, 60_000)

  it('gives up on a promise that never settles', async () => {
    const res = await run('() => new Promise(() => {})', { timeout: 12_000, meta: false })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json().data.function).toMatchObject({ isRejected: true, value: { name: 'TimeoutError' } })
    const next = await run('() => 1 + 1', { meta: false })
    expect(next.json().data.function.value).toBe(2)
  }, 30_000)

  it('holds free code to 5 s whatever time the request has', async () => {
    const started = Date.now()
    const res = await run('() => new Promise(() => {})', { meta: false, timeout: 20_000 }, 'free')
    const took = Date.now() - started
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json().data.function.value).toEqual({ name: 'TimeoutError', message: 'The function did not finish within 5000 ms.' })
    expect(took).toBeGreaterThanOrEqual(5000)
    expect(took).toBeLessThan(12_000)
  }, 30_000)

  it('cannot reach a blocked address: the fetch fails in the page and no connection is made', async () => {
    const target = `http://127.0.0.1:${blockedPort}/secret`
    // A CORS fetch fails outright; a no-cors one, an image and a beacon get nothing readable. None connects.
    const fn = `async () => {
      let cors
      try { await fetch(${JSON.stringify(target)}); cors = 'reached' } catch (e) { cors = e.name }
      const opaque = await fetch(${JSON.stringify(target)}, { mode: 'no-cors' }).then((r) => r.type, (e) => e.name)
      const image = await new Promise((resolve) => {
        const img = new Image()
        img.onload = () => resolve('loaded')
        img.onerror = () => resolve('error')
        img.src = ${JSON.stringify(`${target}.png`)}
      })
      navigator.sendBeacon(${JSON.stringify(`${target}/beacon`)}, 'x')
      return { cors, opaque, image }
    }`
    const res = await run(fn, { meta: false })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.json().data.function.value).toMatchObject({ cors: 'TypeError', image: 'error' })
    expect(blockedConnections).toBe(0)
  })
})

describe('function: bad sources', () => {
  it('gives EINVALFUNCTION for a source that does not parse, and for a free source over 1024 bytes', async () => {
    const broken = await run('() => {')
    expect(broken.statusCode).toBe(400)
    expect(broken.json().code).toBe('EINVALFUNCTION')
    const long = await run(`() => ${JSON.stringify('a'.repeat(1100))}`, {}, 'free')
    expect(long.statusCode).toBe(400)
    expect(long.json().code).toBe('EINVALFUNCTION')
  })
})
