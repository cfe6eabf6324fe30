// Step: `click` each selector in order, then `scroll` one into view (docs/api.md §3.6). Each waits at most 1/11 of
// `timeout`; a missing, hidden or covered element is skipped. When the interaction took the page to another
// document, that document gets the requested `waitUntil` states too.
import type { Page } from 'playwright-core'
import { abortable } from '../../util/abort.ts'
import { WAIT_SHARE, type Budget } from '../page/budget.ts'
import { rethrowIfFatal, waitForState, type LoadOptions, type PageStep } from './step.ts'

/** The wait each click or scroll may use. */
function actionTimeout (options: LoadOptions, budget: Budget): number {
  return Math.min(options.timeout / 11, budget.fraction(WAIT_SHARE))
}

async function clickAll (page: Page, options: LoadOptions, budget: Budget): Promise<void> {
  for (const selector of options.click) {
    const timeout = actionTimeout(options, budget)
    if (timeout < 1) return
    try {
      await abortable(page.locator(selector).first().click({ timeout }), budget.signal)
    } catch (err) {
      rethrowIfFatal(err, page, budget)
    }
  }
}

async function scrollTo (page: Page, selector: string, options: LoadOptions, budget: Budget): Promise<void> {
  const timeout = actionTimeout(options, budget)
  if (timeout < 1) return
  try {
    await abortable(page.locator(selector).first().evaluate((element) => element.scrollIntoView(), undefined, { timeout }), budget.signal)
  } catch (err) {
    rethrowIfFatal(err, page, budget)
  }
}

const documentOf = (url: string): string => url.split('#')[0] ?? url

export const interactStep: PageStep = {
  name: 'interact',
  // Always: a page may also move to another document by itself while the earlier steps ran.
  applies: () => true,
  async run ({ page, options, budget, tracker }) {
    const before = page.url()
    await clickAll(page, options, budget)
    if (options.scroll !== undefined) await scrollTo(page, options.scroll, options, budget)
    if (documentOf(page.url()) !== documentOf(before)) {
      const until = performance.now() + budget.fraction(WAIT_SHARE)
      await Promise.all(options.waitUntil.map(state => waitForState(page, state, tracker, until, budget)))
    }
  }
}
