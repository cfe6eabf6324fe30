// The links of an HTML page, for discovery: `<a href>` and `<area href>`, resolved against `<base href>` (the first
// one, as browsers do) or the page's URL, http(s) only, without fragments, each once, in document order, at most
// `max`. Read in one linear pass of the tokenizer (scan.ts); nothing is built but the list.
import { scanMarkup } from './scan.ts'
import { canonicalUrl } from './url.ts'

/** Links kept per page at most. */
export const MAX_LINKS_PER_PAGE = 10_000

export function extractLinks (html: string, pageUrl: string, max = MAX_LINKS_PER_PAGE): string[] {
  const links: string[] = []
  const seen = new Set<string>()
  let base = pageUrl
  let baseSet = false
  scanMarkup(html, false, {
    open: (name) => name === 'a' || name === 'area' || (name === 'base' && !baseSet),
    attributes (name, attributes) {
      const href = attributes.href
      if (href === undefined) return
      if (name === 'base') {
        baseSet = true
        base = canonicalUrl(href, { base: pageUrl }) ?? base
        return
      }
      if (links.length >= max) return
      const url = canonicalUrl(href, { base })
      if (url === undefined || seen.has(url)) return
      seen.add(url)
      links.push(url)
    },
    close () {}
  })
  return links
}
