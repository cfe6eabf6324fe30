// The `dom` checks of the fingerprint set are some 1,800 CSS selectors; running each over a large page with cheerio
// costs seconds. So the page is indexed once (its tag names, and for each attribute name its values), and a
// selector runs only when one of its alternatives could match: the rightmost compound of the alternative (the
// element the selector picks) needs its tag, every attribute it names, and the text of each attribute value it
// compares (`=`, `~=`, `^=`, `$=`, `*=`, `|=`: `#id`, `.class` included) somewhere in that attribute's values. Those
// are necessary conditions only; a selector that passes them is then run as written.
import type { CheerioAPI } from 'cheerio'
import { parse } from 'css-what'

export interface CompoundKey {
  readonly tag: string | null
  /** Attribute names the element must have, each with the lower-cased text one of its values must contain ('' for any). */
  readonly attributes: ReadonlyArray<readonly [string, string]>
}

const COMBINATORS = new Set(['descendant', 'child', 'sibling', 'adjacent', 'parent', 'column-combinator'])
const VALUE_ACTIONS = new Set(['equals', 'element', 'start', 'end', 'any', 'hyphen'])

/** The keys of a selector's alternatives; null when it does not parse (it is then never run). */
export function selectorKeys (selector: string): CompoundKey[] | null {
  let parsed: ReturnType<typeof parse>
  try {
    parsed = parse(selector)
  } catch {
    return null
  }
  return parsed.map((tokens) => {
    let start = 0
    tokens.forEach((token, i) => { if (COMBINATORS.has(token.type)) start = i + 1 })
    let tag: string | null = null
    const attributes: Array<[string, string]> = []
    for (const token of tokens.slice(start)) {
      if (token.type === 'tag') tag = token.name.toLowerCase()
      else if (token.type === 'attribute') {
        attributes.push([token.name.toLowerCase(), VALUE_ACTIONS.has(token.action) ? token.value.toLowerCase() : ''])
      }
    }
    return { tag, attributes }
  })
}

/** The part of a parsed node (domhandler's) that the index reads. */
interface ElementNode {
  type: string
  name?: string
  attribs?: Record<string, string>
  children?: readonly ElementNode[]
}

export interface DomIndex {
  /** Whether some element could match one of the alternatives. */
  mayMatch (keys: readonly CompoundKey[]): boolean
}

/** Indexes a parsed page in one walk. */
export function indexDom ($: CheerioAPI): DomIndex {
  const tags = new Set<string>()
  const values = new Map<string, string[]>()
  const stack: ElementNode[] = [$.root().get(0) as unknown as ElementNode]
  while (stack.length > 0) {
    const node = stack.pop()
    if (node === undefined) break
    if (node.name !== undefined && node.attribs !== undefined) {
      tags.add(node.name.toLowerCase())
      for (const [name, value] of Object.entries(node.attribs)) {
        const list = values.get(name) ?? []
        if (list.length === 0) values.set(name, list)
        list.push(value.toLowerCase())
      }
    }
    for (const child of node.children ?? []) stack.push(child)
  }
  const joined = new Map<string, string>()
  const valuesOf = (name: string): string | undefined => {
    let text = joined.get(name)
    if (text === undefined) {
      const list = values.get(name)
      if (list === undefined) return undefined
      text = list.join('\n')
      joined.set(name, text)
    }
    return text
  }
  return {
    mayMatch: (keys) => keys.some(({ tag, attributes }) =>
      (tag === null || tags.has(tag)) &&
      attributes.every(([name, text]) => {
        const all = valuesOf(name)
        return all !== undefined && (text === '' || all.includes(text))
      }))
  }
}
