// The `evaluate` sources of `data` rules (docs/api.md §3.3), run in the page once the steps are done: each distinct
// source once, as an expression or a function called with no arguments, its value awaited and JSON-serialized. A
// throw at run time is recorded as such (the rule then misses); the rule's `type` is applied later, in Node. The
// sources already parse (EINVALEVAL comes from the parser). Each is given to the page as an expression, so a page's
// Content-Security-Policy does not stop it, and it may use at most the time the request has left.
//
// Size: the values' JSON may be MAX_RESPONSE_BYTES in all (ProducerContext.maxValueBytes). Each value is measured in
// the page against what is left, so one over it never crosses into the service: the request is 400 ETOOLARGE.
import { evaluateSources } from '../../schemas/options.ts'
import { AppError } from '../../errors.ts'
import { abortable, throwIfAborted } from '../../util/abort.ts'
import { isTargetClosed } from '../errors.ts'
import { BOUND_SOURCE, toBounded } from '../page/bounded.ts'
import type { Evaluated, ValueProducer } from './producer.ts'

/**
 * The expression the page evaluates: the source's value, called when it is a function, as JSON text bounded at
 * `maxBytes` (page/bounded.ts), `undefined` giving `null`.
 */
export function evaluateExpression (source: string, maxBytes: number): string {
  return `(async () => {
  const value = (${source}
  );
  const result = await (typeof value === 'function' ? value() : value);
  return ${BOUND_SOURCE}(result === undefined ? 'null' : (JSON.stringify(result) ?? 'null'), ${maxBytes});
})()`
}

/** The value of its JSON text; text that does not parse (a page script replaced `JSON.stringify`) is a throw. */
function parsed (json: string): Evaluated {
  try {
    return { ok: true, value: JSON.parse(json) as unknown }
  } catch {
    return { ok: false }
  }
}

function tooLarge (maxBytes: number): AppError {
  return new AppError('ETOOLARGE', { data: { data: `The values of the \`evaluate\` rules are over MAX_RESPONSE_BYTES (${maxBytes} bytes).` } })
}

export const evaluateProducer: ValueProducer<string[], 'evaluate'> = {
  kind: 'value',
  field: 'evaluate',
  needsBrowser: true,
  settings: (outputs) => {
    const sources = evaluateSources(outputs.data)
    return sources.length === 0 ? false : sources
  },
  async produce (sources, { page, budget, maxValueBytes }) {
    const out: Record<string, Evaluated> = {}
    let left = maxValueBytes
    for (const source of sources) {
      throwIfAborted(budget.signal)
      let outcome: unknown
      try {
        outcome = await abortable(page.evaluate(evaluateExpression(source, left)), budget.signal)
      } catch (err) {
        throwIfAborted(budget.signal)
        if (page.isClosed() || isTargetClosed(err)) throw err
        out[source] = { ok: false }
        continue
      }
      const bounded = toBounded(outcome)
      if (!bounded.fits) throw tooLarge(maxValueBytes)
      left -= Buffer.byteLength(bounded.text)
      out[source] = parsed(bounded.text)
    }
    return out
  }
}
