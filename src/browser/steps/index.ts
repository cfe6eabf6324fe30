// The page work between the pool handing a page over (emulation already applied) and the producers, as an ordered
// list of steps in docs/api.md §3.6's browser order. A new piece of page work is one entry here and one file.
//
// Nothing here waits on the page's own timers or event listeners: with `javascript=false` those never run, so every
// wait is driven from this side (Playwright waits, or polling). Waits that run out are not errors (docs/api.md
// §13.22); a navigation that never committed is EBRWSRTIMEOUT.
import type { Page } from 'playwright-core'
import { DEFAULT_MAX_HTML_BYTES, DEFAULT_MAX_REDIRECTS } from '../../config.ts'
import { AppError } from '../../errors.ts'
import { throwIfAborted } from '../../util/abort.ts'
import { trackNetwork } from '../network-idle.ts'
import type { Budget } from '../page/budget.ts'
import { PageCdpSession } from '../page/cdp-session.ts'
import { evaluatorOf, type PageEvaluate } from '../page/evaluate.ts'
import { newValueMark, serializePage, type SerializeOptions } from '../page/serialize.ts'
import { CONSENT_STYLE_SELECTOR, type Adblocker } from '../../adblock/index.ts'
import { actionsStep } from './actions.ts'
import { adblockStep } from './adblock.ts'
import { afterNavigationStep } from './after-navigation.ts'
import { animationsStep } from './animations.ts'
import { injectStep } from './inject.ts'
import { interactStep } from './interact.ts'
import { mediaTypeStep } from './media-type.ts'
import { navigateStep } from './navigate.ts'
import { settleStep } from './settle.ts'
import { acrossNavigation, type ActionCapturer, type ActionResults, type LoadOptions, type MainResponse, type PageStep, type StepContext } from './step.ts'
import { waitForSelectorStep } from './wait-for-selector.ts'
import { waitForTimeoutStep } from './wait-for-timeout.ts'

export type { ActionCapturer, ActionResults, CapturedFile, LoadOptions, MainResponse, PageStep } from './step.ts'

/** Whether loading with `options` emulates a CSS media type on the page (the pool must clear it for the next job). */
export function changesMedia (options: LoadOptions): boolean {
  return mediaTypeStep.applies(options)
}

/** The steps, in the order they run. */
export const PAGE_STEPS: readonly PageStep[] = Object.freeze([
  navigateStep,
  afterNavigationStep,
  waitForSelectorStep,
  waitForTimeoutStep,
  mediaTypeStep,
  animationsStep,
  injectStep,
  interactStep,
  settleStep,
  adblockStep,
  // Last: the actions run on the page as every other step left it, in their own order.
  actionsStep
])

export interface LoadedPage extends MainResponse {
  /** The page's URL once everything ran (after redirects and any client-side navigation). */
  url: string
  /** The waits given up on (StepContext.gaveUp): empty when every one was met. */
  gaveUp: string[]
  /**
   * The live DOM serialized (`page.content()`) without what pagecast put in it (page/serialize.ts). When a rule
   * reads `val`, each form field carries its live value under the attribute `valueMark`, which is not the page's.
   */
  html: string
  /** The attribute holding the live form values in `html`, when they were asked for (`LoadOptions.formValues`). */
  valueMark?: string
  /** What `actions` captured, when it ran. */
  actions?: ActionResults
}

export interface LoadPageOptions {
  /** Runs right after the navigation, before `waitForSelector` (docs/api.md §3.6: consent banners are dismissed here). */
  afterNavigation?: (page: Page, budget: Budget) => Promise<void>
  /** Redirects the navigation may follow (MAX_REDIRECTS, docs/api.md §3.1 EMAXREDIRECTS); 10 by default. */
  maxRedirects?: number
  /** The filter engine, for a page loaded with `adblock` on (the pool job must have it too). */
  adblocker?: Adblocker
  /** Where each step that ran writes its duration (ms) under its name, and the DOM's serialization under `serialize`. */
  timings?: Record<string, number>
  /** False when nobody reads the DOM (a capture with `meta=false` and no rules): `html` is then empty. Default true. */
  serialize?: boolean
  /** MAX_HTML_BYTES: a DOM whose serialization is larger is refused in the page (400 EINVALURL). */
  maxHtmlBytes?: number
  /** How `actions` captures screenshots and PDFs mid-sequence (StepContext.capture). */
  capture?: ActionCapturer
  /** Marks the page as not to be reused (the `actions` step calls it before typing or running a script). */
  discardPage?: () => void
  /**
   * The page's CDP session, which pagecast's own expressions are evaluated through (page/evaluate.ts): the pool's,
   * kept with the page. Without one, a session is opened for this load and goes with the page: detaching it would
   * drop the page's emulated media type with it (page/cdp-session.ts).
   */
  session?: PageCdpSession
}

/**
 * The DOM serialized (page/serialize.ts), retried once the page settles if a client-side navigation is under way. The
 * HTML is measured in the page: one over `maxBytes` never leaves it, and is refused as the plain fetch refuses such
 * a body.
 */
async function serialize (page: Page, evaluate: PageEvaluate, budget: Budget, options: SerializeOptions): Promise<string> {
  const content = await acrossNavigation(page, budget, async () => await serializePage(evaluate, options))
  if (content.fits) return content.text
  throw new AppError('EINVALURL', { data: { url: `The rendered page's HTML is over MAX_HTML_BYTES (${options.maxBytes} bytes).` } })
}

/**
 * How the DOM of a page loaded with `options` is serialized: without the consent script's styles when it ran
 * (`adblock` with JavaScript), with the live form values when a rule reads `val`.
 */
function serializeOptions (options: LoadOptions, adblocker: Adblocker | undefined, maxBytes: number): SerializeOptions {
  const consent = options.adblock === true && adblocker !== undefined && options.javascript
  return {
    maxBytes,
    ...(consent ? { omit: CONSENT_STYLE_SELECTOR } : {}),
    ...(options.formValues === true ? { valueMark: newValueMark() } : {})
  }
}

/**
 * Loads `options.url` into `page` and runs the steps that apply, then serializes the DOM. The page must come with its
 * emulation applied. Navigation failures are mapped by browser/errors.ts.
 */
export async function loadPage (
  page: Page, options: LoadOptions, budget: Budget,
  { afterNavigation, maxRedirects = DEFAULT_MAX_REDIRECTS, adblocker, timings, serialize: serializes = true, maxHtmlBytes = DEFAULT_MAX_HTML_BYTES, capture, discardPage, session }: LoadPageOptions = {}
): Promise<LoadedPage> {
  throwIfAborted(budget.signal)
  const cdp = session ?? new PageCdpSession(page)
  const tracker = trackNetwork(page)
  const step: StepContext = {
    page,
    evaluate: evaluatorOf(cdp),
    options,
    budget,
    tracker,
    maxRedirects,
    maxHtmlBytes,
    gaveUp: [],
    ...(capture === undefined ? {} : { capture }),
    ...(discardPage === undefined ? {} : { discardPage }),
    ...(afterNavigation === undefined ? {} : { afterNavigation }),
    ...(adblocker === undefined ? {} : { adblocker })
  }
  try {
    for (const pageStep of PAGE_STEPS) {
      if (!pageStep.applies(options)) continue
      const t = performance.now()
      await pageStep.run(step)
      if (timings !== undefined) timings[pageStep.name] = performance.now() - t
    }
    throwIfAborted(budget.signal)
    const response = step.response
    if (response === undefined) throw new Error('the navigation step did not run')
    const actions = step.actions === undefined ? {} : { actions: step.actions }
    if (!serializes) return { url: page.url(), ...response, gaveUp: step.gaveUp, html: '', ...actions }
    const t = performance.now()
    const how = serializeOptions(options, adblocker, maxHtmlBytes)
    const html = await serialize(page, step.evaluate, budget, how)
    if (timings !== undefined) timings.serialize = performance.now() - t
    return { url: page.url(), ...response, gaveUp: step.gaveUp, html, ...actions, ...(how.valueMark === undefined ? {} : { valueMark: how.valueMark }) }
  } finally {
    tracker.dispose()
  }
}
