// Step: inject `modules`, `scripts` and `styles` (docs/api.md §3.6). A URL source is loaded from there (the egress
// layer checks it like any request), anything else is inline code. A source that does not load or throws is
// skipped; all of them share ⅔ of the budget left.
import type { Page } from 'playwright-core'
import { isTimedOut, within } from '../../util/abort.ts'
import { isHttpUrl } from '../../util/url.ts'
import { WAIT_SHARE, type Budget } from '../page/budget.ts'
import { addInlineStyle, addLinkedStyle } from '../page/styles.ts'
import { rethrowIfFatal, type LoadOptions, type PageStep } from './step.ts'

async function inject (page: Page, options: LoadOptions, budget: Budget): Promise<void> {
  const deadline = performance.now() + budget.fraction(WAIT_SHARE)
  const left = (): number => Math.max(0, deadline - performance.now())
  const run = async (work: () => Promise<void>): Promise<void> => {
    if (left() <= 0) return
    try {
      const outcome = await within(work(), left(), budget.signal)
      if (isTimedOut(outcome)) return
    } catch (err) {
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

export const injectStep: PageStep = {
  name: 'inject',
  applies: (options) => options.modules.length > 0 || options.scripts.length > 0 || options.styles.length > 0,
  needsBrowser: true,
  async run ({ page, options, budget }) {
    await inject(page, options, budget)
  }
}
