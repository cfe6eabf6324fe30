// How deeply JSON text nests, read before anything recursive walks the parsed value (validators, coercion, the
// query's flattening): a 10,000-deep `[[[…]]]` is short text, and a stack overflow to whatever walks it.

/**
 * Whether `text` nests arrays and objects more than `max` levels deep. A linear scan of the text (brackets inside
 * strings skipped, escapes honoured); it does not check that the text is JSON.
 */
export function jsonDeeperThan (text: string, max: number): boolean {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c) i++ // backslash: the next character is escaped
      else if (c === 0x22) inString = false
    } else if (c === 0x22) {
      inString = true
    } else if (c === 0x5b || c === 0x7b) { // [ {
      if (++depth > max) return true
    } else if (c === 0x5d || c === 0x7d) { // ] }
      depth--
    }
  }
  return false
}
