// Loading the target in the browser: one pool slot, the page session, the captures (API.md §3.5, §3.6).
// The slot is held only for browser work; extraction and uploads happen after it is released.
import type { AppContext } from '../context.ts'
import type { ExtractOptions } from '../schemas/options.ts'
import type { Redirect } from '../net/types.ts'
import type { Emulation } from '../browser/emulation.ts'
import { resolveDevice, desktopUserAgent } from '../browser/devices.ts'
import { createBudget, loadPage } from '../browser/session.ts'
import { printPdf, takeScreenshot } from '../browser/capture.ts'
import { isRetryable, refusalError } from '../browser/errors.ts'
import type { Pdf, Screenshot } from '../browser/capture.ts'
import { sleep } from '../util/abort.ts'

export interface Rendered {
  url: string
  statusCode: number
  headers: Record<string, string>
  redirects: Redirect[]
  html: string
  /** ms from the start of navigation until the page was ready for extraction. */
  loadTime: number
  /** ms spent capturing (screenshot and PDF). */
  captureTime: number
  screenshot?: Screenshot
  pdf?: Pdf
}

export function emulationOf (options: ExtractOptions, chromiumVersion: string): Emulation {
  const preset = resolveDevice(options.device)
  const { 'user-agent': userAgentHeader, ...extraHTTPHeaders } = options.headers
  return {
    viewport: { width: options.viewport.width, height: options.viewport.height },
    deviceScaleFactor: options.viewport.deviceScaleFactor,
    isMobile: options.viewport.isMobile,
    hasTouch: options.viewport.hasTouch,
    // An explicit user-agent beats the device's (API.md §13.13).
    userAgent: userAgentHeader ?? preset?.userAgent ?? desktopUserAgent(chromiumVersion),
    javaScriptEnabled: options.javascript,
    colorScheme: options.colorScheme,
    reducedMotion: !options.animations,
    extraHTTPHeaders
  }
}

export async function renderPage (ctx: AppContext, options: ExtractOptions, signal: AbortSignal, deadline: number): Promise<Rendered> {
  // The target's own address is checked before queueing (API.md §1.4 steps 8-9); the egress layer
  // checks it again, with everything else the page loads, on the connection actually made.
  await ctx.guard.assertUrlResolvesAllowed(new URL(options.url))
  const emulation = emulationOf(options, await ctx.browser.chromiumVersion())
  for (let attempt = 0; ; attempt++) {
    try {
      return await ctx.browser.run(async (page, info) => {
        const budget = createBudget(Math.max(1, deadline - Date.now()), info.signal)
        const t0 = performance.now()
        // A main-frame navigation the egress layer refused (any redirect hop, meta refresh or script
        // navigation) is the request's failure, whatever net error the page saw; refused sub-requests
        // only fail inside the page.
        const assertNotRefused = (): void => {
          const refused = info.refusedNavigation()
          if (refused !== undefined) throw refusalError(refused)
        }
        let loaded
        try {
          loaded = await loadPage(page, options, budget, { maxRedirects: ctx.config.maxRedirects })
        } catch (err) {
          assertNotRefused()
          throw err
        }
        assertNotRefused()
        const loadTime = performance.now() - t0
        const t1 = performance.now()
        const screenshot = options.screenshot === false ? undefined : await takeScreenshot(page, options.screenshot, budget, { contentType: loaded.headers['content-type'], maxImageHeight: ctx.config.maxFullPageHeight, session: info.captureSession() })
        const pdf = options.pdf === false ? undefined : await printPdf(page, options.pdf, budget, info.captureSession())
        return {
          ...loaded,
          loadTime,
          captureTime: performance.now() - t1,
          ...(screenshot === undefined ? {} : { screenshot }),
          ...(pdf === undefined ? {} : { pdf })
        }
      }, { signal, emulation })
    } catch (err) {
      const backoff = 250 * 2 ** attempt
      if (!isRetryable(err) || attempt >= options.retry || Date.now() + backoff >= deadline) throw err
      await sleep(backoff, signal)
    }
  }
}
