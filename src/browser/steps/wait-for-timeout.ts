// Step: `waitForTimeout`, a fixed wait after `waitForSelector`, within ⅔ of what is left (docs/api.md §3.6).
import { sleep } from '../../util/abort.ts'
import { WAIT_SHARE } from '../page/budget.ts'
import type { PageStep } from './step.ts'

export const waitForTimeoutStep: PageStep = {
  name: 'wait-for-timeout',
  applies: (options) => options.waitForTimeout !== undefined && options.waitForTimeout > 0,
  async run ({ options, budget }) {
    if (options.waitForTimeout === undefined || options.waitForTimeout <= 0) return
    await sleep(Math.min(options.waitForTimeout, budget.fraction(WAIT_SHARE)), budget.signal)
  }
}
