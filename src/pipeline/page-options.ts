// What the browser's page steps are given of a request's options (browser/steps/step.ts LoadOptions): the steps
// group, the target's address and timeout, and the parts of emulation applied on the page. Pure; used to render
// (render.ts) and to decide whether the request needs the browser at all (prerender.ts).
import { someRule } from '../schemas/options.ts'
import type { OptionGroups } from '../schemas/option-groups.ts'
import type { LoadOptions } from '../browser/steps/index.ts'

export function loadOptionsOf ({ target, emulation, steps, outputs }: Pick<OptionGroups, 'target' | 'emulation' | 'steps' | 'outputs'>): LoadOptions {
  return {
    ...steps,
    url: target.url,
    timeout: target.timeout,
    javascript: emulation.javascript,
    mediaType: emulation.mediaType,
    animations: emulation.animations,
    adblock: emulation.adblock,
    formValues: someRule(outputs.data, (rule) => Array.isArray(rule.attr) && rule.attr.includes('val')),
    prints: outputs.pdf !== false
  }
}
