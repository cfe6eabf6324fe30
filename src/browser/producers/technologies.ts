// What `insights.technologies` reads in the rendered page (docs/api.md §3.4): the fingerprint set's JS global chains
// (`jQuery.fn.jquery`, `React.version`, ...) walked from `window` through own properties, as Wappalyzer does; the DOM
// properties its `dom` checks name; and the browser's cookies for the page (HttpOnly ones included, and those set by
// scripts). Read in one evaluation, before `evaluate` and `function` run the user's code, within the time the
// request has left. Values are kept as text (objects and functions as ''), each cut to MAX_VALUE_CHARS (what a
// pattern reads of it, patterns.ts).
import { bundledFingerprints } from '../../insights/fingerprints.ts'
import { MAX_VALUE_CHARS } from '../../insights/patterns.ts'
import type { PageGlobals } from '../../insights/signals.ts'
import { abortable } from '../../util/abort.ts'
import type { ValueProducer } from './producer.ts'

interface InPageInput {
  chains: readonly string[]
  properties: ReadonlyArray<readonly [string, readonly string[]]>
  max: number
}

/**
 * The page's side, as source text (a function value would be rewritten by the test transform): its argument is
 * `{chains, properties, max}` and it returns `{js, properties}` (PageGlobals without the cookies).
 */
const READ_GLOBALS = `({ chains, properties, max }) => {
  const own = Object.prototype.hasOwnProperty;
  const text = (value) => typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value).slice(0, max) : '';
  const js = {};
  for (const chain of chains) {
    try {
      let value = window;
      let found = true;
      for (const part of chain.split('.')) {
        if (value instanceof Object && own.call(value, part)) value = value[part];
        else { found = false; break; }
      }
      if (found) js[chain] = text(value);
    } catch {}
  }
  const props = {};
  for (const [selector, names] of properties) {
    try {
      for (const element of Array.from(document.querySelectorAll(selector))) {
        for (const name of names) {
          if (name in element && (props[selector] === undefined || props[selector][name] === undefined)) {
            (props[selector] ??= {})[name] = text(element[name]);
          }
        }
      }
    } catch {}
  }
  return { js, properties: props };
}`

export const technologiesProducer: ValueProducer<true, 'technologies'> = {
  kind: 'value',
  field: 'technologies',
  // Read in the page when it is rendered; a fetched page is matched without it.
  needsBrowser: false,
  settings: (outputs) => outputs.insights !== false && outputs.insights.technologies ? true : false,
  async produce (_settings, { page, budget }) {
    const set = bundledFingerprints()
    const input: InPageInput = {
      chains: set.jsChains,
      properties: set.propertySelectors.map((check) => [check.selector, check.properties.map((p) => p.key)] as const),
      max: MAX_VALUE_CHARS
    }
    const read = await abortable(page.evaluate(`(${READ_GLOBALS})(${JSON.stringify(input)})`), budget.signal) as Pick<PageGlobals, 'js' | 'properties'>
    const cookies = (await abortable(page.context().cookies(page.url()), budget.signal)).map(({ name, value }) => ({ name, value }))
    return { ...read, cookies }
  }
}
