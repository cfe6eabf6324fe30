// Step: `waitForSelector` waits until the element is attached and visible; giving up is not an error (docs/api.md §3.6).
import { abortable } from '../../util/abort.ts'
import { WAIT_SHARE } from '../page/budget.ts'
import { rethrowIfFatal, type PageStep } from './step.ts'

export const waitForSelectorStep: PageStep = {
  name: 'wait-for-selector',
  applies: (options) => options.waitForSelector !== undefined,
  needsBrowser: true,
  async run ({ page, options, budget, gaveUp }) {
    if (options.waitForSelector === undefined) return
    const timeout = budget.fraction(WAIT_SHARE)
    if (timeout < 1) { gaveUp.push('waitForSelector'); return }
    try {
      await abortable(page.locator(options.waitForSelector).first().waitFor({ state: 'visible', timeout }), budget.signal)
    } catch (err) {
      rethrowIfFatal(err, page, budget)
      gaveUp.push('waitForSelector')
    }
  }
}
