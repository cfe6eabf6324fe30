// Styles added to a loaded page through DevTools (so they work with page scripts off): the user's inline and linked
// sheets (`styles`, elements of the page from then on), and pagecast's own (the style that stops animations, the
// cosmetic filters), which are constructed sheets adopted by the document: they apply like any, but are no element of
// the DOM, so no serialization of the page (`/html`, `outerHTML`, an `evaluate`) carries them. Used by the page
// steps (animations, inject, adblock).
import type { Page } from 'playwright-core'
import { sleep } from '../../util/abort.ts'
import type { DomWindow } from './dom.ts'
import type { PageEvaluate } from './evaluate.ts'

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

/** Adds a `<style>` with `css` (the user's `styles`); works with page scripts off (the insertion runs through DevTools). */
export async function addInlineStyle (page: Page, css: string): Promise<void> {
  await page.evaluate((text) => {
    const { document } = globalThis as unknown as DomWindow
    const style = document.createElement('style')
    style.textContent = text
    ;(document.head ?? document.documentElement).appendChild(style)
  }, css)
}

const POLL_MS = 50

/** Where a linked sheet's load or error is noted (a property of the element, so never in its markup). */
const LINK_DONE = 'pagecast.linkDone'

/**
 * Links a stylesheet (the user's `styles`: a plain `<link>`, nothing of ours on it) and waits until it has loaded
 * or failed, or `timeoutMs` passes. Polled from here through a handle on the element, since the element's load/error
 * events need page scripts.
 */
export async function addLinkedStyle (page: Page, href: string, timeoutMs: number, signal: AbortSignal): Promise<void> {
  const link = await page.evaluateHandle(({ url, done }) => {
    const { document } = globalThis as unknown as DomWindow
    const element = document.createElement('link')
    const key = Symbol.for(done)
    const finish = (): void => { (element as unknown as Record<symbol, boolean>)[key] = true }
    element.rel = 'stylesheet'
    element.href = url
    element.addEventListener('load', finish)
    element.addEventListener('error', finish)
    ;(document.head ?? document.documentElement).appendChild(element)
    return element
  }, { url: href, done: LINK_DONE })
  try {
    const until = performance.now() + timeoutMs
    while (performance.now() < until) {
      const done = await link.evaluate((element, key) => {
        return element.sheet !== null || (element as unknown as Record<symbol, boolean>)[Symbol.for(key)] === true
      }, LINK_DONE)
      if (done) return
      await sleep(Math.min(POLL_MS, Math.max(0, until - performance.now())), signal)
    }
  } finally {
    await link.dispose().catch(() => {})
  }
}

/**
 * Adds the style that stops animations (NO_ANIMATIONS_CSS, pagecast's own: an adopted sheet), then finishes Web
 * Animations that end and cancels endless ones (CSS cannot reach `element.animate()`): one evaluation.
 */
export const STOP_ANIMATIONS_EXPRESSION = `(() => {
  const sheet = new CSSStyleSheet();
  sheet.replaceSync(${JSON.stringify(NO_ANIMATIONS_CSS)});
  document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
  for (const animation of document.getAnimations()) {
    const end = animation.effect?.getComputedTiming().endTime;
    try {
      if (typeof end === 'number' && Number.isFinite(end)) animation.finish();
      else animation.cancel();
    } catch {
      animation.cancel();
    }
  }
})()`

export async function stopAnimations (evaluate: PageEvaluate): Promise<void> {
  await evaluate(STOP_ANIMATIONS_EXPRESSION)
}
