// The Microlink card SDK (@microlink/vanilla) pointed at pagecast: a page served on loopback loads the SDK bundle and
// the globals its UMD build expects (React 18, ReactDOM, react-is, styled-components 5 and the @microlink/mql the SDK
// depends on), all served from node_modules, the way the SDK's documentation loads them from a CDN. The card asks our
// free listener (the SDK's `endpoint` option, sent by mql) about a fixture page, and is checked in Chromium: our title,
// description and image in the card; with `media: ['iframe', ...]` our `data.iframe` html in the card and its script
// loaded from `scripts`. The browser may reach loopback only: anything else is aborted, and the only such request
// allowed is the SDK's own logo (its "powered by" mark, which it always loads from its CDN).
// (`video`, `audio` and `palette` cards — the SDK's `media: ['video']`/`['audio']` and `contrast` — would go here
// once those detectors are built.)
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Browser, Page } from 'playwright-core'
import { build, type Built } from '../helpers/build.ts'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'
import { launchTestBrowser } from '../helpers/chromium.ts'

const NODE_MODULES = path.resolve(import.meta.dirname, '../../node_modules')

/** The SDK's globals, in load order, as files of node_modules. */
const SDK_SCRIPTS: ReadonlyArray<[string, string]> = [
  ['react.js', path.join(NODE_MODULES, 'react/umd/react.production.min.js')],
  ['react-dom.js', path.join(NODE_MODULES, 'react-dom/umd/react-dom.production.min.js')],
  ['react-is.js', path.join(NODE_MODULES, 'react-is/umd/react-is.production.min.js')],
  ['styled-components.js', path.join(NODE_MODULES, 'styled-components/dist/styled-components.min.js')],
  // The mql the SDK itself depends on (its React package pins an older one than the project's devDependency).
  ['mql.js', path.join(NODE_MODULES, '@microlink/react/node_modules/@microlink/mql/lightweight/index.umd.js')],
  ['microlink.js', path.join(NODE_MODULES, '@microlink/vanilla/dist/microlink.min.js')]
]

let fx: FixtureServer
let app: Built
let apiOrigin: string
let browser: Browser
const outside: string[] = []
const SDK_OWN_ASSETS = new Set(['https://cdn.microlink.io/logo/logo.svg'])

beforeAll(async () => {
  fx = await startFixtureServer()
  for (const [name, file] of SDK_SCRIPTS) {
    const body = await readFile(file)
    fx.route(`/sdk/${name}`, (_req, res) => { res.writeHead(200, { 'content-type': 'text/javascript' }); res.end(body) })
  }
  fx.route('/sdk/card.html', (req, res) => {
    const options = new URL(req.url ?? '/', 'http://x').searchParams.get('options') ?? '{}'
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    res.end(`<!doctype html><html><head><meta charset="utf-8"><title>SDK</title></head><body>
${SDK_SCRIPTS.map(([name]) => `<script src="/sdk/${name}"></script>`).join('\n')}
<a class="card" href="${fx.origin}/oembed/card.html">the page</a>
<script>microlink('.card', ${options})</script>
</body></html>`)
  })
  fx.route('/oembed/card-endpoint', (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({
      version: '1.0',
      type: 'rich',
      html: `<blockquote class="loopback-post">A post on loopback</blockquote><script async src="${fx.origin}/oembed/widget.js" charset="utf-8"></script>`
    }))
  })
  fx.route('/oembed/widget.js', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/javascript' })
    res.end("document.querySelectorAll('.loopback-post').forEach((el) => { el.dataset.widget = 'ran' })")
  })
  app = await build({ ALLOW_PRIVATE_HOSTS: fx.host })
  apiOrigin = (await app.free.listen({ port: 0, host: '127.0.0.1' })).replace(/\/$/, '')
  browser = await launchTestBrowser()
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await app?.close()
  await fx?.close()
})

async function openCard (options: Record<string, unknown>): Promise<Page> {
  const context = await browser.newContext()
  await context.route('**/*', async (route) => {
    const { hostname } = new URL(route.request().url())
    if (hostname === '127.0.0.1') await route.continue()
    else {
      if (!SDK_OWN_ASSETS.has(route.request().url())) outside.push(route.request().url())
      await route.abort()
    }
  })
  const page = await context.newPage()
  const errors: string[] = []
  page.on('pageerror', (err) => { errors.push(err.message) })
  await page.goto(`${fx.origin}/sdk/card.html?options=${encodeURIComponent(JSON.stringify({ endpoint: apiOrigin, ...options }))}`)
  expect(errors).toEqual([])
  return page
}

describe('the Microlink card SDK against pagecast', () => {
  it('shows our title, description and image', async () => {
    const page = await openCard({ media: ['image', 'logo'] })
    try {
      await page.waitForSelector('.microlink_card__content_title', { timeout: 20_000 })
      await expect.poll(async () => await page.textContent('.microlink_card__content_title'), { timeout: 20_000 }).toBe('Bees in the city')
      expect(await page.textContent('.microlink_card__content_description')).toBe('Rooftop hives and what they eat.')
      const image = await page.$eval('.microlink_card__media_image', (el) => getComputedStyle(el).backgroundImage)
      expect(image).toBe(`url("${fx.origin}/article/cover.png")`)
    } finally {
      await page.context().close()
    }
    expect(outside).toEqual([])
  })

  it("with media: ['iframe', ...] shows our data.iframe html and loads its script", async () => {
    const page = await openCard({ media: ['iframe', 'image', 'logo'] })
    try {
      const post = await page.waitForSelector('.microlink_card__iframe .loopback-post', { timeout: 20_000 })
      expect(await post.textContent()).toBe('A post on loopback')
      // The script came out of `html` into `scripts`, and the SDK added it to the page, which ran it.
      await expect.poll(async () => await post.getAttribute('data-widget'), { timeout: 10_000 }).toBe('ran')
      expect(await page.$$eval(`script[src="${fx.origin}/oembed/widget.js"]`, (els) => els.length)).toBe(1)
      expect(await page.$$eval('.microlink_card__iframe script', (els) => els.length)).toBe(0)
    } finally {
      await page.context().close()
    }
    expect(outside).toEqual([])
  })
})
