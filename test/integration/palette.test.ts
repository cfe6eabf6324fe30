// `palette` (docs/api.md §3.4) through the API: the committed images of test/fixtures/media/files, whose colour
// blocks are known, as `image`, `logo`, typed `data` rules (single, collection and nested) and the screenshot, in
// both load modes; null colours for svg, ico, an image over the size cap and one that cannot be reached.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { build, qs, type Built } from '../helpers/build.ts'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'
import { mediaFile, serveFile, servePage, serveVirtual } from '../helpers/media-files.ts'
import { makeIco, makeSvg } from '../fixtures/media/images.ts'
import { MAX_PALETTE_BYTES } from '../../src/pipeline/enrichers/palette.ts'

let fx: FixtureServer
let app: Built

const BLOCKS_PNG = { palette: ['#E63946', '#1D3557', '#F1FAEE'], background_color: '#E63946', color: '#F1FAEE', alternative_color: '#1D3557' }
const TWO_PNG = { palette: ['#FFFFFF', '#000000'], background_color: '#FFFFFF', color: '#000000', alternative_color: '#000000' }
const NULLS = { palette: null, background_color: null, color: null, alternative_color: null }

beforeAll(async () => {
  fx = await startFixtureServer()
  for (const name of ['blocks.png', 'blocks.jpg', 'two.png']) serveFile(fx, `/img/${name}`, name)
  fx.route('/img/icon.svg', (_req, res) => { res.writeHead(200, { 'content-type': 'image/svg+xml' }); res.end(makeSvg(40, 40)) })
  fx.route('/img/favicon.ico', (_req, res) => { res.writeHead(200, { 'content-type': 'image/x-icon' }); res.end(makeIco([16, 32])) })
  app = await build({ ALLOW_PRIVATE_HOSTS: fx.host, API_KEYS: 'k', BROWSER_CONCURRENCY: '1' })
}, 120_000)

afterAll(async () => {
  await app?.close()
  await fx?.close()
})

async function get (query: Record<string, string | number | boolean>, data?: Record<string, unknown>) {
  const res = await app.pro.inject({
    method: 'GET',
    url: `/?${qs({ ...query, ...(data === undefined ? {} : { data: JSON.stringify(data) }), force: true })}`,
    headers: { 'x-api-key': 'k' }
  })
  return { res, body: res.json<{ status: string, data: Record<string, any> }>() }
}

/** Channel-wise distance of two `#RRGGBB` colours. */
function distance (a: string, b: string): number {
  return Math.max(...[1, 3, 5].map(i => Math.abs(Number.parseInt(a.slice(i, i + 2), 16) - Number.parseInt(b.slice(i, i + 2), 16))))
}

const RULES = {
  hero: { selector: 'img.hero', attr: 'src', type: 'image' },
  icons: { selectorAll: 'img.icon', attr: 'src', type: 'image' },
  card: { selector: '.card', attr: { picture: { selector: 'img', attr: 'src', type: 'logo' }, caption: { selector: 'p', attr: 'text' } } }
}

describe('palette', () => {
  for (const prerender of [false, true]) {
    it(`colours image, logo and image-typed rules, dominant first (prerender=${String(prerender)})`, async () => {
      const url = servePage(fx, `/colours-${String(prerender)}`,
        '<meta property="og:image" content="/img/blocks.png"><link rel="apple-touch-icon" href="/img/two.png">',
        '<img class="hero" src="/img/blocks.jpg"><img class="icon" src="/img/icon.svg"><img class="icon" src="/img/two.png">' +
        '<div class="card"><img src="/img/favicon.ico"><p>Caption</p></div>')
      const { res, body } = await get({ url, palette: true, prerender }, RULES)
      expect(res.statusCode).toBe(200)
      const { image, logo, hero, icons, card } = body.data
      expect(image).toMatchObject({ url: `${fx.origin}/img/blocks.png`, type: 'png', width: 96, height: 96, ...BLOCKS_PNG })
      expect(logo).toMatchObject({ url: `${fx.origin}/img/two.png`, ...TWO_PNG })
      // JPEG: the same blocks within a few levels, in coverage order (two blocks tie at 16.7 %).
      expect(hero.palette).toHaveLength(3)
      expect(distance(hero.palette[0], '#2A9D8F')).toBeLessThanOrEqual(4)
      expect(hero.background_color).toBe(hero.palette[0])
      expect(distance(hero.color, '#264653')).toBeLessThanOrEqual(4)
      expect(distance(hero.alternative_color, '#E9C46A')).toBeLessThanOrEqual(4)
      expect(icons).toEqual([
        expect.objectContaining({ url: `${fx.origin}/img/icon.svg`, type: 'svg', ...NULLS }),
        expect.objectContaining({ url: `${fx.origin}/img/two.png`, ...TWO_PNG })
      ])
      expect(card.picture).toMatchObject({ type: 'ico', ...NULLS })
      expect(card.caption).toBe('Caption')
      expect(body.data.title).toBe('Media page')
      expect(body.data).not.toHaveProperty('palette')
    }, 60_000)
  }

  it('adds nothing without palette=true', async () => {
    const url = servePage(fx, '/no-palette', '<meta property="og:image" content="/img/blocks.png">')
    const { body } = await get({ url })
    expect(body.data.image).toMatchObject({ type: 'png' })
    expect(body.data.image).not.toHaveProperty('palette')
    expect(body.data.image).not.toHaveProperty('background_color')
  })

  it('colours the screenshot from the bytes it stored', async () => {
    const url = servePage(fx, '/shot', '<style>html,body{margin:0;background:#336699}</style>',
      '<div style="position:absolute;top:0;left:0;width:100%;height:25%;background:#FFCC00"></div>')
    const { body } = await get({ url, palette: true, screenshot: true, meta: false })
    expect(body.data.screenshot).toMatchObject({ type: 'png', background_color: '#336699', color: '#FFCC00', alternative_color: '#FFCC00' })
    expect(body.data.screenshot.palette).toEqual(['#336699', '#FFCC00'])
  }, 60_000)

  it('gives null colours for an image over the size cap (read no further) and one that cannot be reached', async () => {
    const png = mediaFile('blocks.png')
    const size = MAX_PALETTE_BYTES + 1024
    const served = serveVirtual(fx, '/img/huge.png', size, (start, end) => start < png.length ? png.subarray(start, Math.min(end, png.length)) : Buffer.alloc(end - start))
    const huge = await get({ url: servePage(fx, '/huge-image', '<meta property="og:image" content="/img/huge.png">'), palette: true })
    expect(huge.body.data.image).toMatchObject({ url: `${fx.origin}/img/huge.png`, size, ...NULLS })
    expect(served.ranges).toContain(`bytes=0-${MAX_PALETTE_BYTES - 1}`)

    const unchecked = await get({ url: servePage(fx, '/unchecked-image', '<meta property="og:image" content="/img/missing.png">'), palette: true, 'ping.image': false })
    expect(unchecked.body.data.image).toEqual({ url: `${fx.origin}/img/missing.png`, type: 'png', size: null, height: null, width: null, size_pretty: null, ...NULLS })
  })
})
