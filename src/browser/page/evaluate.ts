// pagecast's own expressions (the page steps' styles and reads, the DOM's serialization) evaluated in the page's main
// world through the page's CDP session (cdp-session.ts), as Playwright's `page.evaluate` would evaluate them, but
// without its utility script: Playwright compiles that script into every new document on its first evaluation,
// which made a screenshot job's three evaluations take 5-6 ms longer in a probe (docs/benchmarks.md, "pagecast's
// own evaluations"). The user's code (`evaluate` rules, `function`, actions) still goes through Playwright.
//
// Evaluated the way Playwright evaluates: in the main frame's main world, as a user gesture, a promise awaited,
// the value returned as JSON. Each expression is a complete expression (an IIFE or a literal), so nothing it
// declares outlives it. An exception in the page is thrown here as an Error; a document that went away under the
// evaluation is a CDP error that the steps' acrossNavigation() waits out, as it waits out Playwright's.
import type { PageCdpSession } from './cdp-session.ts'

/** Evaluates an expression in the page and resolves to its value (JSON: objects, arrays, strings, numbers, ...). */
export type PageEvaluate = (expression: string) => Promise<unknown>

export function evaluatorOf (cdp: PageCdpSession): PageEvaluate {
  return async (expression) => {
    const session = await cdp.get()
    const { result, exceptionDetails } = await session.send('Runtime.evaluate', {
      expression, returnByValue: true, awaitPromise: true, userGesture: true
    })
    if (exceptionDetails !== undefined) {
      throw new Error(`evaluation failed in the page: ${exceptionDetails.exception?.description ?? exceptionDetails.text}`)
    }
    return result.value
  }
}
