// Step: `waitForTimeout`, a fixed wait after `waitForSelector`, within ⅔ of what is left (docs/api.md §3.6).
import { sleep } from '../../util/abort.ts'
import { WAIT_SHARE } from '../page/budget.ts'
import type { PageStep } from './step.ts'

export const waitForTimeoutStep: PageStep = {
  name: 'wait-for-timeout',
  applies: (options) => options.waitForTimeout !== undefined && options.waitForTimeout > 0,
  // Asked for at all (even 0): the page is rendered.
  needsBrowser: (options) => options.waitForTimeout !== undefined,
  async run ({ options, budget, gaveUp }) {
    if (options.waitForTimeout === undefined || options.waitForTimeout <= 0) return
    const share = budget.fraction(WAIT_SHARE)
    // Cut short by the budget: the page is taken earlier than asked.
    if (share < options.waitForTimeout) gaveUp.push('waitForTimeout')
    await sleep(Math.min(options.waitForTimeout, share), budget.signal)
  }
}
