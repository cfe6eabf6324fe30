// The loaded target as the `data` rules and the metadata read it (docs/api.md §3.3): decoded and parsed once per
// request, the parse only when something reads the tree. An HTML page is held to the DOM bounds (util/dom-limits.ts)
// and parsed with cheerio, its base URI the page's URL, and the same document is handed to metascraper. A JSON or
// text target is its text, shown as one `<pre>` so that rules without a selector read it whole; when the browser
// rendered it, the text is taken back out of Chromium's viewer. Other targets (images, PDF, media) are not read by
// rules.
//
// Live form values: when a rule reads `val`, the browser's serialization gives each form field an attribute of
// pagecast's (a `data-pagecast-val-<random>` name, new each time: browser/page/serialize.ts) holding the field's
// live value. The parse moves those values into `liveValues` and the attribute out of the tree, and `source` is the
// markup without it, so the page's own attributes and every other output (`html`, `outerHTML`, Markdown, the
// metadata) are the page's, and only `val` sees the live values.
import { load, type CheerioAPI } from 'cheerio'
import { classifyTarget, decodeHtml, type ParsedHtml } from '../metadata/extractor.ts'
import { mimeOf } from '../media/objects.ts'
import { boundMarkup } from '../util/dom-limits.ts'

export type DocumentKind = 'html' | 'json' | 'text' | 'other'

/** A form field's value as the page held it (what `val` reads): null when it has none (a chosen option without `value`). */
export type LiveValue = string | string[] | null

/** The mark's shape (browser/page/serialize.ts newValueMark). */
const VALUE_MARK = /^data-pagecast-val-[0-9a-f]{16}$/

export interface TargetDocument {
  kind: DocumentKind
  /** The page's final URL. */
  url: string
  /** The decoded HTML (html), or the body's text (json, text); '' otherwise. */
  source: string
  /** The parsed document (parsed on first use); an empty one for other targets. */
  readonly $: CheerioAPI
  /** The live form values by element of `$` (filled when `$` is parsed); empty unless the browser gave them. */
  readonly liveValues: WeakMap<object, LiveValue>
}

export interface LoadedBody {
  url: string
  headers: Record<string, string>
  body: Buffer
  /** Whether the body is the browser's serialized DOM (prerender) rather than the response itself. */
  rendered: boolean
  /** The attribute the body's form fields carry their live values under (browser only, when a rule reads `val`). */
  valueMark?: string
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json$/

function kindOf (headers: Record<string, string>, body: Buffer): DocumentKind {
  if (classifyTarget(headers, body) === 'html') return 'html'
  const mime = mimeOf(headers['content-type'])
  if (JSON_TYPE.test(mime)) return 'json'
  if (mime.startsWith('text/')) return 'text'
  return 'other'
}

/**
 * A document whose `$` is parsed on first use: a whole-page Markdown conversion reads `source` and never needs it.
 * `parse` may note live values in the map it is given.
 */
function lazyDocument (kind: DocumentKind, url: string, source: string, parse: (live: WeakMap<object, LiveValue>) => CheerioAPI): TargetDocument {
  let parsed: CheerioAPI | undefined
  const liveValues = new WeakMap<object, LiveValue>()
  return {
    kind,
    url,
    source,
    liveValues,
    get $ () {
      parsed ??= parse(liveValues)
      return parsed
    }
  }
}

function liveValueOf (json: string): LiveValue | undefined {
  let value: unknown
  try { value = JSON.parse(json) } catch { return undefined }
  if (value === null || typeof value === 'string') return value
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return value
  return undefined
}

/** Parses marked HTML: each marked element's live value noted in `live`, and its mark removed from the tree. */
function parseMarked (html: string, url: string, mark: string, live: WeakMap<object, LiveValue>): CheerioAPI {
  const $ = load(html, { baseURI: url })
  $(`[${mark}]`).each((_i, element) => {
    const field = $(element)
    const value = liveValueOf(field.attr(mark) ?? '')
    if (value !== undefined) live.set(element, value)
    field.removeAttr(mark)
  })
  return $
}

/** The markup without `mark`'s attributes: their serialization is exactly ` name="value"`, `"` escaped in the value. */
function withoutMark (html: string, mark: string): string {
  return html.replace(new RegExp(` ${mark}="[^"]*"`, 'g'), '')
}

/** Decodes the loaded body once; its parse, shared by the metadata and the rules, happens once, when first needed. `maxBytes` is MAX_HTML_BYTES. */
export function parseTarget (loaded: LoadedBody, maxBytes: number): TargetDocument {
  const kind = kindOf(loaded.headers, loaded.body)
  if (kind === 'other') return lazyDocument(kind, loaded.url, '', () => load('', { baseURI: loaded.url }))
  const decoded = decodeHtml(loaded.body, loaded.headers['content-type'], maxBytes)
  if (kind === 'html') {
    // Held to the DOM bounds before any parser builds a tree of it (util/dom-limits.ts).
    const html = boundMarkup(decoded)
    const mark = loaded.rendered && loaded.valueMark !== undefined && VALUE_MARK.test(loaded.valueMark) ? loaded.valueMark : undefined
    if (mark === undefined) return lazyDocument(kind, loaded.url, html, () => load(html, { baseURI: loaded.url }))
    return lazyDocument(kind, loaded.url, withoutMark(html, mark), (live) => parseMarked(html, loaded.url, mark, live))
  }
  // Chromium shows a JSON or text response inside its own page, the text in the first <pre>.
  const text = loaded.rendered ? load(decoded)('pre').first().text() : decoded
  return lazyDocument(kind, loaded.url, text, () => {
    const $ = load('<!doctype html><html><head></head><body><pre></pre></body></html>', { baseURI: loaded.url })
    $('pre').text(text)
    return $
  })
}

/** The parsed HTML for the metadata extractor, when the target is HTML. */
export function parsedHtmlOf (document: TargetDocument): ParsedHtml | undefined {
  return document.kind === 'html' ? { html: document.source, dom: document.$ as unknown as ParsedHtml['dom'] } : undefined
}
