// Loading the target in the browser: one pool slot, the page steps, the producers (docs/api.md §3.5, §3.6). The slot
// is held only for browser work; extraction and storing the files happen after it is released. Each part of the
// browser work gets its own group of options: the emulation for the context, the steps for the page, the outputs
// for the producers; the browser never sees the cache or reply options.
import type { AppContext } from '../context.ts'
import type { ExtractOptions } from '../schemas/options.ts'
import { loadOptionsOf } from './page-options.ts'
import type { EmulationOptions, TargetOptions } from '../schemas/option-groups.ts'
import { groupOptions } from '../schemas/option-groups.ts'
import type { Emulation } from '../browser/emulation.ts'
import { resolveDevice, desktopUserAgent } from '../browser/devices.ts'
import { createBudget } from '../browser/page/budget.ts'
import { changesMedia, loadPage, type LoadedPage, type LoadOptions } from '../browser/steps/index.ts'
import { runProducers, type FileKind, type GeneratedFile, type ProducedValues } from '../browser/producers/index.ts'
import { isRetryable, refusalError } from '../browser/errors.ts'
import { sleep } from '../util/abort.ts'
import { currentEgress } from '../net/egress-scope.ts'

export interface Rendered extends LoadedPage {
  /** ms from the start of navigation until the page was ready for extraction. */
  loadTime: number
  /** ms spent in the producers (captures). */
  captureTime: number
  /** The producers' files, by field, in the order they ran. */
  files: Partial<Record<FileKind, GeneratedFile>>
  /** The value producers' values (the `evaluate` results of `data` rules, the outcome of `function`). */
  values: Partial<ProducedValues>
}

export function emulationOf (emulation: EmulationOptions, headers: TargetOptions['headers'], chromiumVersion: string): Emulation {
  const preset = resolveDevice(emulation.device)
  const { 'user-agent': userAgentHeader, ...extraHTTPHeaders } = headers
  return {
    viewport: { width: emulation.viewport.width, height: emulation.viewport.height },
    deviceScaleFactor: emulation.viewport.deviceScaleFactor,
    isMobile: emulation.viewport.isMobile,
    hasTouch: emulation.viewport.hasTouch,
    // An explicit user-agent beats the device's (docs/api.md §13.13).
    userAgent: userAgentHeader ?? preset?.userAgent ?? desktopUserAgent(chromiumVersion),
    javaScriptEnabled: emulation.javascript,
    colorScheme: emulation.colorScheme,
    reducedMotion: !emulation.animations,
    extraHTTPHeaders
  }
}

/**
 * Renders the target for one computation. `timings` gets the parts of the render (ms, for server-timing): `guard`,
 * the pool's `queue`, `lease` and `prepare`, one entry per page step that ran, `serialize`, and the producers' parts
 * (runProducers: `capture`, `print`, and each producer's own time under its field); their total is
 * `Rendered.captureTime`. With `serialize` false the page's HTML is not read (`html` is empty): nothing needs it.
 */
export async function renderPage (
  ctx: AppContext, options: ExtractOptions, signal: AbortSignal, deadline: number, timings: Record<string, number> = {},
  serialize = true
): Promise<Rendered> {
  const groups = groupOptions(options)
  const { target, emulation, outputs } = groups
  const load: LoadOptions = loadOptionsOf(groups)
  // The target's own address is checked before queueing (docs/api.md §1.4 steps 8-9); the egress layer
  // checks it again, with everything else the page loads, on the connection actually made.
  const tg = performance.now()
  await ctx.guard.assertUrlResolvesAllowed(new URL(target.url))
  timings.guard = performance.now() - tg
  const contextEmulation = emulationOf(emulation, target.headers, await ctx.browser.chromiumVersion())
  const scope = currentEgress()
  // `adblock` (docs/browser.md#adblock): the pool filters the job's requests and runs the consent script, the
  // page steps hide what is left.
  const adblocker = emulation.adblock ? await ctx.adblock.get() : undefined
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
        let loaded: LoadedPage
        try {
          loaded = await loadPage(page, load, budget, {
            maxRedirects: ctx.config.maxRedirects,
            maxHtmlBytes: ctx.config.maxHtmlBytes,
            timings,
            serialize,
            ...(adblocker === undefined ? {} : { adblocker })
          })
        } catch (err) {
          assertNotRefused()
          throw err
        }
        assertNotRefused()
        const loadTime = performance.now() - t0
        const t1 = performance.now()
        const gaveUp = [...loaded.gaveUp]
        const { files, values } = await runProducers(outputs, {
          url: target.url,
          page,
          budget,
          loaded,
          cdp: info.captureSession(),
          maxImageHeight: ctx.config.maxFullPageHeight,
          maxValueBytes: ctx.config.maxResponseBytes,
          discardPage: info.discardPage,
          gaveUp: (wait) => { gaveUp.push(wait) },
          stageContext: info.stageContext
        }, timings)
        // The proxy carried this job's requests (`-proxy` in x-fetch-mode), as far as it got to carry any.
        if (scope !== undefined && info.proxied() > 0) scope.carried = true
        return { ...loaded, gaveUp, loadTime, captureTime: performance.now() - t1, files, values }
      }, { signal, emulation: contextEmulation, proxy: target.proxy, adblock: adblocker, timings, changesMedia: changesMedia(load) })
    } catch (err) {
      const backoff = 250 * 2 ** attempt
      if (!isRetryable(err) || attempt >= target.retry || Date.now() + backoff >= deadline) throw err
      await sleep(backoff, signal)
    }
  }
}
