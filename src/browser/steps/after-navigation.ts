// Step: the caller's hook right after the navigation, before any wait for the page (docs/api.md §3.6: consent
// banners are dealt with here).
import type { PageStep } from './step.ts'

export const afterNavigationStep: PageStep = {
  name: 'after-navigation',
  applies: () => true,
  async run ({ afterNavigation, page, budget }) {
    if (afterNavigation !== undefined) await afterNavigation(page, budget)
  }
}
