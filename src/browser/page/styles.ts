// Styles added to a loaded page through DevTools (so they work with page scripts off): inline and linked sheets, and
// the style that stops animations. Used by the page steps (animations, inject) and by captures (code view).
import type { Page } from 'playwright-core'
import { sleep } from '../../util/abort.ts'
import type { DomWindow } from './dom.ts'

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

/**
 * Adds the style that stops animations (NO_ANIMATIONS_CSS), then finishes Web Animations that end and cancels endless
 * ones (CSS cannot reach `element.animate()`): one round trip to the page.
 */
export async function stopAnimations (page: Page): Promise<void> {
  await page.evaluate((css) => {
    const { document } = globalThis as unknown as DomWindow
    const style = document.createElement('style')
    style.textContent = css
    ;(document.head ?? document.documentElement).appendChild(style)
    for (const animation of document.getAnimations()) {
      const end = animation.effect?.getComputedTiming().endTime
      try {
        if (typeof end === 'number' && Number.isFinite(end)) animation.finish()
        else animation.cancel()
      } catch {
        animation.cancel()
      }
    }
  }, NO_ANIMATIONS_CSS)
}
