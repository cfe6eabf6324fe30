// Step: `actions` (docs/firecrawl.md#actions), the last step: each action in the order given, on the page as the one
// before left it. Waits and element lookups share the request's budget (each may use WAIT_SHARE of what is left), so
// a selector that never appears fails the request with 400 EACTION naming the action, in time to answer. Captures
// (`screenshot`, `pdf`) go through the caller's ActionCapturer; `scrape` serializes the DOM as the final one is.
// Typing and keys reach the page only: whatever they make it load still goes through the pool's egress layer.
import { AppError } from '../../errors.ts'
import { scriptExpression } from '../../schemas/actions.ts'
import type { PageAction } from '../../schemas/options.ts'
import { abortable, sleep, throwIfAborted } from '../../util/abort.ts'
import { BOUND_SOURCE, toBounded } from '../page/bounded.ts'
import { WAIT_SHARE, type Budget } from '../page/budget.ts'
import { serializePage } from '../page/serialize.ts'
import { acrossNavigation, rethrowIfFatal, type ActionResults, type PageStep, type StepContext } from './step.ts'

function failed (index: number, action: PageAction, detail: string, cause?: unknown): AppError {
  const message = `actions[${index}] (${action.type}): ${detail}`
  return new AppError('EACTION', { message, data: { actions: message }, ...(cause === undefined ? {} : { cause }) })
}

/** The wait one lookup may use: WAIT_SHARE of the time left, so a miss leaves time to answer. */
function lookupTimeout (budget: Budget): number {
  return Math.max(1, budget.fraction(WAIT_SHARE))
}

/** Runs `work`; a failure that is not fatal (rethrowIfFatal) becomes EACTION for this action. */
async function attempt<T> (step: StepContext, index: number, action: PageAction, detail: string, work: () => Promise<T>): Promise<T> {
  try {
    return await abortable(work(), step.budget.signal)
  } catch (err) {
    rethrowIfFatal(err, step.page, step.budget)
    throw failed(index, action, detail, err)
  }
}

async function visible (step: StepContext, index: number, action: PageAction, selector: string): Promise<void> {
  const timeout = lookupTimeout(step.budget)
  await attempt(step, index, action, `no visible element matches \`${selector}\` within ${Math.round(timeout)} ms.`,
    async () => { await step.page.locator(selector).first().waitFor({ state: 'visible', timeout }) })
}

async function click (step: StepContext, index: number, action: Extract<PageAction, { type: 'click' }>): Promise<void> {
  const { page, budget } = step
  await visible(step, index, action, action.selector)
  const targets = action.all === true ? await page.locator(action.selector).all() : [page.locator(action.selector).first()]
  for (const target of targets) {
    await attempt(step, index, action, `the element matching \`${action.selector}\` could not be clicked.`,
      async () => { await target.click({ timeout: lookupTimeout(budget) }) })
  }
}

async function scroll (step: StepContext, index: number, action: Extract<PageAction, { type: 'scroll' }>): Promise<void> {
  const sign = action.direction === 'up' ? -1 : 1
  if (action.selector === undefined) {
    // One viewport's height up or down, as a reader's Page Up / Page Down.
    await acrossNavigation(step.page, step.budget, async () => {
      await step.page.evaluate((s) => { const w = globalThis as unknown as { scrollBy: (x: number, y: number) => void, innerHeight: number }; w.scrollBy(0, s * w.innerHeight) }, sign)
    })
    return
  }
  await visible(step, index, action, action.selector)
  await attempt(step, index, action, `the element matching \`${action.selector}\` could not be scrolled to.`,
    async () => { await step.page.locator(action.selector as string).first().scrollIntoViewIfNeeded({ timeout: lookupTimeout(step.budget) }) })
}

/** The script's value as JSON text, bounded in the page at `maxBytes`; undefined is null. */
function valueExpression (script: string, maxBytes: number): string {
  return `(async () => { const value = await ${scriptExpression(script)}; return ${BOUND_SOURCE}(JSON.stringify(value === undefined ? null : value) ?? 'null', ${maxBytes}) })()`
}

async function execute (step: StepContext, index: number, action: Extract<PageAction, { type: 'executeJavascript' }>, results: ActionResults): Promise<void> {
  step.discardPage?.()
  const outcome = await attempt(step, index, action, 'the script threw or its value is not JSON.',
    async () => await step.page.evaluate(valueExpression(action.script, step.maxHtmlBytes)))
  const bounded = toBounded(outcome)
  if (!bounded.fits) throw failed(index, action, `its value is over ${step.maxHtmlBytes} bytes of JSON.`)
  const value: unknown = JSON.parse(bounded.text)
  results.javascriptReturns.push({ type: value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value, value })
}

async function scrape (step: StepContext, index: number, action: PageAction, results: ActionResults): Promise<void> {
  const { page, budget, maxHtmlBytes, evaluate } = step
  const html = await acrossNavigation(page, budget, async () => await serializePage(evaluate, { maxBytes: maxHtmlBytes }))
  if (!html.fits) throw failed(index, action, `the page's HTML is over MAX_HTML_BYTES (${maxHtmlBytes} bytes).`)
  results.scrapes.push({ url: page.url(), html: html.text })
}

function capturer (step: StepContext, index: number, action: PageAction): NonNullable<StepContext['capture']> {
  if (step.capture === undefined) throw failed(index, action, 'captures are not available here.')
  return step.capture
}

async function runAction (step: StepContext, index: number, action: PageAction, results: ActionResults): Promise<void> {
  const { page, budget } = step
  switch (action.type) {
    case 'wait':
      if (action.milliseconds !== undefined) {
        const ms = Math.min(action.milliseconds, budget.remaining())
        if (ms < action.milliseconds) step.gaveUp.push('actions.wait')
        await sleep(ms, budget.signal)
      }
      if (action.selector !== undefined) await visible(step, index, action, action.selector)
      return
    case 'click': return await click(step, index, action)
    case 'write':
      step.discardPage?.()
      await attempt(step, index, action, 'the text could not be typed.', async () => { await page.keyboard.type(action.text) })
      return
    case 'press':
      step.discardPage?.()
      await attempt(step, index, action, `the key \`${action.key}\` could not be pressed (an unknown key name?).`, async () => { await page.keyboard.press(action.key) })
      return
    case 'scroll': return await scroll(step, index, action)
    case 'executeJavascript': return await execute(step, index, action, results)
    case 'scrape': return await scrape(step, index, action, results)
    case 'screenshot':
      results.screenshots.push(await capturer(step, index, action).screenshot(page, action, budget))
      return
    case 'pdf':
      results.pdfs.push(await capturer(step, index, action).pdf(page, action, budget))
  }
}

/** Runs the actions of `step.options` in order, recording what they capture in `step.actions`. */
export async function runActions (step: StepContext): Promise<ActionResults> {
  const results: ActionResults = { screenshots: [], pdfs: [], scrapes: [], javascriptReturns: [] }
  step.actions = results
  for (const [index, action] of step.options.actions.entries()) {
    throwIfAborted(step.budget.signal)
    await runAction(step, index, action, results)
  }
  return results
}

export const actionsStep: PageStep = {
  name: 'actions',
  applies: (options) => options.actions.length > 0,
  needsBrowser: true,
  async run (step) {
    await runActions(step)
  }
}
