// Screenshot and PDF of a loaded page (API.md §3.2).
//
// Screenshots go straight to CDP's Page.captureScreenshot: it encodes WebP (Playwright's screenshot cannot) and
// takes `optimizeForSpeed`, which roughly halves the PNG encode of a 2560×1600 capture (same pixels, larger file).
// The capture runs on the page's capture session (page-cdp-session.ts), kept by the page's owner (the pool's lease)
// for the page's life. Chromium captures with the emulation of the session that asks, so that session gets the
// page's device metrics (read back from the page) and keeps them.
//
// PDFs use Page.printToPDF streamed back in chunks, so the 100 MiB cap is enforced while reading.
import type { CDPSession, Page } from 'playwright-core'
import { imageSize } from 'image-size'
import type { PdfOptions, ScreenshotOptions, ScreenshotType } from '../schemas/options.ts'
import { PAPER_SIZES_IN } from '../schemas/options.ts'
import { AppError, isAppError } from '../errors.ts'
import { abortable, isTimedOut, sleep, throwIfAborted, within } from '../util/abort.ts'
import type { Budget, DomElement, DomWindow } from './session.ts'
import { WAIT_SHARE } from './session.ts'
import { isTimeoutError } from './errors.ts'
import { codeKindOf, showCodeView } from './code-view.ts'
import { hasOverlay, openOverlayStage, overlayInsets } from './overlay.ts'
import { PageCdpSession } from './page-cdp-session.ts'
import type { DeviceMetrics, Orientation } from './page-cdp-session.ts'

/** Tallest image produced, in image pixels (CSS height × DPR). */
export const MAX_IMAGE_HEIGHT = 16_384
/** Largest PDF produced. */
export const MAX_PDF_BYTES = 100 * 1024 * 1024

export interface Screenshot {
  body: Buffer
  /** The file extension. */
  type: 'png' | 'jpg' | 'webp'
  /** Pixel size of `body`, read from its header. */
  width: number
  height: number
}

export interface Pdf {
  body: Buffer
  pages: number
}

export interface CaptureTarget {
  /** Content type of the loaded document (its response's); read from the page when absent. */
  contentType?: string
  /** Tallest image in device pixels (MAX_FULLPAGE_HEIGHT); at most, and by default, MAX_IMAGE_HEIGHT. */
  maxImageHeight?: number
  /**
   * The page's capture session, from its owner (a pooled page's comes with JobInfo). Without one, this capture
   * opens a session of its own and leaves it attached (detaching would drop the page's device emulation).
   */
  session?: PageCdpSession
}

// --- device metrics

type Metrics = DeviceMetrics

const ORIENTATIONS: Readonly<Record<string, Orientation>> = {
  'portrait-primary': 'portraitPrimary',
  'portrait-secondary': 'portraitSecondary',
  'landscape-primary': 'landscapePrimary',
  'landscape-secondary': 'landscapeSecondary'
}

interface PageState {
  dpr: number
  innerWidth: number
  innerHeight: number
  screenWidth: number
  screenHeight: number
  orientation: string
  angle: number
}

function readState (page: Page): Promise<PageState> {
  return page.evaluate(() => {
    const win = globalThis as unknown as DomWindow
    return {
      dpr: win.devicePixelRatio,
      innerWidth: win.innerWidth,
      innerHeight: win.innerHeight,
      screenWidth: win.screen.width,
      screenHeight: win.screen.height,
      orientation: win.screen.orientation?.type ?? 'landscape-primary',
      angle: win.screen.orientation?.angle ?? 0
    }
  })
}

function sameState (a: PageState, b: PageState): boolean {
  return a.dpr === b.dpr && a.innerWidth === b.innerWidth && a.innerHeight === b.innerHeight &&
    a.screenWidth === b.screenWidth && a.screenHeight === b.screenHeight
}

/**
 * The device metrics the page is emulated with, as Playwright set them: viewport from Playwright, the rest read in
 * the page. `mobile` is not observable from the page; Playwright gives mobile viewports a portrait orientation or a
 * 90° angle and desktop ones landscape at 0°, which tells them apart (checked after applying, see openSession).
 */
function metricsOf (page: Page, state: PageState): Metrics {
  const viewport = page.viewportSize() ?? { width: state.innerWidth, height: state.innerHeight }
  const type = ORIENTATIONS[state.orientation] ?? 'landscapePrimary'
  return {
    deviceScaleFactor: state.dpr,
    width: viewport.width,
    height: viewport.height,
    screenWidth: state.screenWidth,
    screenHeight: state.screenHeight,
    mobile: type === 'portraitPrimary' || state.angle === 90,
    orientation: { type, angle: state.angle }
  }
}

async function applyMetrics (session: CDPSession, metrics: Metrics): Promise<void> {
  await session.send('Emulation.setDeviceMetricsOverride', {
    mobile: metrics.mobile,
    width: metrics.width,
    height: metrics.height,
    deviceScaleFactor: metrics.deviceScaleFactor,
    screenWidth: metrics.screenWidth,
    screenHeight: metrics.screenHeight,
    screenOrientation: metrics.orientation,
    dontSetVisibleSize: true
  })
}

interface CaptureSession {
  session: CDPSession
  metrics: Metrics
  /** Detaches, and restores the page's own emulation when it must go on being used. */
  close (): Promise<void>
}

function sameMetrics (a: Metrics, b: Metrics): boolean {
  return a.deviceScaleFactor === b.deviceScaleFactor && a.width === b.width && a.height === b.height &&
    a.screenWidth === b.screenWidth && a.screenHeight === b.screenHeight && a.orientation.type === b.orientation.type &&
    a.orientation.angle === b.orientation.angle
}

/** A session of our own on `page` (a page we opened) with `forced` metrics, detached on close. */
async function openForcedSession (page: Page, forced: Metrics): Promise<CaptureSession> {
  const session = await page.context().newCDPSession(page)
  try {
    await applyMetrics(session, forced)
  } catch (err) {
    await session.detach().catch(() => {})
    throw err
  }
  return { session, metrics: forced, close: async () => { await session.detach().catch(() => {}) } }
}

/**
 * The page's capture session with an emulation equal to the page's. A pooled page keeps one emulation profile for
 * all its jobs, so the metrics are set once and re-set only when the page's change; never detaching also spares
 * restoring Playwright's emulation after each capture (detaching drops it).
 */
async function openSession (page: Page, cdp: PageCdpSession): Promise<CaptureSession> {
  const before = await readState(page)
  const metrics = metricsOf(page, before)
  const session = await cdp.get()
  if (cdp.metrics !== undefined && sameMetrics(cdp.metrics, metrics)) {
    return { session, metrics: cdp.metrics, close: async () => {} }
  }
  try {
    await applyMetrics(session, metrics)
    if (!sameState(before, await readState(page))) {
      // The mobile guess was wrong: the other value must be the page's.
      metrics.mobile = !metrics.mobile
      await applyMetrics(session, metrics)
    }
  } catch (err) {
    cdp.forget()
    throw err
  }
  cdp.metrics = metrics
  return { session, metrics, close: async () => {} }
}

// --- screenshot

interface Clip {
  x: number
  y: number
  width: number
  height: number
  scale: number
}

interface LayoutMetrics {
  cssVisualViewport: { pageX: number, pageY: number, clientWidth: number, clientHeight: number, scale: number }
  cssContentSize: { width: number, height: number }
}

function extensionOf (type: ScreenshotType): Screenshot['type'] {
  return type === 'jpeg' ? 'jpg' : type
}

function captureTimeout (): AppError {
  return new AppError('EBRWSRTIMEOUT', { data: { screenshot: 'The capture did not finish in time.' } })
}

/** Races a browser step against the time left: EBRWSRTIMEOUT when it does not finish. */
async function inTime<T> (work: Promise<T>, budget: Budget, onTimeout: () => AppError = captureTimeout): Promise<T> {
  const outcome = await within(work, budget.remaining(), budget.signal)
  if (isTimedOut(outcome)) throw onTimeout()
  return outcome
}

async function layoutMetrics (session: CDPSession): Promise<LayoutMetrics> {
  return await session.send('Page.getLayoutMetrics')
}

interface Encoding {
  format: ScreenshotType
  quality?: number
}

/** One Page.captureScreenshot of `clip` (document CSS px); the image is clip × scale × DPR pixels. */
async function captureClip (capture: CaptureSession, clip: Clip, encoding: Encoding, omitBackground: boolean, budget: Budget): Promise<Buffer> {
  const { session } = capture
  const layout = await layoutMetrics(session)
  const view = layout.cssVisualViewport
  const fits = clip.x >= view.pageX && clip.y >= view.pageY &&
    clip.x + clip.width <= view.pageX + view.clientWidth + 0.5 && clip.y + clip.height <= view.pageY + view.clientHeight + 0.5
  if (omitBackground) await session.send('Emulation.setDefaultBackgroundColorOverride', { color: { r: 0, g: 0, b: 0, a: 0 } })
  try {
    const result = await inTime(session.send('Page.captureScreenshot', {
      format: encoding.format,
      ...(encoding.format === 'png' ? { optimizeForSpeed: true } : { quality: encoding.quality ?? 80 }),
      clip,
      captureBeyondViewport: !fits,
      fromSurface: true
    }), budget)
    return Buffer.from(result.data, 'base64')
  } finally {
    if (omitBackground) await session.send('Emulation.setDefaultBackgroundColorOverride', {}).catch(() => {})
  }
}

const SCROLL_STEP_MS = 50
const IMAGE_POLL_MS = 50

/**
 * Scrolls down a viewport at a time, to `maxHeight` CSS px at most, so lazy content loads; waits for the images in
 * that range to finish; scrolls back to the top. Uses at most ⅓ of the remaining budget; running out is not an error.
 */
async function scrollThrough (page: Page, maxHeight: number, budget: Budget): Promise<void> {
  const until = performance.now() + budget.fraction(1 / 3)
  const measure = (): Promise<{ height: number, step: number }> => page.evaluate(() => {
    const win = globalThis as unknown as DomWindow
    return {
      height: Math.max(win.document.documentElement.scrollHeight, win.document.body?.scrollHeight ?? 0),
      step: Math.max(1, win.innerHeight)
    }
  })
  let { height, step } = await measure()
  for (let y = step; y < Math.min(height, maxHeight) && performance.now() < until; y += step) {
    await page.evaluate((top) => { (globalThis as unknown as DomWindow).scrollTo(0, top) }, y)
    await sleep(SCROLL_STEP_MS, budget.signal)
    height = (await measure()).height
  }
  while (performance.now() < until) {
    const pending = await page.evaluate((limit) => {
      const win = globalThis as unknown as DomWindow
      let count = 0
      for (const img of Array.from(win.document.images)) {
        if (img.complete || img.getClientRects().length === 0) continue
        if (img.getBoundingClientRect().top + win.scrollY < limit) count++
      }
      return count
    }, maxHeight)
    if (pending === 0) break
    await sleep(IMAGE_POLL_MS, budget.signal)
  }
  await page.evaluate(() => { (globalThis as unknown as DomWindow).scrollTo(0, 0) })
}

function isSelectorError (err: unknown): boolean {
  return err instanceof Error && !isTimeoutError(err) && /selector|Unexpected token|Unknown engine|is not a valid/i.test(err.message)
}

/** Waits for `selector` to be visible (else 504 EBRWSRTIMEOUT) and returns its box in document CSS px. */
async function elementClip (page: Page, selector: string, budget: Budget): Promise<Clip> {
  const locator = page.locator(selector).first()
  try {
    await abortable(locator.waitFor({ state: 'visible', timeout: Math.max(1, budget.fraction(WAIT_SHARE)) }), budget.signal)
    await locator.scrollIntoViewIfNeeded({ timeout: Math.max(1, budget.fraction(1 / 3)) }).catch(() => {})
    const box = await locator.evaluate((element) => {
      const win = globalThis as unknown as DomWindow
      const rect = (element as unknown as DomElement).getBoundingClientRect()
      return { x: rect.left + win.scrollX, y: rect.top + win.scrollY, width: rect.width, height: rect.height }
    }, undefined, { timeout: Math.max(1, budget.fraction(1 / 3)) })
    const x = Math.floor(box.x)
    const y = Math.floor(box.y)
    return { x, y, width: Math.ceil(box.x + box.width) - x, height: Math.ceil(box.y + box.height) - y, scale: 1 }
  } catch (err) {
    throwIfAborted(budget.signal)
    if (isAppError(err)) throw err
    if (isSelectorError(err)) {
      throw new AppError('EINVALQUERY', {
        data: { 'screenshot.element': `The selector \`${selector}\` is not valid.` },
        cause: err
      })
    }
    if (isTimeoutError(err)) {
      throw new AppError('EBRWSRTIMEOUT', {
        data: { 'screenshot.element': `The element \`${selector}\` never became visible.` },
        cause: err
      })
    }
    throw err
  }
}

function dimensions (body: Buffer): { width: number, height: number } {
  const size = imageSize(body)
  return { width: size.width, height: size.height }
}

/** Draws the overlay around `image` (a PNG of the page at `metrics`' DPR) and captures it in the requested format. */
async function compose (
  page: Page, image: Buffer, metrics: Metrics, shot: ScreenshotOptions, encoding: Encoding, budget: Budget
): Promise<Buffer> {
  const size = dimensions(image)
  const dpr = metrics.deviceScaleFactor
  const stage = await openOverlayStage(
    page, `data:image/png;base64,${image.toString('base64')}`, size.width / dpr, size.height / dpr, dpr, shot.overlay, budget
  )
  try {
    const viewport = { width: Math.ceil(stage.width), height: Math.ceil(stage.height) }
    const capture = await openForcedSession(stage.page, {
      deviceScaleFactor: dpr,
      ...viewport,
      screenWidth: viewport.width,
      screenHeight: viewport.height,
      mobile: false,
      orientation: { type: 'landscapePrimary', angle: 0 }
    })
    try {
      return await captureClip(capture, { x: 0, y: 0, width: stage.width, height: stage.height, scale: 1 }, encoding, shot.omitBackground, budget)
    } finally {
      await capture.close()
    }
  } finally {
    await stage.close()
  }
}

/**
 * Captures the loaded page as `shot` asks (API.md §3.2): the viewport, the full page (scrolled through first) or one
 * element (504 EBRWSRTIMEOUT if it never becomes visible), never more than 16,384 image pixels tall, overlay included;
 * a JSON or text target is first shown as highlighted code; then the overlay. The width and height returned are
 * those of the bytes.
 */
export async function takeScreenshot (page: Page, shot: ScreenshotOptions, budget: Budget, target: CaptureTarget = {}): Promise<Screenshot> {
  throwIfAborted(budget.signal)
  const contentType = target.contentType ?? await page.evaluate(() => (globalThis as unknown as DomWindow).document.contentType)
  const kind = codeKindOf(contentType)
  if (kind !== undefined) await showCodeView(page, kind, shot.codeScheme, budget)

  const encoding: Encoding = shot.type === 'png' ? { format: 'png' } : { format: shot.type, quality: shot.quality ?? 80 }
  const overlay = hasOverlay(shot.overlay)
  let element: Clip | undefined
  if (shot.element !== undefined) element = await elementClip(page, shot.element, budget)

  const capture = await openSession(page, target.session ?? new PageCdpSession(page))
  let image: Buffer
  try {
    const { metrics } = capture
    const maxCssHeight = (width: number): number => {
      const insets = overlay ? overlayInsets(width, shot.overlay) : { top: 0, bottom: 0 }
      const maxImageHeight = Math.min(MAX_IMAGE_HEIGHT, target.maxImageHeight ?? MAX_IMAGE_HEIGHT)
      return Math.max(1, Math.floor(maxImageHeight / metrics.deviceScaleFactor) - insets.top - insets.bottom)
    }
    let clip: Clip
    if (element !== undefined) {
      clip = { ...element, height: Math.min(element.height, maxCssHeight(element.width)) }
    } else if (shot.fullPage) {
      await scrollThrough(page, maxCssHeight(metrics.width), budget)
      const content = (await layoutMetrics(capture.session)).cssContentSize
      const width = Math.ceil(content.width)
      clip = { x: 0, y: 0, width, height: Math.min(Math.ceil(content.height), maxCssHeight(width)), scale: 1 }
    } else {
      const view = (await layoutMetrics(capture.session)).cssVisualViewport
      const scale = view.scale > 0 ? view.scale : 1
      const height = Math.min(metrics.height, maxCssHeight(metrics.width))
      clip = { x: view.pageX, y: view.pageY, width: metrics.width / scale, height: height / scale, scale }
    }
    // With an overlay the page is captured losslessly and the composition is encoded as asked.
    image = await captureClip(capture, clip, overlay ? { format: 'png' } : encoding, shot.omitBackground, budget)
  } finally {
    await capture.close()
  }
  if (overlay) image = await compose(page, image, capture.metrics, shot, encoding, budget)
  return { body: image, type: extensionOf(shot.type), ...dimensions(image) }
}

// --- pdf

const CSS_PX_PER_INCH = 96

/** Page objects in a PDF: `/Type /Page` dictionaries (not `/Pages`). Chromium writes them uncompressed. */
export function countPdfPages (body: Buffer): number {
  let count = 0
  const type = Buffer.from('/Type')
  const page = Buffer.from('/Page')
  for (let at = body.indexOf(type); at !== -1; at = body.indexOf(type, at + type.length)) {
    let i = at + type.length
    while (i < body.length && (body[i] === 0x20 || body[i] === 0x0a || body[i] === 0x0d || body[i] === 0x09)) i++
    if (!body.subarray(i, i + page.length).equals(page)) continue
    const next = body[i + page.length]
    // A name ends at whitespace or a delimiter; `/Pages` (or any longer name) is something else.
    if (next === undefined || !/[A-Za-z0-9_.#-]/.test(String.fromCharCode(next))) count++
  }
  return count
}

interface PageRange { from: number, to: number }

/** `1-5,8,11-13`, `5-`, `-3` as inclusive ranges (open ends are 1 and Infinity). */
export function parsePageRanges (text: string): PageRange[] {
  const ranges: PageRange[] = []
  for (const part of text.split(',')) {
    const trimmed = part.trim()
    if (trimmed === '') continue
    const [from, to] = trimmed.includes('-') ? trimmed.split('-') : [trimmed, trimmed]
    ranges.push({
      from: from === undefined || from === '' ? 1 : Number(from),
      to: to === undefined || to === '' ? Number.POSITIVE_INFINITY : Number(to)
    })
  }
  return ranges
}

/** How many distinct pages `ranges` select from a document of `total` pages. */
function selectedPages (ranges: PageRange[], total: number): number {
  const pages = new Set<number>()
  for (const { from, to } of ranges) {
    for (let p = Math.max(1, from); p <= Math.min(to, total); p++) pages.add(p)
  }
  return pages.size
}

/**
 * Whether a range starts past the last page, knowing only that Chromium printed `printed` pages for `ranges`
 * (it drops such ranges silently when another one is valid). With N pages Chromium prints selected(N) pages, which
 * grows with N, and adds the page `s` of the latest start once N ≥ s; so a range starts past the end exactly when
 * printed ≤ selected(s − 1).
 */
export function startsPastEnd (ranges: PageRange[], printed: number): boolean {
  if (ranges.length === 0) return false
  const latest = Math.max(...ranges.map(r => r.from))
  return printed <= selectedPages(ranges, latest - 1)
}

function pdfTooLarge (reason: string, cause?: unknown): AppError {
  return new AppError('EPDFTOOLARGE', { data: { pdf: reason }, ...(cause === undefined ? {} : { cause }) })
}

function pageRangeError (pageRanges: string, cause?: unknown): AppError {
  return new AppError('EPAGERANGE', {
    data: { 'pdf.pageRanges': `The range \`${pageRanges}\` starts past the last page of the document.` },
    ...(cause === undefined ? {} : { cause })
  })
}

/** Page.printToPDF parameters (lengths in inches). */
export interface PrintParameters {
  landscape: boolean
  printBackground: boolean
  scale: number
  paperWidth: number
  paperHeight: number
  marginTop: number
  marginRight: number
  marginBottom: number
  marginLeft: number
  pageRanges: string
  preferCSSPageSize: boolean
  displayHeaderFooter: boolean
  generateTaggedPDF: boolean
  generateDocumentOutline: boolean
  transferMode: 'ReturnAsStream'
}

/** Chromium reads page numbers as 32-bit ints and calls a larger one a syntax error. */
const MAX_PAGE_NUMBER = 2_147_483_647

/**
 * `pageRanges` as Chromium reads it: a page number past its int range means the same as the largest one (a page past
 * any real document), so `1-99999999999` prints to the end and `99999999999` starts past the last page (EPAGERANGE).
 */
export function chromiumPageRanges (pageRanges: string): string {
  return pageRanges.replace(/\d+/g, (digits) => {
    const trimmed = digits.replace(/^0+(?=\d)/, '')
    return trimmed.length > 10 || Number(trimmed) > MAX_PAGE_NUMBER ? String(MAX_PAGE_NUMBER) : digits
  })
}

/** The Page.printToPDF parameters for `pdf`. */
export function printParameters (pdf: PdfOptions): PrintParameters {
  const paper = pdf.format !== undefined
    ? PAPER_SIZES_IN[pdf.format]
    : { width: (pdf.width ?? 794) / CSS_PX_PER_INCH, height: (pdf.height ?? 1123) / CSS_PX_PER_INCH }
  return {
    landscape: pdf.landscape,
    printBackground: pdf.printBackground,
    scale: pdf.scale,
    paperWidth: paper.width,
    paperHeight: paper.height,
    marginTop: pdf.margin.top / CSS_PX_PER_INCH,
    marginRight: pdf.margin.right / CSS_PX_PER_INCH,
    marginBottom: pdf.margin.bottom / CSS_PX_PER_INCH,
    marginLeft: pdf.margin.left / CSS_PX_PER_INCH,
    pageRanges: chromiumPageRanges(pdf.pageRanges ?? ''),
    preferCSSPageSize: false,
    displayHeaderFooter: false,
    generateTaggedPDF: false,
    generateDocumentOutline: false,
    transferMode: 'ReturnAsStream'
  }
}

const READ_CHUNK = 4 * 1024 * 1024

/**
 * Prints the page (API.md §3.2 `pdf`) with the media type already emulated. 400 EPAGERANGE when a range starts past
 * the last page; 400 EPDFTOOLARGE when printing does not finish in the time left or the file passes 100 MiB. `cdp` is
 * the page's capture session (a pooled page's comes with JobInfo); without one, a session of its own.
 */
export async function printPdf (page: Page, pdf: PdfOptions, budget: Budget, cdp: PageCdpSession = new PageCdpSession(page)): Promise<Pdf> {
  throwIfAborted(budget.signal)
  const timeout = (): AppError => pdfTooLarge('The PDF could not be generated in the time left.')
  const session = await cdp.get()
  {
    let stream: string
    try {
      const printed = await inTime(session.send('Page.printToPDF', printParameters(pdf)), budget, timeout)
      stream = printed.stream ?? ''
    } catch (err) {
      const message = err instanceof Error ? err.message : ''
      if (/Page range exceeds page count/i.test(message)) throw pageRangeError(pdf.pageRanges ?? '', err)
      if (/Page range is invalid/i.test(message)) {
        throw new AppError('EINVALQUERY', { data: { 'pdf.pageRanges': `The range \`${pdf.pageRanges ?? ''}\` is not valid.` }, cause: err })
      }
      throw err
    }
    const chunks: Buffer[] = []
    let size = 0
    try {
      for (;;) {
        const chunk = await inTime(session.send('IO.read', { handle: stream, size: READ_CHUNK }), budget, timeout)
        const bytes = Buffer.from(chunk.data, chunk.base64Encoded === true ? 'base64' : 'latin1')
        size += bytes.length
        if (size > MAX_PDF_BYTES) throw pdfTooLarge('The PDF would be larger than 100 MiB.')
        chunks.push(bytes)
        if (chunk.eof) break
      }
    } finally {
      await session.send('IO.close', { handle: stream }).catch(() => {})
    }
    const body = Buffer.concat(chunks)
    const pages = countPdfPages(body)
    if (pdf.pageRanges !== undefined && startsPastEnd(parsePageRanges(pdf.pageRanges), pages)) throw pageRangeError(pdf.pageRanges)
    return { body, pages }
  }
}
