// One linear pass over markup with htmlparser2's Tokenizer (a maintained tokenizer already in the tree) and no tree:
// element names, the attributes of the elements a caller asks for, end tags and text, entities decoded. Its Parser is
// not used: it keeps open elements in an array it unshifts into, so 100,000 unclosed tags cost 10^10 steps
// (src/util/dom-limits.ts reads markup the same way for the same reason).
import { Tokenizer } from 'htmlparser2'

export interface ScanHandlers {
  /** An element opens (name lower-cased, prefix kept); answer true to get its attributes in `attributes`. */
  open (name: string): boolean
  attributes? (name: string, attributes: Readonly<Record<string, string>>): void
  /** An end tag, or a self-closing tag in XML. */
  close (name: string): void
  text? (text: string): void
}

/** Attributes kept per element at most; more are not read. */
const MAX_ATTRIBUTES = 64

export function scanMarkup (markup: string, xml: boolean, handlers: ScanHandlers): void {
  let name = ''
  let wanted = false
  let attributes: Record<string, string> = {}
  let count = 0
  let attribute = ''
  let value = ''
  const slice = (start: number, end: number): string => markup.slice(start, end)
  const tokenizer = new Tokenizer({ xmlMode: xml, decodeEntities: true }, {
    onopentagname (start, end) {
      name = slice(start, end).toLowerCase()
      wanted = handlers.open(name)
      attributes = Object.create(null) as Record<string, string>
      count = 0
    },
    onattribname (start, end) {
      attribute = wanted ? slice(start, end).toLowerCase() : ''
      value = ''
    },
    onattribdata (start, end) { if (wanted) value += slice(start, end) },
    onattribentity (codepoint) { if (wanted) value += String.fromCodePoint(codepoint) },
    onattribend () {
      if (!wanted || count >= MAX_ATTRIBUTES || attribute in attributes) return
      attributes[attribute] = value
      count++
    },
    onopentagend () { if (wanted) handlers.attributes?.(name, attributes) },
    onselfclosingtag () {
      if (wanted) handlers.attributes?.(name, attributes)
      if (xml) handlers.close(name)
    },
    onclosetag (start, end) { handlers.close(slice(start, end).toLowerCase()) },
    ontext (start, end) { handlers.text?.(slice(start, end)) },
    ontextentity (codepoint) { handlers.text?.(String.fromCodePoint(codepoint)) },
    oncdata (start, end, offset) { handlers.text?.(slice(start, end - offset)) },
    oncomment () {},
    ondeclaration () {},
    onprocessinginstruction () {},
    onend () {}
  })
  tokenizer.write(markup)
  tokenizer.end()
}
