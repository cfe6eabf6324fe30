// An oEmbed response made into `data.iframe` (docs/api.md §3.4): the JSON or XML body read into its fields, the
// embed HTML chosen by type, and the `<script>` tags moved out of the HTML into `scripts`.
//
// Decided here:
// - `rich` and `video` must carry `html`; without it there is nothing to embed (null).
// - `photo` uses its `html` when the provider sends one, else an `<img>` built from `url` (http(s) only), `width`,
//   `height` and `title`, every value escaped.
// - `link` (and any other type) is used only when it carries `html`; a link has nothing to embed otherwise (null).
// - A body that is not a JSON object, or XML without an `<oembed>` root, is null.
// - Scripts with an http(s) `src` (resolved against the endpoint, so `//host/x.js` becomes absolute) go to `scripts`;
//   inline scripts and those with another scheme are dropped from `html` and not listed: HTML inserted into a page
//   (`innerHTML`, as embedding clients do) never runs them, and `scripts` has no place for code.
import { load } from 'cheerio'
import { boundMarkup, type DomBounds } from '../util/dom-limits.ts'
import { escapeHtml } from '../util/html.ts'
import { toHttpUrl } from '../util/url.ts'

/**
 * An answer is parsed in the service (it is small: OEMBED_MAX_BYTES), held to bounds far below a page's, since an
 * embed is an iframe or a few elements: a hostile endpoint's markup costs a few milliseconds at most.
 */
const ANSWER_BOUNDS: DomBounds = { depth: 64, elements: 5_000 }

export interface IframeScript {
  src: string
  async: boolean
  defer: boolean
  charset: string | null
}

export interface Iframe {
  html: string
  scripts: IframeScript[]
}

/** The response's members as strings (numbers written as numbers are kept as their text). */
export type OembedFields = Record<string, string>

function fieldsOf (entries: Iterable<[string, unknown]>): OembedFields {
  const fields: OembedFields = {}
  for (const [name, value] of entries) {
    if (typeof value === 'string') fields[name.toLowerCase()] = value
    else if (typeof value === 'number' && Number.isFinite(value)) fields[name.toLowerCase()] = String(value)
  }
  return fields
}

/** A JSON body's object members; null when it is not a JSON object. */
export function parseJsonResponse (text: string): OembedFields | null {
  let parsed: unknown
  try {
    parsed = JSON.parse(text.replace(/^\uFEFF/, ''))
  } catch {
    return null
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null
  return fieldsOf(Object.entries(parsed))
}

/** An XML body's `<oembed>` children (entities decoded, CDATA read as text); null without that root. */
export function parseXmlResponse (text: string): OembedFields | null {
  // The endpoint is the page's choice: its answer is held to the DOM bounds before a tree is built of it.
  const $ = load(boundMarkup(text.replace(/^\uFEFF/, ''), { xml: true, bounds: ANSWER_BOUNDS }), { xml: { xmlMode: true, decodeEntities: true } })
  const root = $.root().children().first()
  if (root.length === 0 || root.prop('tagName')?.toLowerCase() !== 'oembed') return null
  const entries: Array<[string, unknown]> = []
  root.children().each((_i, element) => { entries.push([element.tagName, $(element).text()]) })
  return fieldsOf(entries)
}

/** The body read by its own shape: XML when it starts with `<`, else JSON (providers mislabel either way). */
export function parseResponse (text: string): OembedFields | null {
  return text.trimStart().startsWith('<') ? parseXmlResponse(text) : parseJsonResponse(text)
}

function photoHtml (fields: OembedFields, base: string): string | null {
  const src = fields.url === undefined ? undefined : toHttpUrl(fields.url, base)
  if (src === undefined) return null
  const size = (name: 'width' | 'height'): string => {
    const value = fields[name]
    return value !== undefined && /^\d+$/.test(value.trim()) ? ` ${name}="${value.trim()}"` : ''
  }
  return `<img src="${escapeHtml(src)}"${size('width')}${size('height')} alt="${escapeHtml(fields.title ?? '')}">`
}

/** The embed HTML a response gives, by its type; null when it gives none. */
export function embedHtmlOf (fields: OembedFields, base: string): string | null {
  const html = fields.html !== undefined && fields.html.trim() !== '' ? fields.html : null
  const type = (fields.type ?? '').toLowerCase()
  if (type === 'photo') return html ?? photoHtml(fields, base)
  return html
}

/** `html` with its `<script>` tags taken out, and the external ones listed in document order. */
export function splitScripts (html: string, base: string): Iframe {
  if (!/<script/i.test(html)) return { html, scripts: [] }
  const $ = load(boundMarkup(html, { bounds: ANSWER_BOUNDS }), { baseURI: base }, false)
  const scripts: IframeScript[] = []
  $('script').each((_i, element) => {
    const script = $(element)
    const written = (script.attr('src') ?? '').trim()
    const src = written === '' ? undefined : toHttpUrl(written, base)
    if (src !== undefined) {
      const charset = script.attr('charset')
      scripts.push({
        src,
        async: script.attr('async') !== undefined,
        defer: script.attr('defer') !== undefined,
        charset: charset === undefined || charset.trim() === '' ? null : charset.trim()
      })
    }
    script.remove()
  })
  return { html: $.html(), scripts }
}

/** The iframe for a response body fetched from `endpoint`; null when the body gives nothing to embed. */
export function iframeOf (body: string, endpoint: string): Iframe | null {
  const fields = parseResponse(body)
  if (fields === null) return null
  const html = embedHtmlOf(fields, endpoint)
  return html === null ? null : splitScripts(html, endpoint)
}
