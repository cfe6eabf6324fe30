// Step: `click` each selector in order, then `scroll` one into view (docs/api.md §3.6). Each waits at most 1/11 of
// `timeout`; a missing, hidden or covered element is skipped. When the interaction took the page to another
// document, that document gets the requested `waitUntil` states too.
import { abortable } from '../../util/abort.ts'
import { WAIT_SHARE, type Budget } from '../page/budget.ts'
import { rethrowIfFatal, waitForStates, type LoadOptions, type PageStep, type StepContext } from './step.ts'

/** The wait each click or scroll may use. */
function actionTimeout (options: LoadOptions, budget: Budget): number {
  return Math.min(options.timeout / 11, budget.fraction(WAIT_SHARE))
}

// A click or scroll skipped (its element missing within the wait, or no time left) is given up on: with a longer
// `timeout` it might have happened, so the answer is not cached (StepContext.gaveUp).
async function clickAll ({ page, options, budget, gaveUp }: StepContext): Promise<void> {
  for (const selector of options.click) {
    const timeout = actionTimeout(options, budget)
    if (timeout < 1) { gaveUp.push('click'); return }
    try {
      await abortable(page.locator(selector).first().click({ timeout }), budget.signal)
    } catch (err) {
      rethrowIfFatal(err, page, budget)
      gaveUp.push('click')
    }
  }
}

async function scrollTo ({ page, options, budget, gaveUp }: StepContext, selector: string): Promise<void> {
  const timeout = actionTimeout(options, budget)
  if (timeout < 1) { gaveUp.push('scroll'); return }
  try {
    await abortable(page.locator(selector).first().evaluate((element) => element.scrollIntoView(), undefined, { timeout }), budget.signal)
  } catch (err) {
    rethrowIfFatal(err, page, budget)
    gaveUp.push('scroll')
  }
}

const documentOf = (url: string): string => url.split('#')[0] ?? url

export const interactStep: PageStep = {
  name: 'interact',
  // Always: a page may also move to another document by itself while the earlier steps ran.
  applies: () => true,
  needsBrowser: (options) => options.click.length > 0 || options.scroll !== undefined,
  async run (step) {
    const { page, options, budget } = step
    const before = page.url()
    await clickAll(step)
    if (options.scroll !== undefined) await scrollTo(step, options.scroll)
    if (documentOf(page.url()) !== documentOf(before)) await waitForStates(step, performance.now() + budget.fraction(WAIT_SHARE))
  }
}
