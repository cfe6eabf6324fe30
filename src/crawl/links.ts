// The links of an HTML page, for discovery: `<a href>` and `<area href>`, resolved against `<base href>` (the first
// one, as browsers do) or the page's URL, http(s) only, without fragments, each once, in document order. Read with
// htmlparser2's streaming parser (linear in the markup; nothing is built but the list), at most `max` links.
import { Parser } from 'htmlparser2'
import { canonicalUrl } from './url.ts'

/** Links kept per page at most. */
export const MAX_LINKS_PER_PAGE = 10_000

export function extractLinks (html: string, pageUrl: string, max = MAX_LINKS_PER_PAGE): string[] {
  const links: string[] = []
  const seen = new Set<string>()
  let base = pageUrl
  let baseSet = false
  const parser = new Parser({
    onopentag (name, attributes) {
      if (name === 'base' && !baseSet && attributes.href !== undefined) {
        baseSet = true
        const resolved = canonicalUrl(attributes.href, { base: pageUrl })
        if (resolved !== undefined) base = resolved
        return
      }
      if ((name !== 'a' && name !== 'area') || attributes.href === undefined || links.length >= max) return
      const url = canonicalUrl(attributes.href, { base })
      if (url === undefined || seen.has(url)) return
      seen.add(url)
      links.push(url)
    }
  }, { decodeEntities: true })
  parser.end(html)
  return links
}
