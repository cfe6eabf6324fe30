// What a page step is: one small piece of the page work of docs/api.md §3.6, run in order by loadPage (index.ts).
// Each step reads only the options it names, and says whether it has anything to do for a request, so the list of
// steps that ran is known (and can be timed) without reading their code.
import type { Page } from 'playwright-core'
import type { Adblocker } from '../../adblock/index.ts'
import type { Redirect } from '../../net/types.ts'
import type { FileExt } from '../../storage/index.ts'
import type { EmulationOptions, StepOptions, TargetOptions } from '../../schemas/option-groups.ts'
import type { PaperFormat, WaitUntil } from '../../schemas/options.ts'
import { isAppError } from '../../errors.ts'
import { abortable, throwIfAborted } from '../../util/abort.ts'
import { isTargetClosed } from '../errors.ts'
import type { NetworkTracker } from '../network-idle.ts'
import { WAIT_SHARE, type Budget } from '../page/budget.ts'
import type { PageEvaluate } from '../page/evaluate.ts'

/**
 * What the page steps read: the steps group, the target's address and timeout, and the parts of emulation that are
 * applied after the navigation (media type, animations) or decide what can run (javascript).
 */
export type LoadOptions = StepOptions & Pick<TargetOptions, 'url' | 'timeout'> & Pick<EmulationOptions, 'javascript' | 'mediaType' | 'animations'> & {
  /** `adblock`: the filters and the consent script are applied (they need StepContext.adblocker). Off when absent. */
  readonly adblock?: boolean
  /** Serialize the form fields' live values with the DOM, for a `data` rule that reads `val` (page/serialize.ts). */
  readonly formValues?: boolean
  /** Whether the page may be printed (`pdf`; unknown when absent): printing uses `print` unless `screen` is emulated. */
  readonly prints?: boolean
}

/** The main document's response, as the navigation found it. */
export interface MainResponse {
  statusCode: number
  /** Lower-case names, repeats joined by ', '. */
  headers: Record<string, string>
  /** The redirects before it, in order: each hop's status and the URL that answered with it. */
  redirects: Redirect[]
}

/** A file an action captured in the page (a screenshot, a PDF), not yet stored. */
export interface CapturedFile {
  body: Buffer
  ext: FileExt
  contentType: string
  /** Media object members beyond url, type and sizes (a screenshot's width and height). */
  details: Readonly<Record<string, number>>
}

/**
 * How the `actions` step captures the page mid-sequence, passed in by the caller (pipeline/render.ts, with the
 * producers' screenshot and print), so the steps need not know the producers.
 */
export interface ActionCapturer {
  screenshot (page: Page, shot: { fullPage: boolean, quality?: number }, budget: Budget): Promise<CapturedFile>
  pdf (page: Page, print: { format?: PaperFormat, landscape?: boolean, scale?: number }, budget: Budget): Promise<CapturedFile>
}

/** What the `actions` step recorded, in the order its actions ran (docs/firecrawl.md#actions). */
export interface ActionResults {
  screenshots: CapturedFile[]
  pdfs: CapturedFile[]
  scrapes: Array<{ url: string, html: string }>
  javascriptReturns: Array<{ type: string, value: unknown }>
}

/** One run of the steps on one page: what they share. */
export interface StepContext {
  readonly page: Page
  /** pagecast's own expressions, evaluated in the page without Playwright's utility script (page/evaluate.ts). */
  readonly evaluate: PageEvaluate
  readonly options: LoadOptions
  readonly budget: Budget
  /** Requests in flight, for the network-idle waits. */
  readonly tracker: NetworkTracker
  /** Redirects the navigation may follow. */
  readonly maxRedirects: number
  /** The caller's hook after the navigation (consent banners belong there). */
  readonly afterNavigation?: (page: Page, budget: Budget) => Promise<void>
  /** The filter engine, for `adblock` (the pool filters the requests with the same one). */
  readonly adblocker?: Adblocker
  /**
   * What was given up on: each wait that ran out (`waitUntil=load`, `network-idle`, `waitForSelector`, ...) and each
   * one the budget cut short, by name. The page is then taken as loaded, so the answer depends on how long the
   * request allowed and is not cached (docs/api.md §7).
   */
  readonly gaveUp: string[]
  /** The captures of `actions` (screenshot, pdf); without one, those actions fail with EACTION. */
  readonly capture?: ActionCapturer
  /** Marks the page as not to be reused after this job (user code or input ran in it). */
  readonly discardPage?: () => void
  /** MAX_HTML_BYTES: the most a `scrape` action's HTML, or an `executeJavascript` value's JSON, may be. */
  readonly maxHtmlBytes: number
  /** Set by the `actions` step. */
  actions?: ActionResults
  /** Set by the navigation step. */
  response?: MainResponse
  /** performance.now() by which the navigation and its waits must be over; set by the navigation step. */
  navigationDeadline?: number
}

export interface PageStep {
  /** A short name, for logs and timings. */
  readonly name: string
  /** Whether the step has anything to do for these options. */
  applies (options: LoadOptions): boolean
  /**
   * Whether these options ask the step for work only a browser does, so the request is rendered whatever
   * `prerender` says (pipeline/prerender.ts needsBrowser): `true` whenever it applies; absent, never. The parameter
   * table's `browser` notes (the docs) are held against this in test/unit/browser-needs.test.ts.
   */
  readonly needsBrowser?: true | ((options: LoadOptions) => boolean)
  run (step: StepContext): Promise<void>
}

/**
 * For steps whose failure is not an error (a wait that ran out, a selector that matched nothing usable): rethrows
 * only what must not be swallowed, i.e. an abort, an AppError, or a page or browser that went away.
 */
export function rethrowIfFatal (err: unknown, page: Page, budget: Budget): void {
  throwIfAborted(budget.signal)
  if (isAppError(err)) throw err
  if (page.isClosed()) throw err
  if (isTargetClosed(err)) throw err
}

/**
 * Runs `work` (something evaluated in the page), and when a navigation under way destroyed its context (a meta
 * refresh, a script's redirect), waits for the next document and runs it again, at most twice more.
 */
export async function acrossNavigation<T> (page: Page, budget: Budget, work: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await abortable(work(), budget.signal)
    } catch (err) {
      rethrowIfFatal(err, page, budget)
      if (attempt >= 2) throw err
      try {
        await abortable(page.waitForLoadState('domcontentloaded', { timeout: Math.max(1, budget.fraction(WAIT_SHARE)) }), budget.signal)
      } catch (waitErr) {
        rethrowIfFatal(waitErr, page, budget)
      }
    }
  }
}

/** Waits for one `waitUntil` state until `deadline` (performance.now() ms): true when met; running out is not an error. */
export async function waitForState (page: Page, state: WaitUntil, tracker: NetworkTracker, deadline: number, budget: Budget): Promise<boolean> {
  const timeout = Math.max(1, deadline - performance.now())
  try {
    switch (state) {
      case 'auto':
      case 'load':
        await abortable(page.waitForLoadState('load', { timeout }), budget.signal)
        return true
      case 'domcontentloaded':
        await abortable(page.waitForLoadState('domcontentloaded', { timeout }), budget.signal)
        return true
      case 'networkidle0':
        return await tracker.waitForIdle(0, timeout, budget.signal)
      case 'networkidle2':
        return await tracker.waitForIdle(2, timeout, budget.signal)
    }
  } catch (err) {
    rethrowIfFatal(err, page, budget)
    return false
  }
}

/** Waits for every requested `waitUntil` state at once until `deadline`; each one not met is recorded as given up. */
export async function waitForStates (step: StepContext, deadline: number): Promise<void> {
  const { page, options, tracker, budget } = step
  const met = await Promise.all(options.waitUntil.map(state => waitForState(page, state, tracker, deadline, budget)))
  met.forEach((ok, i) => { if (!ok) step.gaveUp.push(`waitUntil=${options.waitUntil[i]!}`) })
}
