// The screenshot producer (docs/api.md §3.2): the viewport, the full page (scrolled through first) or one element,
// through CDP's Page.captureScreenshot. It encodes WebP (Playwright's screenshot cannot) and takes
// `optimizeForSpeed`, which roughly halves the PNG encode of a 2560×1600 capture (same pixels, larger file). A JSON
// or text target is first shown as highlighted code; the overlay is drawn last.
import type { CDPSession, Page } from 'playwright-core'
import { imageSize } from 'image-size'
import type { ScreenshotOptions, ScreenshotType } from '../../schemas/options.ts'
import { AppError, isAppError } from '../../errors.ts'
import { abortable, sleep, throwIfAborted } from '../../util/abort.ts'
import type { Budget } from '../page/budget.ts'
import { WAIT_SHARE } from '../page/budget.ts'
import type { DomElement, DomWindow } from '../page/dom.ts'
import { isTimeoutError } from '../errors.ts'
import { PageCdpSession } from '../page/cdp-session.ts'
import type { DeviceMetrics } from '../page/cdp-session.ts'
import { codeKindOf, showCodeView } from './code-view.ts'
import { hasOverlay, openOverlayStage, overlayInsets, type StageContextOf } from './overlay.ts'
import { inTime, openForcedSession, openSession, type CaptureSession } from './capture-session.ts'
import type { FileProducer } from './producer.ts'

/** Tallest image produced, in image pixels (CSS height × DPR). */
export const MAX_IMAGE_HEIGHT = 16_384
export interface Screenshot {
  body: Buffer
  /** The file extension. */
  type: 'png' | 'jpg' | 'webp'
  /** Pixel size of `body`, read from its header. */
  width: number
  height: number
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
  /** Where the time of Chromium's captures (Page.captureScreenshot: paint and encode) is added, as `capture` (ms). */
  timings?: Record<string, number>
  /** Told when a wait of the capture ran out (a full page's lazy content): see ProducerContext.gaveUp. */
  gaveUp?: (wait: string) => void
  /** Where the overlay is composed (ProducerContext.stageContext); without one, a context of the page's browser. */
  stageContext?: StageContextOf
}

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

async function layoutMetrics (session: CDPSession): Promise<LayoutMetrics> {
  return await session.send('Page.getLayoutMetrics')
}

interface Encoding {
  format: ScreenshotType
  quality?: number
}

/** Whether `clip` lies within the visual viewport `view` (then nothing beyond the viewport needs painting). */
function fitsIn (clip: Clip, view: LayoutMetrics['cssVisualViewport']): boolean {
  return clip.x >= view.pageX && clip.y >= view.pageY &&
    clip.x + clip.width <= view.pageX + view.clientWidth + 0.5 && clip.y + clip.height <= view.pageY + view.clientHeight + 0.5
}

/**
 * One Page.captureScreenshot of `clip` (document CSS px); the image is clip × scale × DPR pixels. `view` is the
 * visual viewport when the caller has just read it (else it is read here, one round trip).
 */
async function captureClip (
  capture: CaptureSession, clip: Clip, encoding: Encoding, omitBackground: boolean, budget: Budget,
  timings: Record<string, number> | undefined, view?: LayoutMetrics['cssVisualViewport']
): Promise<Buffer> {
  const { session } = capture
  const fits = fitsIn(clip, view ?? (await layoutMetrics(session)).cssVisualViewport)
  if (omitBackground) await session.send('Emulation.setDefaultBackgroundColorOverride', { color: { r: 0, g: 0, b: 0, a: 0 } })
  const t = performance.now()
  try {
    const result = await inTime(session.send('Page.captureScreenshot', {
      format: encoding.format,
      ...(encoding.format === 'png' ? { optimizeForSpeed: true } : { quality: encoding.quality ?? 80 }),
      clip,
      captureBeyondViewport: !fits,
      fromSurface: true
    }), budget)
    if (timings !== undefined) timings.capture = (timings.capture ?? 0) + performance.now() - t
    return Buffer.from(result.data, 'base64')
  } finally {
    if (omitBackground) await session.send('Emulation.setDefaultBackgroundColorOverride', {}).catch(() => {})
  }
}

const SCROLL_STEP_MS = 50
const IMAGE_POLL_MS = 50

/**
 * Scrolls down a viewport at a time, to `maxHeight` CSS px at most, so lazy content loads; waits for the images in
 * that range to finish; scrolls back to the top. Uses at most ⅓ of the remaining budget; running out is not an error,
 * but false is returned.
 */
async function scrollThrough (page: Page, maxHeight: number, budget: Budget): Promise<boolean> {
  const until = performance.now() + budget.fraction(1 / 3)
  const measure = (): Promise<{ height: number, step: number }> => page.evaluate(() => {
    const win = globalThis as unknown as DomWindow
    return {
      height: Math.max(win.document.documentElement.scrollHeight, win.document.body?.scrollHeight ?? 0),
      step: Math.max(1, win.innerHeight)
    }
  })
  let { height, step } = await measure()
  let done = false
  let y = step
  for (; y < Math.min(height, maxHeight) && performance.now() < until; y += step) {
    await page.evaluate((top) => { (globalThis as unknown as DomWindow).scrollTo(0, top) }, y)
    await sleep(SCROLL_STEP_MS, budget.signal)
    height = (await measure()).height
  }
  const scrolled = y >= Math.min(height, maxHeight)
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
    if (pending === 0) { done = scrolled; break }
    await sleep(IMAGE_POLL_MS, budget.signal)
  }
  await page.evaluate(() => { (globalThis as unknown as DomWindow).scrollTo(0, 0) })
  return done
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
  page: Page, image: Buffer, metrics: DeviceMetrics, shot: ScreenshotOptions, encoding: Encoding, budget: Budget,
  timings: Record<string, number> | undefined, stageContext: StageContextOf | undefined
): Promise<Buffer> {
  const size = dimensions(image)
  const dpr = metrics.deviceScaleFactor
  const stage = await openOverlayStage(
    page, `data:image/png;base64,${image.toString('base64')}`, size.width / dpr, size.height / dpr, dpr, shot.overlay, budget, stageContext
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
      return await captureClip(capture, { x: 0, y: 0, width: stage.width, height: stage.height, scale: 1 }, encoding, shot.omitBackground, budget, timings)
    } finally {
      await capture.close()
    }
  } finally {
    await stage.close()
  }
}

/**
 * Captures the loaded page as `shot` asks (docs/api.md §3.2): the viewport, the full page (scrolled through first) or one
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
    let view: LayoutMetrics['cssVisualViewport'] | undefined
    if (element !== undefined) {
      clip = { ...element, height: Math.min(element.height, maxCssHeight(element.width)) }
    } else if (shot.fullPage) {
      if (!await scrollThrough(page, maxCssHeight(metrics.width), budget)) target.gaveUp?.('screenshot.fullPage')
      const content = (await layoutMetrics(capture.session)).cssContentSize
      const width = Math.ceil(content.width)
      clip = { x: 0, y: 0, width, height: Math.min(Math.ceil(content.height), maxCssHeight(width)), scale: 1 }
    } else {
      view = (await layoutMetrics(capture.session)).cssVisualViewport
      const scale = view.scale > 0 ? view.scale : 1
      const height = Math.min(metrics.height, maxCssHeight(metrics.width))
      clip = { x: view.pageX, y: view.pageY, width: metrics.width / scale, height: height / scale, scale }
    }
    // With an overlay the page is captured losslessly and the composition is encoded as asked.
    image = await captureClip(capture, clip, overlay ? { format: 'png' } : encoding, shot.omitBackground, budget, target.timings, view)
  } finally {
    await capture.close()
  }
  if (overlay) image = await compose(page, image, capture.metrics, shot, encoding, budget, target.timings, target.stageContext)
  return { body: image, type: extensionOf(shot.type), ...dimensions(image) }
}

const CONTENT_TYPES: Readonly<Record<Screenshot['type'], string>> = { png: 'image/png', jpg: 'image/jpeg', webp: 'image/webp' }

export const screenshotProducer: FileProducer<ScreenshotOptions> = {
  kind: 'file',
  field: 'screenshot',
  needsBrowser: true,
  settings: (outputs) => outputs.screenshot,
  async produce (shot, { page, budget, loaded, cdp, maxImageHeight, timings, gaveUp, stageContext }) {
    const contentType = loaded.headers['content-type']
    const image = await takeScreenshot(page, shot, budget, {
      ...(contentType === undefined ? {} : { contentType }), maxImageHeight, session: cdp, ...(timings === undefined ? {} : { timings }), gaveUp, stageContext
    })
    return { body: image.body, ext: image.type, contentType: CONTENT_TYPES[image.type], details: { width: image.width, height: image.height } }
  }
}
