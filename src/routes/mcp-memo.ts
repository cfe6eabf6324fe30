// The hit lane's memo of POST /mcp calls (routes/mcp-lane.ts): a call's checks and query (McpQuick.check) kept by its
// body's text with the top-level `id` value cut out, so a client that sends the same call again under a new id (as
// every client does) skips `JSON.parse`, the SDK's schemas, the arguments' validation and the query's mapping.
//
// Why the cut is exact. A body is kept only once it was parsed with its `id` value replaced by SENTINEL and the
// parsed top-level `id` came out as SENTINEL: then `prefix` ends where the top-level `id` member's value starts and
// `suffix` starts where it ends (with whitespace, `,` or `}`, what may follow a value). Any later body that is
// `prefix + X + suffix`, X a literal IdSlot takes (a safe integer, or a string with no escape or control character),
// is lexed as the same tokens with X in the id's place (X is one token: a number stops at the suffix's first
// character, a string at its closing quote), so it parses to the same message with `id` X; its checks and query are
// those of the kept one. A key holds `prefix`, then a NUL, then `suffix`: JSON text has no raw NUL, so a kept key
// splits one way only, and a body with a NUL of its own matches no kept key.
/** Bodies longer than this are not kept (nor looked up). */
export const MEMO_TEXT = 4096
/** Calls kept per lane (the least recently used go first). */
export const MEMO_SIZE = 1000

const SENTINEL = '\u0000pagecast'
const SENTINEL_TEXT = JSON.stringify(SENTINEL)
const ID_KEY = /"id"\s*:\s*/y
// Safe integers with no `-0`, exponent or fraction (the SDK takes an integer id), and plain strings.
const ID_LITERAL = /0|-?[1-9]\d{0,14}|"[^"\\\u0000-\u001f]*"/y

/** Where a body's `id` value may be: the last `"id":` member of the text, whatever its depth (checked by parseCall). */
export interface IdSlot {
  readonly start: number
  readonly end: number
  /** The value of the literal there. */
  readonly id: string | number
  /** prefix NUL suffix. */
  readonly key: string
}

export function idSlot (text: string): IdSlot | undefined {
  const at = text.lastIndexOf('"id"')
  if (at === -1) return undefined
  ID_KEY.lastIndex = at
  if (!ID_KEY.test(text)) return undefined
  const start = ID_KEY.lastIndex
  ID_LITERAL.lastIndex = start
  const literal = ID_LITERAL.exec(text)?.[0]
  if (literal === undefined) return undefined
  const end = start + literal.length
  return { start, end, id: literal.charCodeAt(0) === 0x22 ? literal.slice(1, -1) : Number(literal), key: `${text.slice(0, start)}\u0000${text.slice(end)}` }
}

/**
 * `JSON.parse(text)`, and whether `slot` is the top-level `id` value (then the text may be kept under its key): the
 * text is parsed with SENTINEL in the slot and the literal's value put back, which gives the same object (the same
 * tokens, the member in the same place); a slot that is not the top-level id leaves the text to be parsed as it is.
 */
export function parseCall (text: string, slot: IdSlot | undefined): { message: unknown, exact: boolean } {
  // A NUL can be in a JSON value only through the `\u0000` escape: a text without it cannot spell SENTINEL itself
  // (as its own top-level id, which would make a nested slot look like the top-level one).
  if (slot !== undefined && !text.includes('\\u0000')) {
    let marked: unknown
    try {
      marked = JSON.parse(`${text.slice(0, slot.start)}${SENTINEL_TEXT}${text.slice(slot.end)}`)
    } catch {
      marked = undefined
    }
    if (marked !== null && typeof marked === 'object' && !Array.isArray(marked) && (marked as { id?: unknown }).id === SENTINEL) {
      (marked as { id: unknown }).id = slot.id
      return { message: marked, exact: true }
    }
  }
  return { message: JSON.parse(text), exact: false }
}
