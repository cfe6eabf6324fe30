// Text the page hands back, bounded in the page: its size is checked where it is made, so a page that builds 200 MB
// (a DOM, an `evaluate` value) costs the renderer its own memory and never crosses DevTools into the service.
// Sizes are UTF-8 bytes. A string's length in UTF-16 units is never above its UTF-8 size and at most a third of it,
// so the length alone decides most texts; only one in between is encoded to be measured.

/** What the page gave: the text when it fits, else its length (UTF-16 units) and nothing of it. */
export type Bounded = { fits: true, text: string } | { fits: false, length: number }

/**
 * In-page source of a function `(text, max) => Bounded`, for the expressions that build a text in the page. Anything
 * but a string (a page script that replaced `JSON.stringify`, say) counts as the empty text.
 */
export const BOUND_SOURCE = `((text, max) => {
  const value = typeof text === 'string' ? text : '';
  const fits = value.length <= max && (value.length * 3 <= max || new TextEncoder().encode(value).length <= max);
  return fits ? { fits: true, text: value } : { fits: false, length: value.length };
})`

/** The outcome of an expression made with BOUND_SOURCE; anything not of its shape is the empty text. */
export function toBounded (outcome: unknown): Bounded {
  if (outcome !== null && typeof outcome === 'object') {
    const { fits, text, length } = outcome as Record<string, unknown>
    if (fits === true && typeof text === 'string') return { fits: true, text }
    if (fits === false && typeof length === 'number') return { fits: false, length }
  }
  return { fits: true, text: '' }
}
