// Loading the target in the browser: one pool slot, the page steps, the producers (docs/api.md §3.5, §3.6). The slot
// is held only for browser work; extraction and storing the files happen after it is released. Each part of the
// browser work gets its own group of options: the emulation for the context, the steps for the page, the outputs
// for the producers; the browser never sees the cache or reply options.
import type { AddressGuard } from '../net/guard.ts'
import type { BrowserPool } from '../browser/pool/types.ts'
import type { AdblockLoader } from '../adblock/index.ts'
import { loadOptionsOf } from './page-options.ts'
import { actionCapturer } from './action-capture.ts'
import type { EmulationOptions, OptionGroups, TargetOptions } from '../schemas/option-groups.ts'
import type { JobEmulation } from '../browser/emulation.ts'
import { resolveDevice } from '../schemas/devices.ts'
import { createBudget } from '../browser/page/budget.ts'
import { changesMedia, loadPage, type LoadedPage, type LoadOptions } from '../browser/steps/index.ts'
import { runProducers, type FileKind, type GeneratedFile, type ProducedValues } from '../browser/producers/index.ts'
import { isRetryable, refusalError } from '../browser/errors.ts'
import { sleep } from '../util/abort.ts'
import { currentEgress } from '../net/egress-scope.ts'

/** What rendering uses: the guard, the browser queue, the `adblock` engine, and the limits it applies in the page. */
export interface RenderDeps {
  readonly guard: Pick<AddressGuard, 'assertUrlResolvesAllowed'>
  /** The browser queue (and its early verdict); the pool fills in its own default user agent. */
  readonly browser: Pick<BrowserPool, 'run' | 'admissible'>
  readonly adblock: Pick<AdblockLoader, 'get'>
  readonly limits: { readonly maxRedirects: number, readonly maxHtmlBytes: number, readonly maxFullPageHeight: number, readonly maxResponseBytes: number }
}

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

/** The job's emulation; without a device's or a forwarded user agent, the pool sends its own default. */
export function emulationOf (emulation: EmulationOptions, headers: TargetOptions['headers']): JobEmulation {
  const preset = resolveDevice(emulation.device)
  const { 'user-agent': userAgentHeader, ...extraHTTPHeaders } = headers
  return {
    viewport: { width: emulation.viewport.width, height: emulation.viewport.height },
    deviceScaleFactor: emulation.viewport.deviceScaleFactor,
    isMobile: emulation.viewport.isMobile,
    hasTouch: emulation.viewport.hasTouch,
    // An explicit user-agent beats the device's (docs/api.md §13.13); neither: the pool's desktop one.
    userAgent: userAgentHeader ?? preset?.userAgent,
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
  deps: RenderDeps, groups: Pick<OptionGroups, 'target' | 'emulation' | 'steps' | 'outputs'>, signal: AbortSignal, deadline: number,
  timings: Record<string, number> = {}, serialize = true
): Promise<Rendered> {
  const { target, emulation, outputs } = groups
  const { guard, browser, adblock, limits } = deps
  const load: LoadOptions = loadOptionsOf(groups)
  // The target's own address is checked before queueing (docs/api.md §1.4 steps 8-9); the egress layer
  // checks it again, with everything else the page loads, on the connection actually made.
  const tg = performance.now()
  await guard.assertUrlResolvesAllowed(new URL(target.url))
  timings.guard = performance.now() - tg
  const contextEmulation = emulationOf(emulation, target.headers)
  const scope = currentEgress()
  // `adblock` (docs/browser.md#adblock): the pool filters the job's requests and runs the consent script, the
  // page steps hide what is left.
  const adblocker = emulation.adblock ? await adblock.get() : undefined
  for (let attempt = 0; ; attempt++) {
    try {
      return await browser.run(async (page, info) => {
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
        // Waits the actions' captures gave up on (a full page's lazy content), beside the steps' own.
        const loadGaveUp: string[] = []
        try {
          loaded = await loadPage(page, load, budget, {
            maxRedirects: limits.maxRedirects,
            maxHtmlBytes: limits.maxHtmlBytes,
            timings,
            serialize,
            session: info.captureSession(),
            ...(adblocker === undefined ? {} : { adblocker }),
            ...(load.actions.length === 0 ? {} : { capture: actionCapturer(info.captureSession(), limits.maxFullPageHeight, (wait) => { loadGaveUp.push(wait) }), discardPage: info.discardPage })
          })
        } catch (err) {
          assertNotRefused()
          throw err
        }
        assertNotRefused()
        const loadTime = performance.now() - t0
        const t1 = performance.now()
        const gaveUp = [...loaded.gaveUp, ...loadGaveUp]
        const { files, values } = await runProducers(outputs, {
          url: target.url,
          page,
          budget,
          loaded,
          cdp: info.captureSession(),
          maxImageHeight: limits.maxFullPageHeight,
          maxValueBytes: limits.maxResponseBytes,
          discardPage: info.discardPage,
          gaveUp: (wait) => { gaveUp.push(wait) },
          stageContext: info.stageContext
        }, timings)
        // The proxy carried this job's requests (`-proxy` in x-fetch-mode), as far as it got to carry any.
        if (scope !== undefined && info.proxied() > 0) scope.carried = true
        return { ...loaded, gaveUp, loadTime, captureTime: performance.now() - t1, files, values }
      }, { signal, deadline, emulation: contextEmulation, proxy: target.proxy, adblock: adblocker, timings, changesMedia: changesMedia(load) })
    } catch (err) {
      const backoff = 250 * 2 ** attempt
      if (!isRetryable(err) || attempt >= target.retry || Date.now() + backoff >= deadline) throw err
      await sleep(backoff, signal)
    }
  }
}
