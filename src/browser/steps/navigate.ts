// Step: navigate to the target until the main document commits, then wait for the requested `waitUntil` states, all
// within ⅔ of the budget (docs/api.md §3.6). A navigation that never commits is EBRWSRTIMEOUT; one that cannot reach
// the target is EINVALURL; past MAX_REDIRECTS redirects, EMAXREDIRECTS (browser/errors.ts decides).
import type { Page, Response } from 'playwright-core'
import type { Redirect } from '../../net/types.ts'
import { AppError } from '../../errors.ts'
import { abortReason, abortable } from '../../util/abort.ts'
import { toBrowserError, tooManyRedirects } from '../errors.ts'
import { WAIT_SHARE, type Budget } from '../page/budget.ts'
import { waitForStates, type PageStep } from './step.ts'

async function redirectChain (response: Response): Promise<Redirect[]> {
  const chain: Redirect[] = []
  let request = response.request().redirectedFrom()
  while (request !== null) {
    const hop = await request.response()
    chain.unshift({ statusCode: hop?.status() ?? 0, url: request.url() })
    request = request.redirectedFrom()
  }
  return chain
}

async function responseHeaders (response: Response): Promise<Record<string, string>> {
  const headers: Record<string, string> = {}
  for (const { name, value } of await response.headersArray()) {
    const key = name.toLowerCase()
    headers[key] = headers[key] === undefined ? value : `${headers[key]}, ${value}`
  }
  return headers
}

/** Navigates until the main document commits; EBRWSRTIMEOUT if it does not before `deadline` (performance.now() ms). */
async function commit (page: Page, url: string, maxRedirects: number, deadline: number, budget: Budget): Promise<Response> {
  const timeout = (): number => Math.max(1, deadline - performance.now())
  let response: Response | null
  try {
    response = await abortable(page.goto(url, { waitUntil: 'commit', timeout: timeout() }), budget.signal)
    // A page already showing this document (other fragment) navigates within it, with no response: load it afresh.
    if (response === null) response = await abortable(page.reload({ waitUntil: 'commit', timeout: timeout() }), budget.signal)
  } catch (err) {
    if (budget.signal.aborted) throw abortReason(budget.signal)
    throw toBrowserError(err, 'navigation', { url, maxRedirects })
  }
  if (response === null) throw new AppError('EFATAL', { cause: new Error(`navigation to ${url} gave no response`) })
  return response
}

export const navigateStep: PageStep = {
  name: 'navigate',
  applies: () => true,
  // A wait other than `auto` (its own settle step) is a browser's.
  needsBrowser: (options) => !(options.waitUntil.length === 1 && options.waitUntil[0] === 'auto'),
  async run (step) {
    const { page, options, budget, maxRedirects } = step
    // The navigation gets ⅔ of the budget: to commit, then (what is left of it) for the requested states at once.
    const deadline = performance.now() + budget.fraction(WAIT_SHARE)
    step.navigationDeadline = deadline
    const response = await commit(page, options.url, maxRedirects, deadline, budget)
    const redirects = await redirectChain(response)
    if (redirects.length > maxRedirects) throw tooManyRedirects(options.url, maxRedirects)
    step.response = { statusCode: response.status(), headers: await responseHeaders(response), redirects }
    await waitForStates(step, deadline)
  }
}
