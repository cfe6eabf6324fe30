/// <reference lib="dom" />
// Screenshots, PDFs and files through the API: a real Chromium, real storage (disk and s3rver), real Redis.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { PNG } from 'pngjs'
import { PDFDocument } from 'pdf-lib'
import type { Browser } from 'playwright-core'
import { launchTestBrowser } from '../helpers/chromium.ts'
import { build, qs, type Built } from '../helpers/build.ts'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'

let fx: FixtureServer
let blocked: FixtureServer
let disk: Built
let s3: Built
let freeUrl: string

function pixel (png: Buffer, x: number, y: number): [number, number, number, number] {
  const image = PNG.sync.read(png)
  const i = (y * image.width + x) * 4
  return [image.data[i]!, image.data[i + 1]!, image.data[i + 2]!, image.data[i + 3]!]
}

beforeAll(async () => {
  fx = await startFixtureServer()
  blocked = await startFixtureServer()
  fx.route('/to-blocked', (_req, res) => { res.writeHead(302, { location: `${blocked.origin}/red/` }); res.end() })
  const env = { ALLOW_PRIVATE_HOSTS: fx.host, API_KEYS: 'k', BROWSER_CONCURRENCY: '2', REDIS_URL: inject('redisUrl') }
  disk = await build(env)
  const { endpoint, bucket, accessKeyId, secretAccessKey } = inject('s3')
  s3 = await build({
    ...env,
    S3_BUCKET: bucket,
    S3_ENDPOINT: endpoint,
    S3_ACCESS_KEY_ID: accessKeyId,
    S3_SECRET_ACCESS_KEY: secretAccessKey,
    S3_FORCE_PATH_STYLE: 'true',
    CDN_URL: `${endpoint}/${bucket}`
  })
  freeUrl = await disk.free.listen({ port: 0, host: '127.0.0.1' })
}, 120_000)

afterAll(async () => {
  await disk?.close()
  await s3?.close()
  await fx?.close()
  await blocked?.close()
})

async function get (app: Built, query: Record<string, string | number | boolean>) {
  return await app.pro.inject({ method: 'GET', url: `/?${qs(query)}`, headers: { 'x-api-key': 'k' } })
}

describe('screenshots into storage', () => {
  it('stores a PNG on local disk, served under /files/, with its real size', async () => {
    const res = await get(disk, { url: `${fx.origin}/red/`, screenshot: true, waitUntil: 'load', 'viewport.deviceScaleFactor': 1 })
    expect(res.statusCode).toBe(200)
    expect(res.headers['x-fetch-mode']).toBe('prerender')
    const { data } = res.json()
    expect(data.title).toBe('Red')
    expect(data.screenshot).toMatchObject({ type: 'png', width: 1280, height: 800 })
    expect(data.screenshot.url).toMatch(/^http:\/\/localhost:3000\/files\/[0-9a-f]{64}\.png$/)
    const file = await disk.free.inject(new URL(data.screenshot.url).pathname)
    expect(file.statusCode).toBe(200)
    expect(file.headers['content-type']).toBe('image/png')
    expect(file.rawPayload.length).toBe(data.screenshot.size)
    expect(pixel(file.rawPayload, 640, 400)).toEqual([200, 0, 0, 255])
  })

  it('uploads to S3 and answers with the CDN URL; the object holds the bytes', async () => {
    const res = await get(s3, { url: `${fx.origin}/red/?s3`, screenshot: true, 'screenshot.type': 'jpeg', waitUntil: 'load' })
    const { data } = res.json()
    const { endpoint, bucket } = inject('s3')
    expect(data.screenshot.url.startsWith(`${endpoint}/${bucket}/`)).toBe(true)
    expect(data.screenshot).toMatchObject({ type: 'jpg', width: 2560, height: 1600 })
    const object = await fetch(data.screenshot.url)
    expect(object.headers.get('content-type')).toBe('image/jpeg')
    const bytes = Buffer.from(await object.arrayBuffer())
    expect(bytes.length).toBe(data.screenshot.size)
    expect(bytes.subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff]))
  })

  it('answers a cache HIT with the stored URL without rendering, and force renders again into the same key', async () => {
    const query = { url: `${fx.origin}/red/?hit`, screenshot: true, meta: false, waitUntil: 'load' }
    const first = await get(disk, query)
    const jobs = disk.ctx.browser.stats().jobs
    const hit = await get(disk, query)
    expect(hit.headers['x-cache-status']).toBe('HIT')
    expect(hit.json().data.screenshot.url).toBe(first.json().data.screenshot.url)
    expect(disk.ctx.browser.stats().jobs).toBe(jobs)
    const forced = await get(disk, { ...query, force: true })
    expect(forced.headers['x-cache-status']).toBe('BYPASS')
    expect(forced.json().data.screenshot.url).toBe(first.json().data.screenshot.url)
    expect(disk.ctx.browser.stats().jobs).toBe(jobs + 1)
  })

  it('renders 20 identical concurrent uncached requests once', async () => {
    const jobs = disk.ctx.browser.stats().jobs
    const query = { url: `${fx.origin}/red/?twenty`, screenshot: true, meta: false, waitUntil: 'load' }
    const answers = await Promise.all(Array.from({ length: 20 }, async () => await get(disk, query)))
    expect(answers.every(a => a.statusCode === 200)).toBe(true)
    expect(new Set(answers.map(a => a.json().data.screenshot.url)).size).toBe(1)
    expect(disk.ctx.browser.stats().jobs).toBe(jobs + 1)
  })

  it('names the file with filename (pro) and serves it with content-disposition', async () => {
    const res = await get(disk, { url: `${fx.origin}/red/?named`, screenshot: true, meta: false, waitUntil: 'load', filename: 'red-page' })
    const url = res.json().data.screenshot.url as string
    expect(url).toMatch(/\/files\/[0-9a-f]{64}\/red-page\.png$/)
    const file = await disk.free.inject(new URL(url).pathname)
    expect(file.headers['content-disposition']).toBe('inline; filename="red-page.png"')
  })
})

describe('embed of files', () => {
  it('answers embed=screenshot.url with the image bytes and the safety headers', async () => {
    const res = await get(disk, { url: `${fx.origin}/red/?embed`, screenshot: true, meta: false, waitUntil: 'load', embed: 'screenshot.url' })
    expect(res.statusCode).toBe(200)
    expect(res.headers['content-type']).toBe('image/png')
    expect(Number(res.headers['content-length'])).toBe(res.rawPayload.length)
    expect(res.headers['content-security-policy']).toBe("sandbox; script-src 'none'")
    expect(pixel(res.rawPayload, 10, 10)).toEqual([200, 0, 0, 255])
    const pdf = await get(s3, { url: `${fx.origin}/red/?embedpdf`, pdf: true, meta: false, embed: 'pdf.url' })
    expect(pdf.headers['content-type']).toBe('application/pdf')
    expect((await PDFDocument.load(pdf.rawPayload)).getPageCount()).toBe(1)
  })

  it('sends the bytes it holds on a MISS and reads storage only on a HIT', async () => {
    const reads: string[] = []
    const get0 = disk.ctx.storage.get.bind(disk.ctx.storage)
    disk.ctx.storage.get = async (key) => { reads.push(key); return await get0(key) }
    try {
      const query = { url: `${fx.origin}/red/?in-hand`, screenshot: true, meta: false, waitUntil: 'load', embed: 'screenshot.url' }
      const miss = await get(disk, query)
      expect(miss.headers['x-cache-status']).toBe('MISS')
      expect(reads).toEqual([])
      const hit = await get(disk, query)
      expect(hit.headers['x-cache-status']).toBe('HIT')
      expect(reads).toHaveLength(1)
      expect(Buffer.compare(hit.rawPayload, miss.rawPayload)).toBe(0)
      expect(hit.headers['content-type']).toBe(miss.headers['content-type'])
      expect(hit.headers['content-length']).toBe(miss.headers['content-length'])
    } finally {
      disk.ctx.storage.get = get0
    }
  })

  it('shows the screenshot in an <img> of a real page', async () => {
    const browser: Browser = await launchTestBrowser()
    try {
      const page = await browser.newPage({ viewport: { width: 400, height: 300 } })
      const src = `${freeUrl}/?${qs({ url: `${fx.origin}/red/?img`, screenshot: true, meta: false, waitUntil: 'load', embed: 'screenshot.url' })}`
      await page.setContent(`<body style="margin:0;background:#fff"><img id="shot" src="${src}" style="width:400px;height:250px"></body>`)
      await page.waitForFunction(() => (document.getElementById('shot') as HTMLImageElement).complete, undefined, { timeout: 25_000 })
      const natural = await page.$eval('#shot', (img: HTMLImageElement) => [img.naturalWidth, img.naturalHeight])
      expect(natural).toEqual([2560, 1600])
      expect(pixel(await page.screenshot(), 200, 125)).toEqual([200, 0, 0, 255])
    } finally {
      await browser.close()
    }
  })
})

describe('the PNG written again after the slot', () => {
  it('stores a PNG no larger than Chromium\'s default encode of the page (the fast encoder\'s own with optimizeForSpeed), and times every part in server-timing', async () => {
    const target = `${fx.origin}/article/`
    const res = await get(disk, { url: `${target}?png-size`, screenshot: true, meta: false, waitUntil: 'load', 'viewport.deviceScaleFactor': 1 })
    expect(res.statusCode).toBe(200)
    const { data } = res.json()
    const stored = (await disk.free.inject(new URL(data.screenshot.url).pathname)).rawPayload
    expect(stored.length).toBe(data.screenshot.size)
    const decoded = PNG.sync.read(stored)
    expect([decoded.width, decoded.height]).toEqual([1280, 800])
    // screenshot.optimizeForSpeed: the fast encoder's bytes as Chromium wrote them, no encode after the slot.
    const quick = await get(disk, { url: `${target}?png-size`, screenshot: true, meta: false, waitUntil: 'load', 'viewport.deviceScaleFactor': 1, 'screenshot.optimizeForSpeed': true })
    expect(quick.statusCode).toBe(200)
    expect(quick.headers['x-cache-status']).toBe('MISS')
    const storedQuick = (await disk.free.inject(new URL(quick.json().data.screenshot.url).pathname)).rawPayload
    const decodedQuick = PNG.sync.read(storedQuick)
    expect([decodedQuick.width, decodedQuick.height]).toEqual([1280, 800])
    expect(String(quick.headers['server-timing'])).not.toMatch(/encode;/)
    // The reference: the same page captured by a plain Chromium, default encode and fast encode.
    const browser: Browser = await launchTestBrowser()
    try {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 })
      const page = await context.newPage()
      await page.goto(`${target}?png-reference`, { waitUntil: 'load' })
      await page.bringToFront()
      const session = await context.newCDPSession(page)
      // A plain CDP capture sometimes answers "Unable to capture screenshot" before the page has drawn a frame under
      // load: try again a few times.
      const encode = async (optimizeForSpeed: boolean): Promise<number> => {
        for (let attempt = 0; ; attempt++) {
          try {
            return Buffer.from((await session.send('Page.captureScreenshot', { format: 'png', optimizeForSpeed })).data, 'base64').length
          } catch (err) {
            if (attempt >= 5 || !/Unable to capture screenshot/.test(String(err))) throw err
            await new Promise(resolve => setTimeout(resolve, 200))
          }
        }
      }
      const [fast, standard] = [await encode(true), await encode(false)]
      expect(stored.length).toBeLessThanOrEqual(standard)
      expect(stored.length).toBeLessThan(fast)
      // The same encoder on the same page: within a few percent of the reference's fast encode, well above the default.
      expect(storedQuick.length).toBeGreaterThan(standard * 1.5)
      expect(Math.abs(storedQuick.length - fast) / fast).toBeLessThan(0.05)
    } finally {
      await browser.close()
    }
    // Every part of the render, then the encode and the store; nobody read the HTML (meta=false), so no serialize.
    const names = String(res.headers['server-timing']).split(', ').map(part => part.split(';')[0])
    // `render` is the producers: Chromium's capture (`capture`) and the rest of the screenshot producer (`screenshot`).
    for (const name of ['guard', 'queue', 'lease', 'prepare', 'navigate', 'animations', 'adblock', 'capture', 'screenshot', 'fetch', 'render', 'encode', 'store', 'cache-write', 'total']) {
      expect(names).toContain(name)
    }
    expect(names).not.toContain('serialize')
    expect(names).not.toContain('media-type')
  })

  it('keeps serializing the page when the metadata needs it, and emulates screen for a PDF', async () => {
    const shot = await get(disk, { url: `${fx.origin}/red/?timed`, screenshot: true, waitUntil: 'load', 'viewport.deviceScaleFactor': 1 })
    expect(shot.json().data.title).toBe('Red')
    expect(String(shot.headers['server-timing'])).toMatch(/serialize;dur=[\d.]+/)
    const pdf = await get(disk, { url: `${fx.origin}/red/?timed-pdf`, pdf: true, meta: false, waitUntil: 'load', mediaType: 'screen' })
    expect(String(pdf.headers['server-timing'])).toMatch(/media-type;dur=[\d.]+/)
    expect(String(pdf.headers['server-timing'])).not.toMatch(/encode;/)
    // The PDF's part of `render`: Chromium's printing, and the rest of the producer (reading the file back).
    expect(String(pdf.headers['server-timing'])).toMatch(/print;dur=[\d.]+, pdf;dur=[\d.]+/)
    expect(String(pdf.headers['server-timing'])).not.toMatch(/capture;/)
  })
})

describe('staleTtl with an embed URL', () => {
  it('keeps answering from the stored file while a background refresh replaces it', async () => {
    const query = { url: `${fx.origin}/red/?stale-embed`, screenshot: true, meta: false, waitUntil: 'load', ttl: '1min', staleTtl: 59_000, embed: 'screenshot.url' }
    const first = await get(disk, query)
    expect(first.headers['x-cache-status']).toBe('MISS')
    const jobs = disk.ctx.browser.stats().jobs
    await new Promise(r => setTimeout(r, 1100))
    const stale = await get(disk, query)
    expect(stale.headers['x-cache-status']).toBe('STALE')
    expect(stale.headers['content-type']).toBe('image/png')
    expect(stale.rawPayload.equals(first.rawPayload)).toBe(true)
    await Promise.all([...disk.ctx.background])
    expect(disk.ctx.browser.stats().jobs).toBe(jobs + 1)
    const fresh = await get(disk, { ...query, staleTtl: false })
    expect(fresh.headers['x-cache-status']).toBe('HIT')
    expect(Number(fresh.headers['x-timestamp'])).toBeGreaterThan(Number(first.headers['x-timestamp']))
    expect(fresh.headers['content-type']).toBe('image/png')
  })
})

describe('prerender', () => {
  it('auto hands a client-rendered page to the browser and reads the rendered DOM', async () => {
    const res = await get(disk, { url: `${fx.origin}/spa/` })
    expect(res.headers['x-fetch-mode']).toBe('prerender')
    expect(res.json().data).toMatchObject({ title: 'Rendered by script', description: 'Only a browser sees this.' })
  })

  it('false never renders, true always does', async () => {
    const plain = await get(disk, { url: `${fx.origin}/spa/?p`, prerender: false })
    expect(plain.headers['x-fetch-mode']).toBe('fetch')
    expect(plain.json().data.title).toBeNull()
    const forced = await get(disk, { url: `${fx.origin}/article/?p`, prerender: true })
    expect(forced.headers['x-fetch-mode']).toBe('prerender')
    expect(forced.json().data.title).toBe('Shipping faster')
  })

  it('refuses a blocked redirect of the browser navigation with EFORBIDDENURL', async () => {
    const res = await get(disk, { url: `${fx.origin}/to-blocked`, screenshot: true })
    expect(res.statusCode).toBe(400)
    expect(res.json().code).toBe('EFORBIDDENURL')
    expect(blocked.hits.size).toBe(0)
  })
})

describe('pdf', () => {
  it('stores a PDF with the requested format and orientation', async () => {
    const res = await get(disk, { url: `${fx.origin}/article/?pdf`, pdf: true, 'pdf.format': 'Letter', 'pdf.landscape': true, meta: false })
    const { data } = res.json()
    expect(data.pdf).toMatchObject({ type: 'pdf' })
    const file = await disk.free.inject(new URL(data.pdf.url).pathname)
    const doc = await PDFDocument.load(file.rawPayload)
    const { width, height } = doc.getPage(0).getSize()
    expect(Math.round(width)).toBe(792)
    expect(Math.round(height)).toBe(612)
  })
})

describe('clients that go away', () => {
  it('a queued render whose client disconnected never runs', async () => {
    const hitsBefore = fx.hitsOf('/red/')
    const app = await build({ ALLOW_PRIVATE_HOSTS: fx.host, BROWSER_CONCURRENCY: '1', FREE_DAILY_LIMIT: '0' })
    try {
      fx.route('/hold', (_req, res) => { setTimeout(() => { res.writeHead(200, { 'content-type': 'text/html' }); res.end('<title>held</title>') }, 1500) })
      const base = await app.free.listen({ port: 0, host: '127.0.0.1' })
      await app.ctx.browser.warm()
      const until = async (condition: () => boolean): Promise<void> => {
        for (let i = 0; i < 200 && !condition(); i++) await new Promise(r => setTimeout(r, 25))
        expect(condition()).toBe(true)
      }
      // Occupies the only slot for 1.5 s.
      const busy = fetch(`${base}/?${qs({ url: `${fx.origin}/hold`, screenshot: true, meta: false, waitUntil: 'load' })}`)
      await until(() => app.ctx.browser.stats().active === 1)
      const controller = new AbortController()
      const gone = fetch(`${base}/?${qs({ url: `${fx.origin}/red/?gone`, screenshot: true, meta: false, waitUntil: 'load' })}`, { signal: controller.signal }).catch(() => undefined)
      await until(() => app.ctx.browser.stats().queued === 1)
      controller.abort()
      await gone
      await until(() => app.ctx.browser.stats().queued === 0)
      expect((await busy).status).toBe(200)
      await until(() => app.ctx.browser.stats().active === 0)
      expect(fx.hitsOf('/red/')).toBe(hitsBefore)
    } finally {
      await app.close()
    }
  })
})
