// "Is this HTML?", decided once for the whole service: the plain fetch (pipeline/: whether `prerender=auto` may hand
// over to the browser, whether a body over MAX_HTML_BYTES is refused), the metadata (metadata/extractor.ts: the
// target's kind, the root page read for a favicon) and the `data` rules' document (extract/document.ts).
//
// One rule: a content type that names HTML (text/html, application/xhtml+xml) is HTML; one that says nothing about
// the bytes (none, or an octet-stream) lets the bytes decide, by the tags the WHATWG MIME sniffing algorithm takes as
// HTML; any other type (text/plain, JSON, an image) is not HTML, whatever the bytes look like.
import { mimeOf } from './objects.ts'

/** Content types that name HTML. */
export const HTML_TYPES: ReadonlySet<string> = new Set(['text/html', 'application/xhtml+xml'])

/** Content types that say nothing about a document's bytes: the bytes decide whether it is HTML. */
export const SNIFFABLE_TYPES: ReadonlySet<string> = new Set(['', 'application/octet-stream', 'binary/octet-stream', 'application/unknown'])

/** How much of the body the sniffing reads (WHATWG MIME sniffing's resource header). */
const SNIFF_BYTES = 512

// The tags the WHATWG MIME sniffing algorithm takes as HTML, each followed by a space or `>`.
const HTML_SIGNATURE = /^<(?:!doctype html|html|head|script|iframe|h1|div|font|table|a|style|title|b|body|br|p|!--)[\s>]/i

/** Whether the body's first bytes (a byte-order mark and leading white space aside) open an HTML document. */
export function looksLikeHtml (body: Uint8Array): boolean {
  const head = Buffer.from(body.buffer, body.byteOffset, Math.min(body.length, SNIFF_BYTES)).toString('latin1')
  return HTML_SIGNATURE.test(head.replace(/^\u00EF\u00BB\u00BF|^\uFEFF/, '').trimStart())
}

/** Whether a response with this content-type header value and body is an HTML document. */
export function isHtml (contentType: string | undefined, body: Uint8Array): boolean {
  const mime = mimeOf(contentType)
  if (HTML_TYPES.has(mime)) return true
  return SNIFFABLE_TYPES.has(mime) && looksLikeHtml(body)
}
