// `screenshot.overlay` (docs/api.md §3.2): a browser-window frame drawn around the capture (`browser: light|dark`) and/or
// a backdrop behind it (`background`: colour, gradient or http(s) image), with a margin proportional to the capture.
// The composition is an HTML page with the capture as an <img>, captured by screenshot.ts at the capture's device pixel
// ratio, so the capture is drawn 1:1. It is rendered in a short-lived context of the same browser, with scripts off:
// the target's page must stay as it is (a PDF may be printed from it next), and the pool closes any other page
// opened in a job's context. Requests of that context (a background URL) go through the browser's egress proxy,
// which applies the same checks as for the target's own requests.
import type { BrowserContext, BrowserContextOptions, Page } from 'playwright-core'
import type { ScreenshotOptions } from '../../schemas/options.ts'
import { AppError } from '../../errors.ts'
import { isTimedOut, sleep, within } from '../../util/abort.ts'
import { isHttpUrl } from '../../util/url.ts'
import type { Budget } from '../page/budget.ts'
import type { DomWindow } from '../page/dom.ts'

export type Overlay = ScreenshotOptions['overlay']

/** CSS px added around the capture on each side. */
export interface Insets {
  top: number
  right: number
  bottom: number
  left: number
}

export function hasOverlay (overlay: Overlay): boolean {
  return overlay.browser !== undefined || overlay.background !== undefined
}

/** Height of the window's title bar for a capture `width` CSS px wide. */
export function titleBarHeight (width: number): number {
  return Math.round(Math.min(52, Math.max(28, width * 0.035)))
}

/** Margin between the capture (or its frame) and the edge of the backdrop: 6% of the capture's width, at least 8 px. */
export function backdropMargin (width: number): number {
  return Math.max(8, Math.round(width * 0.06))
}

/** What the overlay adds around a capture `width` CSS px wide (it depends on the width only, so callers can cap heights). */
export function overlayInsets (width: number, overlay: Overlay): Insets {
  const bar = overlay.browser === undefined ? 0 : titleBarHeight(width)
  const margin = overlay.background === undefined ? 0 : backdropMargin(width)
  return { top: margin + bar, right: margin, bottom: margin, left: margin }
}

const FRAME = {
  light: { bar: '#e8e8ea', border: '#d0d0d4', address: '#ffffff' },
  dark: { bar: '#2c2c2f', border: '#161618', address: '#3d3d41' }
} as const

/** The composition document for a capture of `width` × `height` CSS px; the stage is at (0, 0). */
export function overlayHtml (imageUrl: string, width: number, height: number, overlay: Overlay): { html: string, width: number, height: number } {
  const insets = overlayInsets(width, overlay)
  const stageWidth = width + insets.left + insets.right
  const stageHeight = height + insets.top + insets.bottom
  const backdrop = overlay.background !== undefined
  const bar = overlay.browser === undefined ? 0 : titleBarHeight(width)
  const radius = backdrop ? Math.round(Math.max(4, bar * 0.3)) : 0
  const dot = Math.round(bar * 0.4)
  const colors = FRAME[overlay.browser ?? 'light']
  const css = [
    'html, body { margin: 0; padding: 0; background: transparent; }',
    `#stage { position: relative; width: ${stageWidth}px; height: ${stageHeight}px; overflow: hidden; }`,
    '#backdrop, #backdrop-image { position: absolute; left: 0; top: 0; width: 100%; height: 100%; }',
    '#backdrop-image { object-fit: cover; display: none; }',
    `#window { position: absolute; left: ${insets.left}px; top: ${insets.top - bar}px; width: ${width}px; overflow: hidden;` +
      ` border-radius: ${radius}px;${backdrop ? ' box-shadow: 0 4px 24px rgba(0, 0, 0, 0.25), 0 0 0 1px rgba(0, 0, 0, 0.08);' : ''} }`,
    `#bar { box-sizing: border-box; height: ${bar}px; background: ${colors.bar}; border-bottom: 1px solid ${colors.border};` +
      ` display: flex; align-items: center; padding-left: ${Math.round(bar * 0.45)}px; gap: ${Math.round(dot * 0.6)}px; position: relative; }`,
    `.dot { width: ${dot}px; height: ${dot}px; border-radius: 50%; flex: none; }`,
    `#address { position: absolute; left: 25%; width: 50%; top: 22%; height: 56%; border-radius: ${Math.round(bar * 0.16)}px; background: ${colors.address}; }`,
    `#shot { display: block; width: ${width}px; height: ${height}px; }`
  ].join('\n')
  const frame = bar === 0
    ? ''
    : '<div id="bar"><span class="dot" style="background:#ff5f57"></span><span class="dot" style="background:#febc2e"></span>' +
      '<span class="dot" style="background:#28c840"></span><span id="address"></span></div>'
  const html = `<!doctype html><html><head><meta charset="utf-8"><style>${css}</style></head><body>` +
    `<div id="stage"><div id="backdrop"></div><img id="backdrop-image" alt=""><div id="window">${frame}` +
    `<img id="shot" alt="" src="${imageUrl}"></div></div></body></html>`
  return { html, width: stageWidth, height: stageHeight }
}

const POLL_MS = 25

/** Polls until the image is decoded (or failed), or `ms` passes; true when it has pixels. */
async function imageReady (page: Page, selector: string, ms: number, budget: Budget): Promise<boolean> {
  const until = performance.now() + ms
  for (;;) {
    const state = await page.evaluate((sel) => {
      const img = (globalThis as unknown as DomWindow).document.querySelector(sel)
      if (img === null) return 'failed'
      if (!img.complete) return 'loading'
      return img.naturalWidth > 0 ? 'ready' : 'failed'
    }, selector)
    if (state !== 'loading') return state === 'ready'
    if (performance.now() >= until) return false
    await sleep(POLL_MS, budget.signal)
  }
}

export interface OverlayStage {
  /** The page showing the composition, its viewport the size of the stage; capture it, then call close(). */
  page: Page
  /** Size of the stage, CSS px, at (0, 0). */
  width: number
  height: number
  close (): Promise<void>
}

/**
 * Opens a page showing the capture (`imageUrl`, a data: URL, drawn at `width` × `height` CSS px) with its overlay, at
 * device pixel ratio `dpr`, beside `page`. 400 EINVALOVERLAYBG when Chromium rejects the background. A background
 * image that cannot be loaded in time leaves the backdrop empty; the capture goes on.
 */
/** Opens a context for a stage of the job (ProducerContext.stageContext). */
export type StageContextOf = (options: BrowserContextOptions) => Promise<BrowserContext>

export async function openOverlayStage (
  page: Page, imageUrl: string, width: number, height: number, dpr: number, overlay: Overlay, budget: Budget,
  stageContext?: StageContextOf
): Promise<OverlayStage> {
  const stage = overlayHtml(imageUrl, width, height, overlay)
  const viewport = { width: Math.ceil(stage.width), height: Math.ceil(stage.height) }
  const browser = page.context().browser()
  // A context of our own (the pool's: behind the job's egress proxy); without a Browser (a persistent context) a page
  // of the same context has to do.
  const options = { viewport, deviceScaleFactor: dpr, javaScriptEnabled: false }
  const context = stageContext !== undefined
    ? await stageContext(options)
    : browser === null ? undefined : await browser.newContext(options)
  let stagePage: Page | undefined
  const close = async (): Promise<void> => {
    if (context !== undefined) await context.close().catch(() => {})
    else await stagePage?.close().catch(() => {})
  }
  try {
    stagePage = await (context ?? page.context()).newPage()
    if (context === undefined) await stagePage.setViewportSize(viewport)
    await stagePage.setContent(stage.html, { waitUntil: 'domcontentloaded', timeout: Math.max(1, budget.remaining()) })
    const background = overlay.background
    if (background !== undefined) {
      const accepted = await stagePage.evaluate(({ value, isUrl }) => {
        const { document } = globalThis as unknown as DomWindow
        if (isUrl) {
          const img = document.querySelector('#backdrop-image')
          if (img === null) return false
          img.src = value
          img.style.display = 'block'
          return true
        }
        const backdrop = document.querySelector('#backdrop')
        if (backdrop === null) return false
        backdrop.style.background = value
        return backdrop.style.background !== ''
      }, { value: background, isUrl: isHttpUrl(background) })
      if (!accepted) {
        throw new AppError('EINVALOVERLAYBG', {
          data: { 'screenshot.overlay.background': `The background \`${background}\` is not a valid colour, gradient or URL.` }
        })
      }
      if (isHttpUrl(background)) {
        const loaded = await imageReady(stagePage, '#backdrop-image', budget.fraction(1 / 3), budget)
        if (!loaded) {
          await stagePage.evaluate(() => {
            (globalThis as unknown as DomWindow).document.querySelector('#backdrop-image')?.style.setProperty('display', 'none')
          })
        }
      }
    }
    const shown = await within(imageReady(stagePage, '#shot', budget.remaining(), budget), budget.remaining(), budget.signal)
    if (isTimedOut(shown) || !shown) {
      throw new AppError('EBRWSRTIMEOUT', { data: { 'screenshot.overlay': 'The overlay could not be rendered in time.' } })
    }
    return { page: stagePage, width: stage.width, height: stage.height, close }
  } catch (err) {
    await close()
    throw err
  }
}
