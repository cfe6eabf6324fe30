// The DOM serialized as Playwright's `page.content()` does, as the page's own: what pagecast put there is not in it,
// and the live form values `val` reads travel beside the markup without changing it (docs/api.md §3.3).
//
// All of it is one synchronous evaluation, so no page script runs while it lasts: the elements that are pagecast's
// (`omit`: the consent script's styles) are taken out, each form field gets the attribute `valueMark` holding its
// live value, the DOM is serialized, then the attributes go and the elements are put back where they were. The page
// never sees the mark (its name is new each time), and a screenshot or `evaluate` after it sees the page unchanged.
// The styles pagecast adds itself are constructed sheets (styles.ts), never in the DOM at all.
import { randomBytes } from 'node:crypto'
import { BOUND_SOURCE, toBounded, type Bounded } from './bounded.ts'
import type { PageEvaluate } from './evaluate.ts'

/** The mark's prefix; the reader (extract/document.ts) takes marks of this shape only. */
export const VALUE_MARK_PREFIX = 'data-pagecast-val-'

/** A fresh attribute name for the live values of one serialization. */
export function newValueMark (): string {
  return `${VALUE_MARK_PREFIX}${randomBytes(8).toString('hex')}`
}

export interface SerializeOptions {
  /** MAX_HTML_BYTES: the HTML (marks included) is measured in the page and refused over it. */
  maxBytes: number
  /** A selector of elements that are pagecast's, left out of the HTML. */
  omit?: string
  /** The attribute the live form values are written under (newValueMark), when a rule reads `val`. */
  valueMark?: string
}

/**
 * In the page: each field's live value as the markup's `val` reads it in fetch mode (extract/read.ts): an input's
 * value (checkboxes and radios read their `value` attribute, which the page cannot change apart from it), a
 * textarea's, a select's chosen option's `value` attribute, or a multiple select's chosen options' texts. JSON in
 * the attribute; null when the chosen option has no `value`.
 */
const LIVE_VALUE_SOURCE = `((field) => {
  const tag = field.tagName.toLowerCase();
  if (tag === 'select') {
    const chosen = [...field.selectedOptions];
    if (field.multiple) return JSON.stringify(chosen.map((option) => option.textContent));
    return JSON.stringify(chosen.length === 0 ? null : chosen[0].getAttribute('value'));
  }
  if (tag === 'textarea') return JSON.stringify(field.value);
  if (field.type === 'checkbox' || field.type === 'radio' || field.type === 'file') return undefined;
  return JSON.stringify(field.value);
})`

/** The expression that serializes the DOM as `options` say, bounded at `options.maxBytes` (BOUND_SOURCE). */
export function serializeExpression ({ maxBytes, omit, valueMark }: SerializeOptions): string {
  return `(() => {
  const omit = ${JSON.stringify(omit ?? '')};
  const mark = ${JSON.stringify(valueMark ?? '')};
  const taken = [];
  const marked = [];
  let html = '';
  try {
    if (omit !== '') {
      for (const element of document.querySelectorAll(omit)) taken.push([element, element.parentNode, element.nextSibling]);
      for (const [element] of taken) element.remove();
    }
    if (mark !== '') {
      const live = ${LIVE_VALUE_SOURCE};
      for (const field of document.querySelectorAll('input, textarea, select')) {
        const value = live(field);
        if (value === undefined) continue;
        field.setAttribute(mark, value);
        marked.push(field);
      }
    }
    const doctype = document.doctype ? new XMLSerializer().serializeToString(document.doctype) : '';
    html = doctype + (document.documentElement ? document.documentElement.outerHTML : '');
  } finally {
    for (const field of marked) field.removeAttribute(mark);
    // In reverse, so that a sibling taken too is back before what follows it.
    for (let i = taken.length - 1; i >= 0; i--) {
      const [element, parent, next] = taken[i];
      if (parent !== null) parent.insertBefore(element, next !== null && next.parentNode === parent ? next : null);
    }
  }
  return ${BOUND_SOURCE}(html, ${maxBytes});
})()`
}

/** The page's HTML as `options` say: the text when it fits in `options.maxBytes`, else its length. */
export async function serializePage (evaluate: PageEvaluate, options: SerializeOptions): Promise<Bounded> {
  return toBounded(await evaluate(serializeExpression(options)))
}
