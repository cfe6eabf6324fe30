// The reader of `actions` (docs/api.md §3.6): a JSON list as one text value, checked by schemas/actions.ts.
import { parseActions, type PageAction } from './actions.ts'
import type { Node } from './grammar.ts'
import type { ReadInput } from './param-types.ts'
import { optionalString } from './readers.ts'

export function readActions (node: Node | undefined, { name }: ReadInput): PageAction[] {
  const text = optionalString(node, name)
  return text === undefined ? [] : parseActions(text)
}
