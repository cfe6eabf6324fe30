// `adblock` through the API, on loopback fixtures that imitate ad slots and consent platforms
// (test/fixtures/adblock): ad requests on paths that real EasyList/uBlock rules match, a OneTrust-like and a
// Cookiebot-like platform (the markup and script autoconsent's rules recognise), and a home-made banner only CSS
// can hide. The pages are served under `*.test` names that the address guard resolves to 127.0.0.1: uBlock's
// lists turn generic cosmetic filtering off on 127.0.0.1 and localhost (`@@://127.0.0.1$generichide`), as they
// should for a developer's own machine. One page at a time (BROWSER_CONCURRENCY=1), so jobs with adblock on and off
// alternate on the same reused page.
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { qs, type Built } from '../helpers/build.ts'
import { servePages } from '../helpers/chromium.ts'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'
import { buildNewsSite } from '../helpers/news-site.ts'
import { decodePng, near, solidPng, type Rgba } from '../helpers/images.ts'
import { installLoopbackNet, type ConnectAttempt } from '../helpers/loopback-net.ts'

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/adblock')
const RED: Rgba = [255, 0, 0, 255]
const BLUE: Rgba = [0, 0, 255, 255]
const AD_PATHS = ['/adz/js/adz.js', '/prebid.js', '/ads468x60.gif']

let fx: FixtureServer
let app: Built
let host: string
const violations: ConnectAttempt[] = []
let uninstallNet: () => void = () => {}

beforeAll(async () => {
  uninstallNet = installLoopbackNet({ violations })
  fx = await startFixtureServer()
  await servePages(fx, FIXTURES)
  for (const name of ['onetrust.js', 'cookiebot.js']) {
    fx.route(`/cmp/${name}`, async (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/javascript' })
      res.end(await readFile(path.join(FIXTURES, 'cmp', name)))
    })
  }
  // The ad script fills the slot with text; the ad image is a pixel.
  fx.route('/adz/js/adz.js', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/javascript' })
    res.end("document.addEventListener('DOMContentLoaded', () => { document.getElementById('slot-top').textContent = 'Sponsored: fixture ad' })")
  })
  fx.route('/prebid.js', (_req, res) => { res.writeHead(200, { 'content-type': 'text/javascript' }); res.end('window.pbjs = {}') })
  fx.route('/ads468x60.gif', (_req, res) => { res.writeHead(200, { 'content-type': 'image/png' }); res.end(solidPng(1, 1, RED)) })
  fx.route('/consent/rejected', (_req, res) => { res.writeHead(204); res.end() })
  ;({ app, host } = await buildNewsSite(fx))
}, 120_000)

afterAll(async () => {
  await app?.close()
  await fx?.close()
  uninstallNet()
  expect(violations).toEqual([])
})

let n = 0
/** A fresh URL each time (no cache hit), under the fixture's `.test` name. */
function pageUrl (name: string): string {
  n += 1
  return `http://${host}/${name}?run=${n}`
}

async function get (query: Record<string, string | number | boolean>): Promise<import('light-my-request').Response> {
  return await app.pro.inject({ method: 'GET', url: `/?${qs(query)}`, headers: { 'x-api-key': 'k' } })
}

/** The page's text (textContent of body), through a `data` rule. */
async function textOf (url: string, adblock: boolean): Promise<string> {
  const res = await get({ url, meta: false, prerender: true, adblock, 'data.body.selector': 'body', 'data.body.attr': 'text' })
  expect(res.statusCode, res.body).toBe(200)
  return String((res.json() as { data: { body: string } }).data.body)
}

async function shotOf (url: string, adblock: boolean): Promise<ReturnType<typeof decodePng>> {
  const res = await get({ url, meta: false, screenshot: true, adblock, embed: 'screenshot.url' })
  expect(res.statusCode, res.body).toBe(200)
  return decodePng(res.rawPayload)
}

function adHits (): number {
  return AD_PATHS.reduce((sum, p) => sum + fx.hitsOf(p), 0)
}

describe('adblock on (the default)', () => {
  it('loads the bundled engine once, with real lists', async () => {
    const { stats } = await app.ctx.adblock.get()
    expect(stats.networkFilters).toBeGreaterThan(50_000)
    expect(stats.cosmeticFilters).toBeGreaterThan(10_000)
    expect(await app.ctx.adblock.get()).toBe(await app.ctx.adblock.get())
  })

  it('blocks the ad requests, hides the ad slot and opts out of a OneTrust-like banner', async () => {
    const before = adHits()
    const url = pageUrl('news.html')
    const text = await textOf(url, true)
    expect(text).toContain('The main article text')
    expect(text).not.toContain('Sponsored')
    expect(text).not.toContain('OneTrust banner')
    const shot = await shotOf(pageUrl('news.html'), true)
    // The slot's corner is not red, and the banner's strip at the bottom is not blue.
    expect(near(shot.pixel(10, 10), RED, 40)).toBe(false)
    expect(near(shot.pixel(shot.width / 2, shot.height - 20), BLUE, 40)).toBe(false)
    expect(adHits()).toBe(before)
    expect(fx.hitsOf('/consent/rejected')).toBeGreaterThan(0)
  })

  it('answers a Cookiebot-like platform through its API', async () => {
    const text = await textOf(pageUrl('cookiebot.html'), true)
    expect(text).toContain('The main text of the shop page')
    expect(text).not.toContain('Cookiebot dialog')
  })

  it('hides a banner no platform stands behind with the cosmetic filters, JavaScript off too', async () => {
    for (const javascript of [true, false]) {
      const res = await get({ url: pageUrl('notice.html'), meta: false, screenshot: true, javascript, embed: 'screenshot.url' })
      expect(res.statusCode, res.body).toBe(200)
      const shot = decodePng(res.rawPayload)
      expect(near(shot.pixel(shot.width / 2, shot.height - 20), BLUE, 40)).toBe(false)
    }
  })
})

describe('adblock=false', () => {
  it('lets ads and banners through', async () => {
    const before = adHits()
    const text = await textOf(pageUrl('news.html'), false)
    expect(text).toContain('Sponsored: fixture ad')
    expect(text).toContain('OneTrust banner')
    expect(adHits()).toBe(before + AD_PATHS.length)
    const shot = await shotOf(pageUrl('news.html'), false)
    expect(near(shot.pixel(10, 10), RED, 40)).toBe(true)
    expect(near(shot.pixel(shot.width / 2, shot.height - 20), BLUE, 40)).toBe(true)
    expect(await textOf(pageUrl('cookiebot.html'), false)).toContain('Cookiebot dialog')
    const notice = await shotOf(pageUrl('notice.html'), false)
    expect(near(notice.pixel(notice.width / 2, notice.height - 20), BLUE, 40)).toBe(true)
  })
})

describe('on the same reused page', () => {
  it('alternates on and off, each job seeing only its own setting', async () => {
    const pages = app.ctx.browser.stats().pages
    for (const adblock of [true, false, true, false]) {
      const before = adHits()
      const text = await textOf(pageUrl('news.html'), adblock)
      expect(text.includes('Sponsored'), `adblock=${String(adblock)}`).toBe(!adblock)
      expect(text.includes('OneTrust banner'), `adblock=${String(adblock)}`).toBe(!adblock)
      expect(adHits() - before).toBe(adblock ? 0 : AD_PATHS.length)
    }
    // One slot, one page: none of it needed a new page or context.
    expect(app.ctx.browser.stats().pages).toBe(pages)
  })
})
