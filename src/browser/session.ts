// Everything done to a page between the pool handing it over (emulation already applied) and extraction or
// capture, in API.md §3.6's browser order: navigate; (consent banners: the caller's hook); waitForSelector,
// waitForTimeout; media type and animation style; inject modules, scripts and styles; click, scroll; for
// `waitUntil=auto` the network-idle wait. Waits that run out are not errors (API.md §13.22); a navigation that
// never committed is EBRWSRTIMEOUT.
//
// Nothing here waits on the page's own timers or event listeners: with `javascript=false` those never run, so every
// wait is driven from this side (Playwright waits, or polling).
import type { Page, Response } from 'playwright-core'
import type { ExtractOptions, WaitUntil } from '../schemas/options.ts'
import type { Redirect } from '../net/types.ts'
import { AppError, isAppError } from '../errors.ts'
import { DEFAULT_MAX_REDIRECTS } from '../config.ts'
import { abortReason, abortable, isTimedOut, sleep, throwIfAborted, within } from '../util/abort.ts'
import { isHttpUrl } from '../util/url.ts'
import { isTargetClosed, toBrowserError, tooManyRedirects } from './errors.ts'
import { trackNetwork } from './network-idle.ts'
import type { NetworkTracker } from './network-idle.ts'

// --- page-side types

// Callbacks given to page.evaluate run in the browser. The project compiles without lib.dom, so these describe the
// part of the DOM that the callbacks of this folder touch; a callback starts with
// `const win = globalThis as unknown as DomWindow`.
export interface DomStyle {
  background: string
  backgroundColor: string
  display: string
  setProperty (name: string, value: string): void
}

export interface DomElement {
  textContent: string | null
  style: DomStyle
  dataset: Record<string, string | undefined>
  scrollHeight: number
  appendChild (child: DomElement): void
  addEventListener (type: string, listener: () => void): void
  getBoundingClientRect (): { left: number, top: number, width: number, height: number }
  getClientRects (): { length: number }
  scrollIntoView (): void
  /** <link> */
  rel: string
  href: string
  sheet: unknown
  /** <img> */
  src: string
  complete: boolean
  naturalWidth: number
}

export interface DomAnimation {
  effect: { getComputedTiming (): { endTime?: number | string } } | null
  finish (): void
  cancel (): void
}

export interface DomDocument {
  head: DomElement | null
  body: DomElement | null
  documentElement: DomElement
  contentType: string
  images: ArrayLike<DomElement>
  createElement (tag: string): DomElement
  querySelector (selector: string): DomElement | null
  getAnimations (): DomAnimation[]
  open (): void
  write (html: string): void
  close (): void
}

export interface DomWindow {
  document: DomDocument
  devicePixelRatio: number
  innerWidth: number
  innerHeight: number
  scrollX: number
  scrollY: number
  screen: { width: number, height: number, orientation?: { type: string, angle: number } }
  scrollTo (x: number, y: number): void
  getComputedStyle (element: DomElement): DomStyle
}

// --- budget

/** The time one request has left, shared by every browser step. */
export interface Budget {
  /** Aborted when the request is given up (deadline, client gone); steps stop with its reason. */
  readonly signal: AbortSignal
  /** `performance.now()` value at which the budget is spent. */
  readonly deadline: number
  /** ms left, never negative. */
  remaining (): number
  /** `f` of the ms left (e.g. ⅔ for a navigation), never negative. */
  fraction (f: number): number
}

export function createBudget (timeoutMs: number, signal: AbortSignal): Budget {
  const deadline = performance.now() + Math.max(0, timeoutMs)
  const remaining = (): number => Math.max(0, deadline - performance.now())
  return {
    signal,
    deadline,
    remaining,
    fraction: (f: number) => remaining() * f
  }
}

/** Share of the remaining budget a navigation, and each later wait, may use (API.md §3.6). */
export const WAIT_SHARE = 2 / 3
/**
 * For steps whose failure is not an error (a wait that ran out, a selector that matched nothing usable): rethrows
 * only what must not be swallowed, i.e. an abort, an AppError, or a page or browser that went away.
 */
function rethrowIfFatal (err: unknown, page: Page, budget: Budget): void {
  throwIfAborted(budget.signal)
  if (isAppError(err)) throw err
  if (page.isClosed()) throw err
  if (isTargetClosed(err)) throw err
}

// --- navigation

export interface LoadedPage {
  /** The page's URL once everything ran (after redirects and any client-side navigation). */
  url: string
  /** Status of the main document's final response. */
  statusCode: number
  /** Headers of that response: lower-case names, repeats joined by ', '. */
  headers: Record<string, string>
  /** The redirects before it, in order: each hop's status and the URL that answered with it. */
  redirects: Redirect[]
  /** The live DOM serialized (`page.content()`). */
  html: string
}

export interface LoadPageOptions {
  /** Runs right after the navigation, before `waitForSelector` (API.md §3.6: consent banners are dismissed here). */
  afterNavigation?: (page: Page, budget: Budget) => Promise<void>
  /** Redirects the navigation may follow (MAX_REDIRECTS, docs/api.md §3.1 EMAXREDIRECTS); 10 by default. */
  maxRedirects?: number
}

async function redirectChain (response: Response): Promise<Redirect[]> {
  const chain: Redirect[] = []
  let request = response.request().redirectedFrom()
  while (request !== null) {
    const hop = await request.response()
    chain.unshift({ statusCode: hop?.status() ?? 0, url: request.url() })
    request = request.redirectedFrom()
  }
  return chain
}

async function responseHeaders (response: Response): Promise<Record<string, string>> {
  const headers: Record<string, string> = {}
  for (const { name, value } of await response.headersArray()) {
    const key = name.toLowerCase()
    headers[key] = headers[key] === undefined ? value : `${headers[key]}, ${value}`
  }
  return headers
}

/** Waits for one `waitUntil` state until `deadline` (performance.now() ms); running out is not an error. */
async function waitForState (page: Page, state: WaitUntil, tracker: NetworkTracker, deadline: number, budget: Budget): Promise<void> {
  const timeout = Math.max(1, deadline - performance.now())
  try {
    switch (state) {
      case 'auto':
      case 'load':
        await abortable(page.waitForLoadState('load', { timeout }), budget.signal)
        return
      case 'domcontentloaded':
        await abortable(page.waitForLoadState('domcontentloaded', { timeout }), budget.signal)
        return
      case 'networkidle0':
        await tracker.waitForIdle(0, timeout, budget.signal)
        return
      case 'networkidle2':
        await tracker.waitForIdle(2, timeout, budget.signal)
    }
  } catch (err) {
    rethrowIfFatal(err, page, budget)
  }
}

/** Navigates until the main document commits; EBRWSRTIMEOUT if it does not before `deadline` (performance.now() ms). */
async function navigate (page: Page, url: string, maxRedirects: number, deadline: number, budget: Budget): Promise<Response> {
  const timeout = (): number => Math.max(1, deadline - performance.now())
  let response: Response | null
  try {
    response = await abortable(page.goto(url, { waitUntil: 'commit', timeout: timeout() }), budget.signal)
    // A page already showing this document (other fragment) navigates within it, with no response: load it afresh.
    if (response === null) response = await abortable(page.reload({ waitUntil: 'commit', timeout: timeout() }), budget.signal)
  } catch (err) {
    if (budget.signal.aborted) throw abortReason(budget.signal)
    throw toBrowserError(err, 'navigation', { url, maxRedirects })
  }
  if (response === null) throw new AppError('EFATAL', { cause: new Error(`navigation to ${url} gave no response`) })
  return response
}

// --- after the navigation

/**
 * Stops CSS animations and transitions at their end state: durations and delays become 0 (finite animations jump to
 * their last frame, infinite ones run once), smooth scrolling is off.
 */
export const NO_ANIMATIONS_CSS = [
  '*, *::before, *::after, ::backdrop {',
  '  animation-duration: 0s !important; animation-delay: 0s !important; animation-iteration-count: 1 !important;',
  '  transition-duration: 0s !important; transition-delay: 0s !important;',
  '  scroll-behavior: auto !important; caret-color: transparent !important;',
  '}'
].join('\n')

/** Adds a `<style>` with `css`; works with page scripts off (the insertion runs through DevTools). */
export async function addInlineStyle (page: Page, css: string): Promise<void> {
  await page.evaluate((text) => {
    const { document } = globalThis as unknown as DomWindow
    const style = document.createElement('style')
    style.textContent = text
    ;(document.head ?? document.documentElement).appendChild(style)
  }, css)
}

const POLL_MS = 50

/**
 * Links a stylesheet and waits until it has loaded or failed, or `timeoutMs` passes. Polled from here, since the
 * element's load/error events need page scripts.
 */
export async function addLinkedStyle (page: Page, href: string, timeoutMs: number, signal: AbortSignal): Promise<void> {
  const marker = `pc-${Math.random().toString(36).slice(2)}`
  await page.evaluate(({ url, id }) => {
    const { document } = globalThis as unknown as DomWindow
    const link = document.createElement('link')
    link.rel = 'stylesheet'
    link.href = url
    link.dataset.pagecast = id
    link.addEventListener('load', () => { link.dataset.pagecastDone = '1' })
    link.addEventListener('error', () => { link.dataset.pagecastDone = '1' })
    ;(document.head ?? document.documentElement).appendChild(link)
  }, { url: href, id: marker })
  const until = performance.now() + timeoutMs
  while (performance.now() < until) {
    const done = await page.evaluate((id) => {
      const { document } = globalThis as unknown as DomWindow
      const link = document.querySelector(`link[data-pagecast="${id}"]`)
      return link === null || link.sheet !== null || link.dataset.pagecastDone === '1'
    }, marker)
    if (done) return
    await sleep(Math.min(POLL_MS, Math.max(0, until - performance.now())), signal)
  }
}

/** Finishes Web Animations that end and cancels endless ones (CSS cannot reach `element.animate()`). */
async function settleAnimations (page: Page): Promise<void> {
  await page.evaluate(() => {
    const { document } = globalThis as unknown as DomWindow
    for (const animation of document.getAnimations()) {
      const end = animation.effect?.getComputedTiming().endTime
      try {
        if (typeof end === 'number' && Number.isFinite(end)) animation.finish()
        else animation.cancel()
      } catch {
        animation.cancel()
      }
    }
  })
}

async function inject (page: Page, options: ExtractOptions, budget: Budget): Promise<void> {
  const deadline = performance.now() + budget.fraction(WAIT_SHARE)
  const left = (): number => Math.max(0, deadline - performance.now())
  const run = async (step: () => Promise<void>): Promise<void> => {
    if (left() <= 0) return
    try {
      const outcome = await within(step(), left(), budget.signal)
      if (isTimedOut(outcome)) return
    } catch (err) {
      // A resource that does not load or a script that throws is skipped; the request goes on.
      rethrowIfFatal(err, page, budget)
    }
  }
  // Scripts cannot run with JavaScript off; styles still apply.
  if (options.javascript) {
    for (const source of options.modules) {
      await run(async () => {
        await page.addScriptTag(isHttpUrl(source) ? { url: source.trim(), type: 'module' } : { content: source, type: 'module' })
      })
    }
    for (const source of options.scripts) {
      await run(async () => {
        await page.addScriptTag(isHttpUrl(source) ? { url: source.trim() } : { content: source })
      })
    }
  }
  for (const source of options.styles) {
    await run(() => isHttpUrl(source) ? addLinkedStyle(page, source.trim(), left(), budget.signal) : addInlineStyle(page, source))
  }
}

async function clickAll (page: Page, options: ExtractOptions, budget: Budget): Promise<void> {
  for (const selector of options.click) {
    const timeout = Math.min(options.timeout / 11, budget.fraction(WAIT_SHARE))
    if (timeout < 1) return
    try {
      await abortable(page.locator(selector).first().click({ timeout }), budget.signal)
    } catch (err) {
      // Missing, hidden or covered: skipped.
      rethrowIfFatal(err, page, budget)
    }
  }
}

async function scrollTo (page: Page, selector: string, options: ExtractOptions, budget: Budget): Promise<void> {
  const timeout = Math.min(options.timeout / 11, budget.fraction(WAIT_SHARE))
  if (timeout < 1) return
  try {
    await abortable(page.locator(selector).first().evaluate((element) => element.scrollIntoView(), undefined, { timeout }), budget.signal)
  } catch (err) {
    rethrowIfFatal(err, page, budget)
  }
}

/** `page.content()`, retried once the page settles if a client-side navigation is under way. */
async function serialize (page: Page, budget: Budget): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await abortable(page.content(), budget.signal)
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

/**
 * Loads `options.url` into `page` and runs the steps of API.md §3.6 up to (not including) extraction and capture.
 * The page must come with its emulation applied. Throws EBRWSRTIMEOUT when the navigation never commits, EINVALURL
 * when the target cannot be reached, EMAXREDIRECTS past `maxRedirects` redirects; other navigation failures as
 * errors.ts maps them.
 */
export async function loadPage (
  page: Page, options: ExtractOptions, budget: Budget, { afterNavigation, maxRedirects = DEFAULT_MAX_REDIRECTS }: LoadPageOptions = {}
): Promise<LoadedPage> {
  throwIfAborted(budget.signal)
  const tracker = trackNetwork(page)
  try {
    // The navigation gets ⅔ of the budget: to commit, then (what is left of it) for the requested states at once.
    const deadline = performance.now() + budget.fraction(WAIT_SHARE)
    const response = await navigate(page, options.url, maxRedirects, deadline, budget)
    const redirects = await redirectChain(response)
    if (redirects.length > maxRedirects) throw tooManyRedirects(options.url, maxRedirects)
    const statusCode = response.status()
    const headers = await responseHeaders(response)
    await Promise.all(options.waitUntil.map(state => waitForState(page, state, tracker, deadline, budget)))
    if (afterNavigation !== undefined) await afterNavigation(page, budget)

    if (options.waitForSelector !== undefined) {
      const timeout = budget.fraction(WAIT_SHARE)
      if (timeout >= 1) {
        try {
          await abortable(page.locator(options.waitForSelector).first().waitFor({ state: 'visible', timeout }), budget.signal)
        } catch (err) {
          // Giving up is not an error (API.md §3.6).
          rethrowIfFatal(err, page, budget)
        }
      }
    }
    if (options.waitForTimeout !== undefined && options.waitForTimeout > 0) {
      await sleep(Math.min(options.waitForTimeout, budget.fraction(WAIT_SHARE)), budget.signal)
    }

    await page.emulateMedia({ media: options.mediaType })
    if (!options.animations) {
      await addInlineStyle(page, NO_ANIMATIONS_CSS)
      await settleAnimations(page)
    }
    await inject(page, options, budget)

    const before = page.url()
    await clickAll(page, options, budget)
    if (options.scroll !== undefined) await scrollTo(page, options.scroll, options, budget)
    if (page.url().split('#')[0] !== before.split('#')[0]) {
      // A click navigated: the new document gets the requested states too.
      const until = performance.now() + budget.fraction(WAIT_SHARE)
      await Promise.all(options.waitUntil.map(state => waitForState(page, state, tracker, until, budget)))
    }
    if (options.waitUntil.includes('auto')) {
      const timeout = budget.fraction(WAIT_SHARE)
      if (timeout >= 1) await tracker.waitForIdle(2, timeout, budget.signal)
    }

    throwIfAborted(budget.signal)
    return {
      url: page.url(),
      statusCode,
      headers,
      redirects,
      html: await serialize(page, budget)
    }
  } finally {
    tracker.dispose()
  }
}
