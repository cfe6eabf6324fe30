// Step: `animations=false` (the default) stops CSS animations and transitions at their end state and settles Web
// Animations; the reduced-motion preference is part of the context's emulation.
import { stopAnimations } from '../page/styles.ts'
import { acrossNavigation, type PageStep } from './step.ts'

export const animationsStep: PageStep = {
  name: 'animations',
  applies: (options) => !options.animations,
  async run ({ page, options, budget, evaluate }) {
    if (options.animations) return
    await acrossNavigation(page, budget, async () => { await stopAnimations(evaluate) })
  }
}
