// The `evaluate` sources of `data` rules (docs/api.md §3.3), run in the page once the steps are done: each distinct
// source once, as an expression or a function called with no arguments, its value awaited and JSON-serialized. A
// throw at run time is recorded as such (the rule then misses); the rule's `type` is applied later, in Node. The
// sources already parse (EINVALEVAL comes from the parser). Each is given to the page as an expression, so a page's
// Content-Security-Policy does not stop it, and it may use at most the time the request has left.
import { evaluateSources } from '../../schemas/options.ts'
import { abortable, throwIfAborted } from '../../util/abort.ts'
import { isTargetClosed } from '../errors.ts'
import type { Evaluated, ValueProducer } from './producer.ts'

/** The expression the page evaluates: the source's value, called when it is a function, then made plain JSON. */
export function evaluateExpression (source: string): string {
  return `(async () => {
  const value = (${source}
  );
  const result = await (typeof value === 'function' ? value() : value);
  return result === undefined ? null : JSON.parse(JSON.stringify(result) ?? 'null');
})()`
}

export const evaluateProducer: ValueProducer<string[], 'evaluate'> = {
  kind: 'value',
  field: 'evaluate',
  settings: (outputs) => {
    const sources = evaluateSources(outputs.data)
    return sources.length === 0 ? false : sources
  },
  async produce (sources, { page, budget }) {
    const out: Record<string, Evaluated> = {}
    for (const source of sources) {
      throwIfAborted(budget.signal)
      try {
        const value: unknown = await abortable(page.evaluate(evaluateExpression(source)), budget.signal)
        out[source] = { ok: true, value }
      } catch (err) {
        throwIfAborted(budget.signal)
        if (page.isClosed() || isTargetClosed(err)) throw err
        out[source] = { ok: false }
      }
    }
    return out
  }
}
