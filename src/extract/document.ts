// The loaded target as the `data` rules and the metadata read it (docs/api.md §3.3): decoded and parsed once per
// request, the parse only when something reads the tree. An HTML page is held to the DOM bounds (util/dom-limits.ts)
// and parsed with cheerio, its base URI the page's URL, and the same document is handed to metascraper. A JSON or
// text target is its text, shown as one `<pre>` so that rules without a selector read it whole; when the browser
// rendered it, the text is taken back out of Chromium's viewer. Other targets (images, PDF, media) are not read by
// rules.
import { load, type CheerioAPI } from 'cheerio'
import { classifyTarget, decodeHtml, type ParsedHtml } from '../metadata/extractor.ts'
import { mimeOf } from '../media/objects.ts'
import { boundMarkup } from '../util/dom-limits.ts'

export type DocumentKind = 'html' | 'json' | 'text' | 'other'

export interface TargetDocument {
  kind: DocumentKind
  /** The page's final URL. */
  url: string
  /** The decoded HTML (html), or the body's text (json, text); '' otherwise. */
  source: string
  /** The parsed document (parsed on first use); an empty one for other targets. */
  readonly $: CheerioAPI
}

export interface LoadedBody {
  url: string
  headers: Record<string, string>
  body: Buffer
  /** Whether the body is the browser's serialized DOM (prerender) rather than the response itself. */
  rendered: boolean
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json$/

function kindOf (headers: Record<string, string>, body: Buffer): DocumentKind {
  if (classifyTarget(headers, body) === 'html') return 'html'
  const mime = mimeOf(headers['content-type'])
  if (JSON_TYPE.test(mime)) return 'json'
  if (mime.startsWith('text/')) return 'text'
  return 'other'
}

/** A document whose `$` is parsed on first use: a whole-page Markdown conversion reads `source` and never needs it. */
function lazyDocument (kind: DocumentKind, url: string, source: string, parse: () => CheerioAPI): TargetDocument {
  let parsed: CheerioAPI | undefined
  return {
    kind,
    url,
    source,
    get $ () {
      parsed ??= parse()
      return parsed
    }
  }
}

/** Decodes the loaded body once; its parse, shared by the metadata and the rules, happens once, when first needed. `maxBytes` is MAX_HTML_BYTES. */
export function parseTarget (loaded: LoadedBody, maxBytes: number): TargetDocument {
  const kind = kindOf(loaded.headers, loaded.body)
  if (kind === 'other') return lazyDocument(kind, loaded.url, '', () => load('', { baseURI: loaded.url }))
  const decoded = decodeHtml(loaded.body, loaded.headers['content-type'], maxBytes)
  if (kind === 'html') {
    // Held to the DOM bounds before any parser builds a tree of it (util/dom-limits.ts).
    const html = boundMarkup(decoded)
    return lazyDocument(kind, loaded.url, html, () => load(html, { baseURI: loaded.url }))
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
