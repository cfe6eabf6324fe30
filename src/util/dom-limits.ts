// The bounds every page's markup is held to before any parser builds a tree of it (docs/security.md, "deep and huge
// pages"). Tree builders and walkers cost the tree's depth per element or recurse once per level (parse5's scope
// checks, css-select's descendant combinators, metascraper's rules, dom-serializer, turndown, Readability): 50,000
// nested <div>s in 560 KB took minutes or overflowed the stack. So, as Blink's parser does past 512 levels, an
// element deeper than MAX_DOM_DEPTH no longer nests: it is closed where it opens, and what it held follows it as
// siblings (the text keeps its order, only the nesting is gone). A document of more than MAX_DOM_ELEMENTS elements
// is cut before the first one over, as a page cut by MAX_HTML_BYTES is.
//
// This is done on the markup itself, in one pass of htmlparser2's tokenizer with a stack of our own (linear: its
// Parser's stack is not), so that no tree is built before the bounds hold. The stack follows the HTML parser where
// it matters (void elements, the usual implied end tags, foreign content's self-closing tags); where it still
// differs, the parser's tree is bounded all the same, a few levels either way. A page within the bounds is returned
// as it is, the same string.
import { Tokenizer } from 'htmlparser2'

/** Deepest element nesting kept. Real pages stay well under 100; 256 keeps a parse of a bounded page linear enough. */
export const MAX_DOM_DEPTH = 256
/**
 * Elements kept in one document: five times a long article's, and as many as a converter like turndown (whose cost
 * grows faster than the page) gets through within a default deadline.
 */
export const MAX_DOM_ELEMENTS = 100_000

export interface DomBounds {
  depth: number
  elements: number
}

const DEFAULT_BOUNDS: DomBounds = { depth: MAX_DOM_DEPTH, elements: MAX_DOM_ELEMENTS }

const VOID = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'keygen', 'link', 'meta', 'param', 'source', 'track', 'wbr'])
/** Elements whose content the tokenizer reads as text: never flattened (nothing nests inside them). */
const RAW = new Set(['script', 'style', 'title', 'textarea'])
/** An open element the new one closes when it is the current one (the HTML parser's usual implied end tags). */
const CLOSES: Readonly<Record<string, readonly string[]>> = {
  li: ['li'], dt: ['dt', 'dd'], dd: ['dt', 'dd'], option: ['option'], tr: ['tr', 'td', 'th'], td: ['td', 'th'], th: ['td', 'th']
}
/** Elements that close an open <p>. */
const CLOSES_P = new Set(['address', 'article', 'aside', 'blockquote', 'details', 'div', 'dl', 'fieldset', 'figcaption', 'figure', 'footer',
  'form', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hr', 'main', 'menu', 'nav', 'ol', 'p', 'pre', 'section', 'table', 'ul'])
const FOREIGN = new Set(['svg', 'math'])
/** How far below the current element an end tag's match is looked for; an end tag with none nearer is ignored. */
const CLOSE_SEARCH = 64

interface Open {
  name: string
  /** Closed where it opened (past the depth bound): its own end tag is dropped. */
  flat: boolean
}

/**
 * `markup` held to the bounds: the same string when it is within them, else a copy in which elements past the depth
 * bound are closed where they open and everything after the last element allowed is cut.
 */
export function boundMarkup (markup: string, { xml = false, bounds = DEFAULT_BOUNDS }: { xml?: boolean, bounds?: DomBounds } = {}): string {
  const stack: Open[] = []
  const pieces: string[] = []
  let copied = 0
  let elements = 0
  let cut = -1
  let name = ''
  /** The stack's length when foreign content (svg, math) opened; -1 outside it. */
  let foreignAt = -1
  const edit = (from: number, to: number, insert: string): void => {
    pieces.push(markup.slice(copied, from), insert)
    copied = to
  }
  const open = (end: number): void => {
    if (stack.length >= bounds.depth && !RAW.has(name)) {
      edit(end + 1, end + 1, `</${name}>`)
      stack.push({ name, flat: true })
      return
    }
    if (!xml && foreignAt < 0 && FOREIGN.has(name)) foreignAt = stack.length
    stack.push({ name, flat: false })
  }
  const tokenizer = new Tokenizer({ xmlMode: xml, decodeEntities: false }, {
    onopentagname (start, end) {
      name = markup.slice(start, end).toLowerCase()
      if (++elements > bounds.elements) {
        cut = start - 1
        tokenizer.pause()
        return
      }
      if (xml || foreignAt >= 0) return
      const closes = CLOSES[name]
      for (let top = stack.at(-1); top !== undefined && !top.flat; top = stack.at(-1)) {
        if (!(closes?.includes(top.name) ?? false) && !(top.name === 'p' && CLOSES_P.has(name))) break
        stack.pop()
      }
    },
    onopentagend (end) {
      if (!xml && foreignAt < 0 && VOID.has(name)) return
      open(end)
    },
    onselfclosingtag (end) {
      // Self-closing is honoured in XML and foreign content; an HTML element ignores the slash (void ones close anyway).
      if (xml || foreignAt >= 0 || VOID.has(name)) return
      open(end)
    },
    onclosetag (start, end) {
      const closing = markup.slice(start, end).toLowerCase()
      const floor = Math.max(0, stack.length - CLOSE_SEARCH)
      for (let i = stack.length - 1; i >= floor; i--) {
        const entry = stack[i] as Open
        if (entry.name !== closing) continue
        stack.length = i
        if (foreignAt >= i) foreignAt = -1
        if (entry.flat) {
          const gt = markup.indexOf('>', end)
          edit(start - 2, gt < 0 ? markup.length : gt + 1, '')
        }
        return
      }
    },
    onattribdata () {},
    onattribentity () {},
    onattribend () {},
    onattribname () {},
    oncdata () {},
    oncomment () {},
    ondeclaration () {},
    onend () {},
    onprocessinginstruction () {},
    ontext () {},
    ontextentity () {}
  })
  tokenizer.write(markup)
  if (cut < 0) tokenizer.end()
  if (copied === 0 && cut < 0) return markup
  pieces.push(markup.slice(copied, cut < 0 ? markup.length : Math.max(copied, cut)))
  return pieces.join('')
}
