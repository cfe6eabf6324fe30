// `function` (docs/api.md §3.4): user code run in the page's JavaScript context once the page steps and `evaluate`
// are done, never in the service. It is called as `fn(args)`, `args` being `{url, ...named arguments, page}` where
// `page` is a small in-page shim of the Puppeteer calls Microlink users write (`evaluate`, `$eval`, `$$eval`, `title`,
// `url`, `content`). Its awaited value comes back JSON-serialized, at most MAX_FUNCTION_VALUE_BYTES; a throw comes
// back as `{name, message}`. Both answer 200.
//
// Time: the plan's limit, capped by a share of what the request has left (WAIT_SHARE, as every later wait). When
// it runs out, the page's script is stopped with `Runtime.terminateExecution` (an endless loop ends), a throwaway
// evaluation absorbs a termination that found nothing running, and the result says so. Whatever the outcome, the
// page is not reused: the code may have left timers, listeners or a stuck loop behind (JobInfo.discardPage).
import { WAIT_SHARE } from '../page/budget.ts'
import type { FunctionArg, FunctionOptions } from '../../schemas/options.ts'
import { abortable, isTimedOut, throwIfAborted, within } from '../../util/abort.ts'
import { isTargetClosed } from '../errors.ts'
import type { FunctionResult, ValueProducer } from './producer.ts'

/** The largest JSON-serialized value a function may return (a larger one is a RangeError, as a throw). */
export const MAX_FUNCTION_VALUE_BYTES = 4 * 1024 * 1024
/** Longest error message kept. */
const MAX_MESSAGE_CHARS = 2000
/** How long the evaluation that absorbs a pending termination may take. */
const ABSORB_MS = 1000

export interface FunctionSettings extends FunctionOptions {
  args: Readonly<Record<string, FunctionArg>>
}

/**
 * The expression the page evaluates: the shim, the call, and an outcome that is always plain data,
 * `{ok: true, json}` or `{ok: false, name, message}`. The source is spliced in as an expression, so a page's
 * Content-Security-Policy does not stop it (evaluate.ts does the same).
 */
export function functionExpression (source: string, args: Readonly<Record<string, unknown>>): string {
  return `(async () => {
  const stringify = JSON.stringify;
  const page = {
    evaluate: async (fn, ...a) => typeof fn === 'function' ? fn(...a) : (0, eval)(String(fn)),
    $eval: async (selector, fn, ...a) => {
      const element = document.querySelector(selector);
      if (element === null) throw new Error('failed to find element matching selector "' + selector + '"');
      return fn(element, ...a);
    },
    $$eval: async (selector, fn, ...a) => fn(Array.from(document.querySelectorAll(selector)), ...a),
    title: async () => document.title,
    url: async () => location.href,
    content: async () => {
      const doctype = document.doctype ? new XMLSerializer().serializeToString(document.doctype) : '';
      return doctype + (document.documentElement ? document.documentElement.outerHTML : '');
    }
  };
  try {
    const args = Object.assign(${JSON.stringify(args)}, { page });
    const value = await (${source}
    )(args);
    const json = value === undefined ? 'null' : (stringify(value) ?? 'null');
    if (json.length > ${MAX_FUNCTION_VALUE_BYTES}) throw new RangeError('The function returned more than ${MAX_FUNCTION_VALUE_BYTES / 1024 / 1024} MiB of JSON.');
    return { ok: true, json };
  } catch (error) {
    const name = error !== null && typeof error === 'object' && typeof error.name === 'string' ? error.name : 'Error';
    const message = error !== null && typeof error === 'object' && typeof error.message === 'string' ? error.message : String(error);
    return { ok: false, name, message };
  }
})()`
}

/** The page's outcome as data.function; anything not shaped as functionExpression returns is a rejection. */
export function toFunctionResult (outcome: unknown): FunctionResult {
  if (outcome !== null && typeof outcome === 'object') {
    const { ok, json, name, message } = outcome as Record<string, unknown>
    if (ok === true && typeof json === 'string' && json.length <= MAX_FUNCTION_VALUE_BYTES) {
      try {
        return { isFulfilled: true, isRejected: false, value: JSON.parse(json) as unknown }
      } catch {}
    }
    if (ok === false && typeof name === 'string' && typeof message === 'string') {
      return rejected(name.slice(0, 100), message.slice(0, MAX_MESSAGE_CHARS))
    }
  }
  return rejected('TypeError', 'The function did not return a value that could be read.')
}

function rejected (name: string, message: string): FunctionResult {
  return { isFulfilled: false, isRejected: true, value: { name, message } }
}

export const functionProducer: ValueProducer<FunctionSettings, 'function'> = {
  kind: 'value',
  field: 'function',
  needsBrowser: true,
  settings: (outputs) => outputs.function === undefined ? false : { ...outputs.function, args: outputs.args },
  async produce ({ source, timeLimit, args }, { url, page, budget, cdp, discardPage, gaveUp }) {
    throwIfAborted(budget.signal)
    const limit = Math.max(0, Math.min(timeLimit, budget.fraction(WAIT_SHARE)))
    discardPage()
    // Opened first: attaching a session needs the page's main thread, which an endless loop keeps busy, while
    // terminateExecution on an attached session interrupts it.
    const session = await abortable(cdp.get(), budget.signal)
    const run = page.evaluate(functionExpression(source, { ...args, url }))
    let outcome: unknown
    try {
      outcome = await abortable(within(run, limit), budget.signal)
    } catch (err) {
      throwIfAborted(budget.signal)
      if (page.isClosed() || isTargetClosed(err)) throw err
      // The page's context went away under the code (it navigated): a rejection like any other.
      return rejected('Error', err instanceof Error ? err.message.split('\n')[0] ?? '' : String(err))
    }
    if (!isTimedOut(outcome)) return toFunctionResult(outcome)
    await abortable(session.send('Runtime.terminateExecution'), budget.signal).catch(() => {})
    await within(page.evaluate('0').catch(() => {}), ABSORB_MS, budget.signal)
    gaveUp('function')
    return rejected('TimeoutError', `The function did not finish within ${Math.round(limit)} ms.`)
  }
}
