// Step: for `waitUntil=auto`, the network-idle wait after everything else (at most 2 requests in flight for 500 ms),
// within ⅔ of what is left; running out is not an error (docs/api.md §3.6).
import { WAIT_SHARE } from '../page/budget.ts'
import type { PageStep } from './step.ts'

export const settleStep: PageStep = {
  name: 'settle',
  applies: (options) => options.waitUntil.includes('auto'),
  async run ({ options, budget, tracker, gaveUp }) {
    if (!options.waitUntil.includes('auto')) return
    const timeout = budget.fraction(WAIT_SHARE)
    const idle = timeout >= 1 && await tracker.waitForIdle(2, timeout, budget.signal)
    if (!idle) gaveUp.push('network-idle')
  }
}
