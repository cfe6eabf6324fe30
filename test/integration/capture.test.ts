// takeScreenshot and printPdf against a real Chromium and loopback fixture pages. Sizes and formats are read back
// from the bytes; pixels are checked wherever a parameter changes them.
import { launchTestBrowser, servePages } from '../helpers/chromium.ts'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Browser, BrowserContextOptions, Page } from 'playwright-core'
import { startFixtureServer } from '../helpers/fixture-server.ts'
import type { FixtureServer } from '../helpers/fixture-server.ts'
import { decodePng, imageInfo, meanDifference, near, pdfInfo, solidPng } from '../helpers/images.ts'
import { parseQuery } from '../../src/schemas/query.ts'
import type { ExtractOptions, PdfOptions, ScreenshotOptions } from '../../src/schemas/options.ts'
import { AppError } from '../../src/errors.ts'
import { createBudget } from '../../src/browser/page/budget.ts'
import type { Budget } from '../../src/browser/page/budget.ts'
import { loadPage } from '../../src/browser/steps/index.ts'
import { MAX_IMAGE_HEIGHT, takeScreenshot } from '../../src/browser/producers/screenshot.ts'
import { countPdfPages, printPdf } from '../../src/browser/producers/pdf.ts'
import { overlayInsets } from '../../src/browser/producers/overlay.ts'

const PAGES = path.resolve(import.meta.dirname, '../fixtures/browser-pages')
const BOX_COLOR = [0, 128, 255, 255] as const
const JSON_BODY = JSON.stringify({ name: 'pagecast', tags: ['a', 'b'], nested: { ok: true, none: null, n: 42 } })

let browser: Browser
let server: FixtureServer

beforeAll(async () => {
  browser = await launchTestBrowser()
  server = await startFixtureServer()
  await servePages(server, PAGES)
  const red = solidPng(8, 8, [255, 0, 0, 255])
  const green = solidPng(8, 8, [0, 255, 0, 255])
  server.route('/lazy.png', (_req, res) => {
    setTimeout(() => { res.writeHead(200, { 'content-type': 'image/png' }); res.end(red) }, 100)
  })
  server.route('/backdrop.png', (_req, res) => { res.writeHead(200, { 'content-type': 'image/png' }); res.end(green) })
  server.route('/data.json', (_req, res) => { res.writeHead(200, { 'content-type': 'application/json' }); res.end(JSON_BODY) })
  server.route('/theme.css', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/css' })
    res.end('pre[class*="language-"] { background: rgb(1, 2, 3); color: rgb(250, 250, 250); }')
  })
  server.route('/notes.txt', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' })
    res.end('first line\nsecond line\n')
  })
})

afterAll(async () => {
  await server?.close()
  await browser?.close()
})

function optionsFor (pathname: string, extra = ''): ExtractOptions {
  const query = `url=${encodeURIComponent(server.origin + pathname)}${extra === '' ? '' : `&${extra}`}`
  return parseQuery(query, { plan: 'pro', headers: {}, maxTimeout: 28_000 })
}

function shotOf (extra: string): ScreenshotOptions {
  const shot = optionsFor('/', `screenshot=true${extra === '' ? '' : `&${extra}`}`).screenshot
  if (shot === false) throw new Error('screenshot is off')
  return shot
}

function pdfOf (extra: string): PdfOptions {
  const pdf = optionsFor('/', `pdf=true${extra === '' ? '' : `&${extra}`}`).pdf
  if (pdf === false) throw new Error('pdf is off')
  return pdf
}

function budget (ms = 15_000): Budget {
  return createBudget(ms, new AbortController().signal)
}

async function withPage<T> (contextOptions: BrowserContextOptions, fn: (page: Page) => Promise<T>): Promise<T> {
  const context = await browser.newContext(contextOptions)
  try {
    return await fn(await context.newPage())
  } finally {
    await context.close()
  }
}

/** Loads a fixture page; `load` is enough for these (auto's extra network-idle wait only slows the tests). */
async function open (page: Page, pathname: string, extra = ''): Promise<void> {
  await loadPage(page, optionsFor(pathname, ['waitUntil=load', extra].filter(Boolean).join('&')), budget())
}

async function errorOf (work: Promise<unknown>): Promise<AppError> {
  try {
    await work
  } catch (err) {
    if (err instanceof AppError) return err
    throw err
  }
  throw new Error('expected an AppError')
}

function pageState (page: Page): Promise<unknown> {
  return page.evaluate('[devicePixelRatio, innerWidth, innerHeight, screen.width, screen.height]')
}

describe('screenshot size and format', () => {
  it('captures the viewport × DPR in png, jpeg and webp, leaving the page\'s emulation as it was', async () => {
    await withPage({ viewport: { width: 640, height: 400 }, deviceScaleFactor: 2 }, async (page) => {
      await open(page, '/box.html')
      const before = await pageState(page)

      const png = await takeScreenshot(page, shotOf(''), budget())
      expect(png.type).toBe('png')
      expect(imageInfo(png.body)).toEqual({ type: 'png', width: 1280, height: 800 })
      expect([png.width, png.height]).toEqual([1280, 800])
      const pixels = decodePng(png.body)
      expect(near(pixels.pixel(2 * 250, 2 * 155), [...BOX_COLOR])).toBe(true)
      expect(near(pixels.pixel(2 * 99, 2 * 155), [255, 255, 255, 255])).toBe(true)

      const jpeg = await takeScreenshot(page, shotOf('screenshot.type=jpeg&screenshot.quality=60'), budget())
      expect(jpeg.type).toBe('jpg')
      expect(imageInfo(jpeg.body)).toEqual({ type: 'jpg', width: 1280, height: 800 })

      const webp = await takeScreenshot(page, shotOf('screenshot.type=webp'), budget())
      expect(webp.type).toBe('webp')
      expect(imageInfo(webp.body)).toEqual({ type: 'webp', width: 1280, height: 800 })

      expect(await pageState(page)).toEqual(before)
      expect(imageInfo(await page.screenshot())).toMatchObject({ width: 1280, height: 800 })
    })
  })

  it('captures a mobile viewport at its DPR and keeps its emulation', async () => {
    await withPage({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 3, isMobile: true, hasTouch: true }, async (page) => {
      await open(page, '/box.html')
      const before = await pageState(page)
      const shot = await takeScreenshot(page, shotOf(''), budget())
      expect(imageInfo(shot.body)).toEqual({ type: 'png', width: 1170, height: 2532 })
      expect(await pageState(page)).toEqual(before)
    })
  })

  it('clips to an element', async () => {
    await withPage({ viewport: { width: 640, height: 400 }, deviceScaleFactor: 2 }, async (page) => {
      await open(page, '/box.html')
      const shot = await takeScreenshot(page, shotOf('screenshot.element=%23box'), budget())
      expect([shot.width, shot.height]).toEqual([600, 300])
      const pixels = decodePng(shot.body)
      for (const [x, y] of [[0, 0], [599, 0], [0, 299], [599, 299], [300, 150]] as const) {
        expect(near(pixels.pixel(x, y), [...BOX_COLOR])).toBe(true)
      }
    })
  })

  it('gives 504 EBRWSRTIMEOUT for an element that never becomes visible', async () => {
    await withPage({ viewport: { width: 640, height: 400 } }, async (page) => {
      await open(page, '/box.html')
      const err = await errorOf(takeScreenshot(page, shotOf('screenshot.element=%23hidden'), budget(1500)))
      expect(err.code).toBe('EBRWSRTIMEOUT')
      expect(err.status).toBe(504)
    })
  })

  it('captures the full height of a long page, with a lazy image far below the fold loaded', async () => {
    await withPage({ viewport: { width: 800, height: 600 }, deviceScaleFactor: 1 }, async (page) => {
      await open(page, '/long.html')
      const shot = await takeScreenshot(page, shotOf('screenshot.fullPage=true'), budget())
      expect([shot.width, shot.height]).toEqual([800, 6000])
      const pixels = decodePng(shot.body)
      expect(near(pixels.pixel(100, 5100), [255, 0, 0, 255])).toBe(true)
      expect(near(pixels.pixel(400, 5100), [255, 255, 255, 255])).toBe(true)
      expect(await page.evaluate('window.scrollY')).toBe(0)
    })
  })

  it('clips a full page at 16,384 image pixels', async () => {
    await withPage({ viewport: { width: 400, height: 1000 }, deviceScaleFactor: 2 }, async (page) => {
      await open(page, '/tall.html')
      const shot = await takeScreenshot(page, shotOf('screenshot.fullPage=true&screenshot.type=jpeg'), budget())
      expect(imageInfo(shot.body)).toEqual({ type: 'jpg', width: 800, height: MAX_IMAGE_HEIGHT })
    })
  })

  it('makes the page background transparent with omitBackground', async () => {
    await withPage({ viewport: { width: 300, height: 200 } }, async (page) => {
      await open(page, '/transparent.html')
      const opaque = decodePng((await takeScreenshot(page, shotOf(''), budget())).body)
      expect(opaque.pixel(5, 5)).toEqual([255, 255, 255, 255])
      const clear = decodePng((await takeScreenshot(page, shotOf('screenshot.omitBackground=true'), budget())).body)
      expect(clear.pixel(5, 5)[3]).toBe(0)
      expect(near(clear.pixel(80, 80), [255, 0, 0, 255])).toBe(true)
      // WebP keeps an alpha channel (VP8X with the alpha flag) only when asked to.
      const webp = (await takeScreenshot(page, shotOf('screenshot.type=webp&screenshot.omitBackground=true'), budget())).body
      expect(webp.toString('latin1', 12, 16)).toBe('VP8X')
      expect((webp[20] ?? 0) & 0x10).toBe(0x10)
      // The page itself is opaque again afterwards.
      expect(decodePng((await takeScreenshot(page, shotOf(''), budget())).body).pixel(5, 5)).toEqual([255, 255, 255, 255])
    })
  })
})

describe('what the page shows', () => {
  it('follows the context\'s colour scheme', async () => {
    for (const [colorScheme, color] of [['dark', [10, 20, 30, 255]], ['light', [255, 255, 255, 255]]] as const) {
      await withPage({ viewport: { width: 300, height: 200 }, colorScheme }, async (page) => {
        await open(page, '/scheme.html')
        const pixels = decodePng((await takeScreenshot(page, shotOf(''), budget())).body)
        expect(pixels.pixel(150, 100)).toEqual([...color])
      })
    }
  })

  it('shows injected styles and the result of clicks', async () => {
    await withPage({ viewport: { width: 300, height: 200 } }, async (page) => {
      await loadPage(page, { ...optionsFor('/box.html'), styles: ['html, body { background: rgb(0, 200, 0) !important; }'] }, budget())
      expect(decodePng((await takeScreenshot(page, shotOf(''), budget())).body).pixel(50, 20)).toEqual([0, 200, 0, 255])
    })
    await withPage({ viewport: { width: 300, height: 200 } }, async (page) => {
      await open(page, '/button.html')
      expect(decodePng((await takeScreenshot(page, shotOf(''), budget())).body).pixel(290, 190)).toEqual([255, 255, 255, 255])
      await loadPage(page, { ...optionsFor('/button.html'), click: ['#make-red'] }, budget())
      expect(decodePng((await takeScreenshot(page, shotOf(''), budget())).body).pixel(290, 190)).toEqual([255, 0, 0, 255])
    })
  })

  it('captures what a late element and a scroll bring into view', async () => {
    await withPage({ viewport: { width: 300, height: 200 } }, async (page) => {
      await open(page, '/scroll.html', 'scroll=%23target')
      const pixels = decodePng((await takeScreenshot(page, shotOf(''), budget())).body)
      expect(near(pixels.pixel(150, 50), [0, 0, 255, 255])).toBe(true)
    })
  })
})

describe('with JavaScript off', () => {
  it('captures a full page, an overlay and a code view', async () => {
    await withPage({ viewport: { width: 800, height: 600 }, javaScriptEnabled: false }, async (page) => {
      await open(page, '/long.html', 'javascript=false')
      const full = await takeScreenshot(page, shotOf('screenshot.fullPage=true&screenshot.overlay.background=%2300ff00'), budget())
      const insets = overlayInsets(800, { background: '#00ff00' })
      expect([full.width, full.height]).toEqual([800 + insets.left + insets.right, 6000 + insets.top + insets.bottom])
      const pixels = decodePng(full.body)
      expect(pixels.pixel(1, 1)).toEqual([0, 255, 0, 255])
      expect(near(pixels.pixel(insets.left + 100, insets.top + 5100), [255, 0, 0, 255])).toBe(true)

      await open(page, '/data.json', 'javascript=false')
      const code = decodePng((await takeScreenshot(page, shotOf(''), budget())).body)
      expect(code.pixel(795, 595)).toEqual([0x1d, 0x1f, 0x21, 255])
    })
  })
})

describe('overlay', () => {
  it('centres the capture on a background colour, with a margin proportional to its size', async () => {
    await withPage({ viewport: { width: 640, height: 400 } }, async (page) => {
      await open(page, '/box.html')
      const shot = await takeScreenshot(page, shotOf('screenshot.overlay.background=%23ff00ff'), budget())
      const insets = overlayInsets(640, { background: '#ff00ff' })
      expect(insets.left).toBeGreaterThan(0)
      expect([shot.width, shot.height]).toEqual([640 + insets.left + insets.right, 400 + insets.top + insets.bottom])
      const pixels = decodePng(shot.body)
      for (const [x, y] of [[0, 0], [shot.width - 1, 0], [0, shot.height - 1], [shot.width - 1, shot.height - 1]] as const) {
        expect(pixels.pixel(x, y)).toEqual([255, 0, 255, 255])
      }
      expect(near(pixels.pixel(insets.left + 250, insets.top + 155), [...BOX_COLOR])).toBe(true)
    })
  })

  it('draws a light or dark browser frame, and fills a backdrop from an image URL', async () => {
    await withPage({ viewport: { width: 640, height: 400 }, deviceScaleFactor: 2 }, async (page) => {
      await open(page, '/box.html')
      const bar = overlayInsets(640, { browser: 'dark' }).top
      expect(bar).toBeGreaterThan(0)
      const dark = await takeScreenshot(page, shotOf('screenshot.overlay.browser=dark'), budget())
      expect([dark.width, dark.height]).toEqual([1280, 2 * (400 + bar)])
      const light = await takeScreenshot(page, shotOf('screenshot.overlay.browser=light&screenshot.type=jpeg'), budget())
      expect(imageInfo(light.body)).toEqual({ type: 'jpg', width: 1280, height: 2 * (400 + bar) })
      const darkBar = decodePng(dark.body).pixel(1270, bar)
      expect(Math.max(darkBar[0], darkBar[1], darkBar[2])).toBeLessThan(80)
      const lightPng = decodePng((await takeScreenshot(page, shotOf('screenshot.overlay.browser=light'), budget())).body)
      const lightBar = lightPng.pixel(1270, bar)
      expect(Math.min(lightBar[0], lightBar[1], lightBar[2])).toBeGreaterThan(180)
      // Below the bar: the capture itself, drawn 1:1.
      expect(near(lightPng.pixel(2 * 250, 2 * (bar + 155)), [...BOX_COLOR])).toBe(true)

      const framed = await takeScreenshot(page, shotOf(`screenshot.overlay.browser=light&screenshot.overlay.background=${encodeURIComponent(`${server.origin}/backdrop.png`)}`), budget())
      expect(decodePng(framed.body).pixel(2, 2)).toEqual([0, 255, 0, 255])
    })
  })

  it('works where every other page opened in the target\'s context is closed at once (as the pool does)', async () => {
    await withPage({ viewport: { width: 320, height: 200 } }, async (page) => {
      page.context().on('page', (other) => { if (other !== page) void other.close() })
      await open(page, '/box.html')
      const shot = await takeScreenshot(page, shotOf('screenshot.overlay.background=%23ff00ff&screenshot.overlay.browser=dark'), budget())
      expect(decodePng(shot.body).pixel(0, 0)).toEqual([255, 0, 255, 255])
      expect(page.context().pages()).toEqual([page])
    })
  })

  it('gives EINVALOVERLAYBG for a background Chromium rejects', async () => {
    await withPage({ viewport: { width: 300, height: 200 } }, async (page) => {
      await open(page, '/box.html')
      const shot = { ...shotOf(''), overlay: { background: 'linear-gradient(nonsense)' } }
      const err = await errorOf(takeScreenshot(page, shot, budget()))
      expect(err.code).toBe('EINVALOVERLAYBG')
    })
  })
})

describe('codeScheme', () => {
  async function jsonShot (scheme: string): Promise<ReturnType<typeof decodePng>> {
    return await withPage({ viewport: { width: 400, height: 300 } }, async (page) => {
      await open(page, '/data.json')
      const shot = await takeScreenshot(page, shotOf(`screenshot.codeScheme=${scheme}`), budget())
      return decodePng(shot.body)
    })
  }

  it('shows a JSON target highlighted in the theme; two themes give different pixels', async () => {
    const atom = await jsonShot('atom-dark')
    const light = await jsonShot('one-light')
    // atom-dark paints its blocks #1d1f21; one-light is light.
    expect(atom.pixel(395, 295)).toEqual([0x1d, 0x1f, 0x21, 255])
    const corner = light.pixel(395, 295)
    expect(Math.min(corner[0], corner[1], corner[2])).toBeGreaterThan(200)
    expect(meanDifference(atom, light)).toBeGreaterThan(50)
    // Highlighted: more than the background and one text colour.
    const colors = new Set<string>()
    for (let y = 0; y < 200; y++) for (let x = 0; x < 300; x++) colors.add(atom.pixel(x, y).join(','))
    expect(colors.size).toBeGreaterThan(20)
  })

  it('pretty-prints the JSON and keeps the page URL', async () => {
    await withPage({ viewport: { width: 400, height: 300 } }, async (page) => {
      await open(page, '/data.json')
      await takeScreenshot(page, shotOf('screenshot.codeScheme=dracula'), budget())
      const text = await page.evaluate('document.querySelector("pre code").textContent') as string
      expect(text).toBe(JSON.stringify(JSON.parse(JSON_BODY), null, 2))
      expect(await page.evaluate('document.querySelector(".token.property").textContent')).toBe('"name"')
      expect(page.url()).toBe(`${server.origin}/data.json`)
    })
  })

  it('links a theme given as a CSS URL', async () => {
    await withPage({ viewport: { width: 400, height: 300 } }, async (page) => {
      await open(page, '/data.json')
      const shot = await takeScreenshot(page, shotOf(`screenshot.codeScheme=${encodeURIComponent(`${server.origin}/theme.css`)}`), budget())
      expect(decodePng(shot.body).pixel(395, 295)).toEqual([1, 2, 3, 255])
    })
  })

  it('shows a plain-text target in the theme and leaves HTML targets alone', async () => {
    await withPage({ viewport: { width: 400, height: 300 } }, async (page) => {
      await open(page, '/notes.txt')
      const text = decodePng((await takeScreenshot(page, shotOf('screenshot.codeScheme=atom-dark'), budget())).body)
      expect(text.pixel(395, 295)).toEqual([0x1d, 0x1f, 0x21, 255])
      await open(page, '/box.html')
      const html = decodePng((await takeScreenshot(page, shotOf('screenshot.codeScheme=atom-dark'), budget())).body)
      expect(html.pixel(395, 295)).toEqual([255, 255, 255, 255])
    })
  })
})

describe('pdf', () => {
  it('prints every page, counts them, and sizes them by format, custom size and orientation', async () => {
    await withPage({ viewport: { width: 800, height: 600 } }, async (page) => {
      await open(page, '/pages.html', 'pdf=true')
      const a4 = await printPdf(page, pdfOf(''), budget())
      const a4Info = await pdfInfo(a4.body)
      expect(a4.pages).toBe(5)
      expect(a4Info.pages).toBe(5)
      expect(a4.body.subarray(0, 5).toString('latin1')).toBe('%PDF-')
      expect(a4Info.sizes[0]?.width).toBeCloseTo(8.27 * 72, 0)
      expect(a4Info.sizes[0]?.height).toBeCloseTo(11.7 * 72, 0)

      const letter = await pdfInfo((await printPdf(page, pdfOf('pdf.format=letter'), budget())).body)
      expect(letter.sizes[0]).toMatchObject({ width: 612, height: 792, orientation: 'portrait' })

      const landscape = await pdfInfo((await printPdf(page, pdfOf('pdf.landscape=true'), budget())).body)
      expect(landscape.sizes.every(size => size.orientation === 'landscape')).toBe(true)
      expect(landscape.sizes[0]?.width).toBeCloseTo(11.7 * 72, 0)

      const custom = await pdfInfo((await printPdf(page, pdfOf('pdf.width=600px&pdf.height=400px'), budget())).body)
      expect(custom.sizes[0]?.width).toBeCloseTo(450, 0)
      expect(custom.sizes[0]?.height).toBeCloseTo(300, 0)
      expect(custom.sizes[0]?.orientation).toBe('landscape')
    })
  })

  it('prints page ranges and gives EPAGERANGE for a range past the last page', async () => {
    await withPage({ viewport: { width: 800, height: 600 } }, async (page) => {
      await open(page, '/pages.html', 'pdf=true')
      for (const [ranges, expected] of [['1-2', 2], ['2-', 4], ['5', 1], ['4-5,1', 3], ['1-3,2-', 5]] as const) {
        const pdf = await printPdf(page, pdfOf(`pdf.pageRanges=${ranges}`), budget())
        expect(pdf.pages).toBe(expected)
        expect((await pdfInfo(pdf.body)).pages).toBe(expected)
        expect(countPdfPages(pdf.body)).toBe(expected)
      }
      for (const ranges of ['9-', '6', '1-2,9-', '2,7-8']) {
        const err = await errorOf(printPdf(page, pdfOf(`pdf.pageRanges=${ranges}`), budget()))
        expect(err.code).toBe('EPAGERANGE')
        expect(err.status).toBe(400)
      }
    })
  })

  it('reads page numbers past Chromium\'s int range as past any document (found by the fuzzer: was 500 EFATAL)', async () => {
    await withPage({ viewport: { width: 800, height: 600 } }, async (page) => {
      await open(page, '/pages.html', 'pdf=true')
      const pdf = await printPdf(page, pdfOf('pdf.pageRanges=2-99999999999999999999'), budget())
      expect(pdf.pages).toBe(4)
      for (const ranges of ['99999999999', '1423494422803249884133501144887705845664403106720378159442704']) {
        const err = await errorOf(printPdf(page, pdfOf(`pdf.pageRanges=${ranges}`), budget()))
        expect(err.code).toBe('EPAGERANGE')
      }
    })
  })

  it('prints with the emulated media type, leaving the page\'s emulation as it was', async () => {
    await withPage({ viewport: { width: 800, height: 600 }, deviceScaleFactor: 2 }, async (page) => {
      await open(page, '/print.html', 'pdf=true')
      const before = await pageState(page)
      expect((await printPdf(page, pdfOf(''), budget())).pages).toBe(1)
      expect(await pageState(page)).toEqual(before)
      await open(page, '/print.html', 'pdf=true&mediaType=screen')
      expect((await printPdf(page, pdfOf(''), budget())).pages).toBeGreaterThan(1)
    })
  })

  it('gives EPDFTOOLARGE when printing cannot finish in the time left', async () => {
    await withPage({ viewport: { width: 800, height: 600 } }, async (page) => {
      await open(page, '/pages.html', 'pdf=true')
      const err = await errorOf(printPdf(page, pdfOf(''), budget(1)))
      expect(err.code).toBe('EPDFTOOLARGE')
    })
  })
})
