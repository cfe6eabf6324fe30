// The Microlink card SDK (@microlink/vanilla) pointed at pagecast: a page served on loopback loads the SDK bundle and
// the globals its UMD build expects (React 18, ReactDOM, react-is, styled-components 5 and the @microlink/mql the SDK
// depends on), all served from node_modules, the way the SDK's documentation loads them from a CDN. The card asks our
// free listener (the SDK's `endpoint` option, sent by mql) about a fixture page, and is checked in Chromium: our title,
// description and image in the card; with `media: ['iframe', ...]` our `data.iframe` html in the card and its script
// loaded from `scripts`. The browser may reach loopback only: anything else is aborted, and the only such request
// allowed is the SDK's own logo (its "powered by" mark, which it always loads from its CDN).
// With `media: ['video', 'audio', 'image']` the card plays our `data.video` or `data.audio` (committed media files),
// and with `contrast` it takes its colours from our palette of the page's image (blocks.png, whose colours are known).
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Browser, Page } from 'playwright-core'
import { build, type Built } from '../helpers/build.ts'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'
import { launchTestBrowser } from '../helpers/chromium.ts'
import { serveFile, servePage } from '../helpers/media-files.ts'

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
    const params = new URL(req.url ?? '/', 'http://x').searchParams
    const options = params.get('options') ?? '{}'
    const target = params.get('target') ?? '/oembed/card.html'
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    res.end(`<!doctype html><html><head><meta charset="utf-8"><title>SDK</title></head><body>
${SDK_SCRIPTS.map(([name]) => `<script src="/sdk/${name}"></script>`).join('\n')}
<a class="card" href="${fx.origin}${target}">the page</a>
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
  serveFile(fx, '/media/clip.mp4', 'clip.mp4')
  serveFile(fx, '/media/tone.mp3', 'tone.mp3')
  serveFile(fx, '/img/blocks.png', 'blocks.png')
  servePage(fx, '/card/video', '<meta property="og:title" content="A clip"><meta property="og:image" content="/img/blocks.png">' +
    '<meta property="og:video" content="/media/clip.mp4">')
  servePage(fx, '/card/audio', '<meta property="og:title" content="A tone"><meta property="og:image" content="/img/blocks.png">' +
    '<meta property="og:audio" content="/media/tone.mp3">')
  app = await build({ ALLOW_PRIVATE_HOSTS: fx.host })
  apiOrigin = (await app.free.listen({ port: 0, host: '127.0.0.1' })).replace(/\/$/, '')
  browser = await launchTestBrowser()
}, 120_000)

afterAll(async () => {
  await browser?.close()
  await app?.close()
  await fx?.close()
})

async function openCard (options: Record<string, unknown>, target?: string): Promise<Page> {
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
  const query = new URLSearchParams({ options: JSON.stringify({ endpoint: apiOrigin, ...options }), ...(target === undefined ? {} : { target }) })
  await page.goto(`${fx.origin}/sdk/card.html?${query.toString()}`)
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

  it("with media: ['video', 'audio', 'image'] plays our data.video", async () => {
    const page = await openCard({ media: ['video', 'audio', 'image'] }, '/card/video')
    try {
      const video = await page.waitForSelector('video.microlink_card__media_video', { timeout: 20_000 })
      expect(await video.getAttribute('src')).toBe(`${fx.origin}/media/clip.mp4`)
      // The poster is our image, and Chromium reads the clip's length from the file we described.
      expect(await video.getAttribute('poster')).toBe(`${fx.origin}/img/blocks.png`)
      await expect.poll(async () => await video.evaluate((el: HTMLVideoElement) => el.readyState), { timeout: 10_000 }).toBeGreaterThanOrEqual(1)
      expect(await video.evaluate((el: HTMLVideoElement) => Math.round(el.duration))).toBe(2)
    } finally {
      await page.context().close()
    }
    expect(outside).toEqual([])
  })

  it("with media: ['video', 'audio', 'image'] plays our data.audio when the page has no video", async () => {
    const page = await openCard({ media: ['video', 'audio', 'image'] }, '/card/audio')
    try {
      const audio = await page.waitForSelector('.microlink_card__media_audio', { state: 'attached', timeout: 20_000 })
      expect(await audio.getAttribute('src')).toBe(`${fx.origin}/media/tone.mp3`)
      await expect.poll(async () => await audio.evaluate((el: HTMLAudioElement) => el.readyState), { timeout: 10_000 }).toBeGreaterThanOrEqual(1)
      expect(await audio.evaluate((el: HTMLAudioElement) => Math.round(el.duration))).toBe(3)
    } finally {
      await page.context().close()
    }
    expect(outside).toEqual([])
  })

  it('with contrast takes its colours from our palette', async () => {
    const page = await openCard({ media: ['image'], contrast: true }, '/card/video')
    try {
      await page.waitForSelector('.microlink_card__content_title', { timeout: 20_000 })
      await expect.poll(async () => await page.textContent('.microlink_card__content_title'), { timeout: 20_000 }).toBe('A clip')
      // blocks.png: background_color #E63946, color #F1FAEE (docs/api.md §3.4 palette).
      const style = await page.$eval('.microlink_card', (el) => ({ background: getComputedStyle(el).backgroundColor, color: getComputedStyle(el.querySelector('.microlink_card__content_title') ?? el).color }))
      expect(style).toEqual({ background: 'rgb(230, 57, 70)', color: 'rgb(241, 250, 238)' })
    } finally {
      await page.context().close()
    }
    expect(outside).toEqual([])
  })
})
