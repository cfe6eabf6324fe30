// What `insights.technologies` reads of a loaded page (docs/api.md §3.4), gathered once: the HTML as loaded (the
// response, or the rendered DOM), the response headers, the cookies, the script URLs, the inline scripts and
// styles, the text, the meta tags and, when the page was rendered, the JS globals and DOM properties read in it
// and the browser's cookies. Text inputs are cut to a size, and short values (script URLs, meta) to what a pattern
// reads of them (MAX_VALUE_CHARS), so the cost of the patterns is bounded whatever the page weighs (patterns.ts).
import type { CheerioAPI } from 'cheerio'
import { MAX_VALUE_CHARS } from './patterns.ts'

/** Characters of the HTML the `html` patterns read: its start, where generators, stylesheets and scripts sit. */
export const MAX_HTML_CHARS = 512 * 1024
/** Characters of inline script, of inline style and of text that their patterns read. */
export const MAX_SCRIPT_CHARS = 256 * 1024
export const MAX_TEXT_CHARS = 128 * 1024
/** Script URLs read at most. */
export const MAX_SCRIPT_SRCS = 500

export interface Cookie {
  readonly name: string
  readonly value: string
}

/** What the rendered page gives (the `technologies` value producer): read in the page after the steps. */
export interface PageGlobals {
  /** The value of each JS global chain that exists, as text ('' for objects and functions). */
  readonly js: Readonly<Record<string, string>>
  /** By selector: each DOM property checked that some matching element has, as text. */
  readonly properties: Readonly<Record<string, Readonly<Record<string, string>>>>
  /** The browser's cookies for the page, HttpOnly ones included. */
  readonly cookies: readonly Cookie[]
}

export interface PageSignals {
  readonly url: string
  readonly html: string
  /** Lower-case names, repeats joined by `, ` (as the envelope has them). */
  readonly headers: Readonly<Record<string, string>>
  readonly cookies: readonly Cookie[]
  /** Lower-case `name` or `property` of each meta tag, and its content. */
  readonly meta: ReadonlyArray<readonly [string, string]>
  readonly scriptSrc: readonly string[]
  readonly scripts: string
  readonly css: string
  readonly text: string
  /** The parsed document, for `dom` selectors (absent when the target is not HTML). */
  readonly $?: CheerioAPI
  /** Present when the page was rendered. */
  readonly globals?: PageGlobals
}

/**
 * The cookies of `set-cookie` headers joined with `, `: a comma starts a new cookie only where a `name=` follows
 * it, so the commas of an `Expires` date stay inside their cookie.
 */
export function parseSetCookie (header: string | undefined): Cookie[] {
  if (header === undefined || header === '') return []
  return header.split(/,\s*(?=[^;,=\s]+=)/).flatMap((cookie) => {
    const pair = cookie.split(';', 1)[0] ?? ''
    const eq = pair.indexOf('=')
    if (eq <= 0) return []
    return [{ name: pair.slice(0, eq).trim(), value: pair.slice(eq + 1).trim() }]
  })
}

export interface SignalSource {
  url: string
  headers: Readonly<Record<string, string>>
  /** The decoded HTML, '' for a target that is not HTML. */
  html: string
  $?: CheerioAPI
  globals?: PageGlobals
}

function capped (parts: Iterable<string>, max: number): string {
  let out = ''
  for (const part of parts) {
    if (out.length >= max) break
    out += (out === '' ? '' : '\n') + part
  }
  return out.slice(0, max)
}

/** Gathers the signals of a page, reading its parsed document once. */
export function pageSignals (source: SignalSource): PageSignals {
  const { $ } = source
  const cookies = new Map<string, Cookie>()
  for (const cookie of [...parseSetCookie(source.headers['set-cookie']), ...(source.globals?.cookies ?? [])]) cookies.set(cookie.name, cookie)
  const meta: Array<[string, string]> = []
  const scriptSrc: string[] = []
  const inline: string[] = []
  const styles: string[] = []
  let text = ''
  if ($ !== undefined) {
    $('meta').each((_i, el) => {
      const name = $(el).attr('name') ?? $(el).attr('property')
      const content = $(el).attr('content')
      if (name !== undefined && content !== undefined) meta.push([name.toLowerCase().slice(0, MAX_VALUE_CHARS), content.slice(0, MAX_VALUE_CHARS)])
    })
    $('script').each((_i, el) => {
      const src = $(el).attr('src')
      if (src !== undefined) {
        if (scriptSrc.length < MAX_SCRIPT_SRCS) scriptSrc.push(absolute(src, source.url).slice(0, MAX_VALUE_CHARS))
      } else {
        inline.push($(el).text())
      }
    })
    $('style').each((_i, el) => { styles.push($(el).text()) })
    text = visibleText($('body').get()).replace(/\s+/g, ' ').slice(0, MAX_TEXT_CHARS)
  }
  return {
    url: source.url,
    html: source.html.slice(0, MAX_HTML_CHARS),
    headers: source.headers,
    cookies: [...cookies.values()],
    meta,
    scriptSrc,
    scripts: capped(inline, MAX_SCRIPT_CHARS),
    css: capped(styles, MAX_SCRIPT_CHARS),
    text,
    ...($ === undefined ? {} : { $ }),
    ...(source.globals === undefined ? {} : { globals: source.globals })
  }
}

const HIDDEN_TEXT = new Set(['script', 'style', 'noscript', 'template'])

/** The part of a parsed node (domhandler's) that the text walk reads. */
interface TextNode {
  type: string
  data?: string
  name?: string
  children?: readonly TextNode[]
}

/** The text of the nodes, without scripts and styles (as `innerText` has it), up to MAX_TEXT_CHARS. */
function visibleText (roots: readonly TextNode[]): string {
  const parts: string[] = []
  let length = 0
  const stack = [...roots].reverse()
  while (stack.length > 0 && length < MAX_TEXT_CHARS) {
    const node = stack.pop()
    if (node === undefined) break
    if (node.type === 'text' && node.data !== undefined) {
      parts.push(node.data)
      length += node.data.length
    } else if (node.children !== undefined && !(node.name !== undefined && HIDDEN_TEXT.has(node.name))) {
      for (let i = node.children.length - 1; i >= 0; i--) {
        const child = node.children[i]
        if (child !== undefined) stack.push(child)
      }
    }
  }
  return parts.join(' ')
}

function absolute (src: string, base: string): string {
  try {
    return new URL(src, base).href
  } catch {
    return src
  }
}
