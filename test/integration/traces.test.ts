// What pagecast does to a page must not show up as the page's (issue 21, "our own traces in answers"), with a real
// Chromium, the app's real egress proxy and origins on loopback:
// - `attr: 'value'` reads the attribute as served, `attr: 'val'` the live value, and the live values travel under an
//   attribute of ours that no output carries (docs/api.md §3.3);
// - `/html` and `html`/`outerHTML` reads of a rendered page carry none of the styles pagecast adds (the animation
//   freeze, the cosmetic filters, the consent script's), while the styles the user asked for stay;
// - the envelope's `headers` are the target's, without the `connection`/`keep-alive`/`date` our egress proxy would
//   add in browser mode, and without hop-by-hop headers in either mode (docs/api.md §4.1).
// The pages are served under a `.test` name resolved to 127.0.0.1, since the lists turn generic cosmetic filtering
// off on 127.0.0.1 itself (see adblock.test.ts).
import { readFile } from 'node:fs/promises'
import net from 'node:net'
import path from 'node:path'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { build, qs, type Built } from '../helpers/build.ts'
import { servePages } from '../helpers/chromium.ts'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'
import { NO_ANIMATIONS_CSS } from '../../src/browser/page/styles.ts'
import { VALUE_MARK_PREFIX } from '../../src/browser/page/serialize.ts'

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/traces')

/** An origin that answers every request with exactly these bytes of head (no `date`, no `connection` of Node's). */
interface RawOrigin {
  port: number
  close (): Promise<void>
}

const RAW_BODY = '<!doctype html><html><head><meta charset="utf-8"><title>Raw origin</title></head><body><p>Raw.</p></body></html>'

async function startRawOrigin (head: ReadonlyArray<[string, string]>): Promise<RawOrigin> {
  const sockets = new Set<net.Socket>()
  const server = net.createServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => { sockets.delete(socket) })
    socket.on('error', () => { socket.destroy() })
    let received = ''
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1')
      // One request per connection: answer once its head is in, then close (the length frames the body).
      if (!received.includes('\r\n\r\n')) return
      const lines = ['HTTP/1.1 200 OK', ...head.map(([name, value]) => `${name}: ${value}`), `Content-Length: ${Buffer.byteLength(RAW_BODY)}`]
      socket.end(`${lines.join('\r\n')}\r\n\r\n${received.startsWith('HEAD ') ? '' : RAW_BODY}`)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => { resolve() }))
    }
  }
}

const PLAIN_HEAD: ReadonlyArray<[string, string]> = [
  ['Content-Type', 'text/html; charset=utf-8'],
  ['X-Origin-Header', 'kept'],
  ['Cache-Control', 'no-cache']
]
/** The origin's own hop-by-hop headers, and one its `connection` names. */
const HOP_HEAD: ReadonlyArray<[string, string]> = [
  ...PLAIN_HEAD,
  ['Connection', 'keep-alive, X-Hop'],
  ['Keep-Alive', 'timeout=5'],
  ['X-Hop', '1']
]

let fx: FixtureServer
let plain: RawOrigin
let hop: RawOrigin
let app: Built
let host: string

beforeAll(async () => {
  fx = await startFixtureServer()
  await servePages(fx, FIXTURES)
  // A page with a consent platform's banner (OneTrust's markup), so the adblock step starts autoconsent on it.
  const banner = (await readFile(path.resolve(import.meta.dirname, '../fixtures/adblock/banners/onetrust.html'), 'utf8')).replace(/^<!--.*?-->\n/s, '')
  fx.route('/consent.html', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    res.end(`<!doctype html><html><head><title>Consent</title></head><body><p>Text of the page.</p>${banner}</body></html>`)
  })
  plain = await startRawOrigin(PLAIN_HEAD)
  hop = await startRawOrigin(HOP_HEAD)
  host = `traces.test:${fx.port}`
  app = await build({
    ALLOW_PRIVATE_HOSTS: `${host},127.0.0.1:${plain.port},127.0.0.1:${hop.port}`,
    API_KEYS: 'k',
    BROWSER_CONCURRENCY: '1'
  }, {
    resolve: async (hostname) => {
      if (hostname === 'traces.test') return [{ address: '127.0.0.1', family: 4 }]
      throw Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })
    }
  })
}, 120_000)

afterAll(async () => {
  await app?.close()
  await plain?.close()
  await hop?.close()
  await fx?.close()
})

async function get (route: string, query: Record<string, string | number | boolean>): Promise<import('light-my-request').Response> {
  return await app.pro.inject({ method: 'GET', url: `${route}?${qs({ ...query, force: true })}`, headers: { 'x-api-key': 'k' } })
}

async function extract (query: Record<string, string | number | boolean>, data: Record<string, unknown>): Promise<Record<string, unknown>> {
  const res = await get('/', { ...query, meta: false, data: JSON.stringify(data) })
  expect(res.statusCode, res.body).toBe(200)
  return (res.json() as { data: Record<string, unknown> }).data
}

const pageUrl = (): string => `http://${host}/page.html`

describe('form values: `val` is live, attributes are as served', () => {
  const rules = {
    value: { selector: 'input[name=q]', attr: 'value' },
    val: { selector: 'input[name=q]', attr: 'val' },
    lateValue: { selector: 'input[name=late]', attr: 'value' },
    lateVal: { selector: 'input[name=late]', attr: 'val' },
    textareaText: { selector: 'textarea', attr: 'text' },
    textareaVal: { selector: 'textarea', attr: 'val' },
    selectVal: { selector: 'select[name=s]', attr: 'val' },
    multipleVal: { selector: 'select[name=m]', attr: 'val' },
    form: { selector: 'form', attr: 'outerHTML' },
    whole: { attr: 'html' },
    markdown: { attr: 'markdown' }
  }

  it('reads the served attribute with `value` and the live value with `val` (prerender=true), and no output carries our mark', async () => {
    const rendered = await extract({ url: pageUrl(), prerender: true }, rules)
    expect(rendered).toMatchObject({
      value: 'served value',
      val: 'typed value',
      lateValue: null,
      lateVal: 'typed late',
      textareaText: 'served text',
      textareaVal: 'typed text',
      selectVal: 'b',
      multipleVal: ['Y']
    })
    // The markup is the page's: the same form as the served HTML gives, with none of our attributes anywhere.
    const fetched = await extract({ url: pageUrl(), prerender: false }, rules)
    expect(fetched).toMatchObject({ value: 'served value', val: 'served value', textareaVal: 'served text', selectVal: 'a', multipleVal: ['X'] })
    expect(rendered.form).toBe(fetched.form)
    for (const field of ['form', 'whole', 'markdown'] as const) expect(String(rendered[field])).not.toContain(VALUE_MARK_PREFIX)
  }, 60_000)

  it('leaves the live page as it was: an `evaluate` after the serialization sees no mark and the served attributes', async () => {
    const data = await extract({ url: pageUrl(), prerender: true }, {
      val: { selector: 'input[name=q]', attr: 'val' },
      marks: { evaluate: `() => document.documentElement.outerHTML.includes(${JSON.stringify(VALUE_MARK_PREFIX)})` },
      attribute: { evaluate: "() => document.querySelector('input[name=q]').getAttribute('value')" }
    })
    expect(data).toMatchObject({ val: 'typed value', marks: false, attribute: 'served value' })
  }, 60_000)
})

describe("pagecast's own styles", () => {
  /** The `<style>` elements of an HTML text. */
  const styles = (html: string): string[] => html.match(/<style\b[^>]*>[\s\S]*?<\/style>/gi) ?? []

  it('/html of a rendered page holds only the page\'s own style, while ours still apply', async () => {
    const res = await get('/html', { url: pageUrl(), prerender: true })
    expect(res.statusCode, res.body).toBe(200)
    expect(styles(res.body)).toEqual(['<style>.page-own { color: rgb(1, 2, 3); } .spin { animation: spin 3s linear infinite; }</style>'])
    expect(res.body).not.toContain('animation-duration: 0s')
    expect(res.body).not.toContain('display: none !important')
    // The animation freeze and the cosmetic hiding did apply (adblock and animations=false are the defaults), and are
    // no elements of the live page either (an `evaluate` runs after the serialization).
    const applied = await extract({ url: pageUrl(), prerender: true }, {
      adSlot: { evaluate: "() => getComputedStyle(document.querySelector('.ad-slot')).display" },
      animation: { evaluate: "() => getComputedStyle(document.querySelector('.spin')).animationDuration" },
      styleElements: { evaluate: "() => document.querySelectorAll('style:not([id^=autoconsent-])').length" },
      outer: { attr: 'outerHTML' }
    })
    expect(applied).toMatchObject({ adSlot: 'none', animation: '0s', styleElements: 1 })
    expect(styles(String(applied.outer))).toHaveLength(1)
    expect(String(applied.outer)).not.toContain(NO_ANIMATIONS_CSS.split('\n')[1]?.trim())
  }, 60_000)

  it('leaves the consent script\'s styles out of the HTML, and in the live page', async () => {
    // autoconsent, started where a consent platform may be, hides the banners it knows (`style#autoconsent-*`): what
    // the page still holds after the serialization (an `evaluate` runs after it) must not be in the HTML read.
    const data = await extract({ url: `http://${host}/consent.html`, prerender: true }, {
      live: { evaluate: "() => [...document.querySelectorAll('style[id^=autoconsent-]')].map((style) => style.id)" },
      whole: { attr: 'html' }
    })
    expect(String(data.whole)).not.toContain('autoconsent-')
    // The consent handling ran here: the banner was answered and is gone.
    expect(String(data.whole)).toContain('Text of the page.')
    expect(String(data.whole)).not.toContain('onetrust-banner-sdk')
    for (const id of (data.live as string[] | null) ?? []) expect(String(data.whole)).not.toContain(`id="${id}"`)
  }, 60_000)

  it('keeps the styles the user injected, inline and linked, as plain elements', async () => {
    const linked = `http://${host}/user.css`
    const res = await get('/html', { url: pageUrl(), prerender: true, styles: JSON.stringify(['.user-inline { color: rgb(7, 8, 9); }', linked]) })
    expect(res.statusCode, res.body).toBe(200)
    expect(styles(res.body)).toHaveLength(2)
    expect(res.body).toContain('<style>.user-inline { color: rgb(7, 8, 9); }</style>')
    expect(res.body).toContain(`<link rel="stylesheet" href="${linked}">`)
    expect(res.body).not.toContain('data-pagecast')
  }, 60_000)
})

describe("the envelope's headers are the target's", () => {
  /** A rule, so that the page is loaded with `meta=false` (and nothing else is fetched). */
  const READ_TEXT = JSON.stringify({ text: { attr: 'text' } })
  const expected = { 'content-type': 'text/html; charset=utf-8', 'x-origin-header': 'kept', 'cache-control': 'no-cache', 'content-length': String(Buffer.byteLength(RAW_BODY)) }

  it.each([true, false])('an origin that sends no date and no connection header (prerender=%s)', async (prerender) => {
    const res = await get('/', { url: `http://127.0.0.1:${plain.port}/`, prerender, meta: false, data: READ_TEXT })
    expect(res.statusCode, res.body).toBe(200)
    expect(res.headers['x-fetch-mode']).toBe(prerender ? 'prerender' : 'fetch')
    expect((res.json() as { headers: unknown }).headers).toEqual(expected)
  }, 60_000)

  it.each([true, false])('an origin\'s own hop-by-hop headers are left out too (prerender=%s)', async (prerender) => {
    const res = await get('/', { url: `http://127.0.0.1:${hop.port}/`, prerender, meta: false, data: READ_TEXT })
    expect(res.statusCode, res.body).toBe(200)
    expect((res.json() as { headers: unknown }).headers).toEqual(expected)
  }, 60_000)
})
