// oEmbed discovery (oembed.com §4): the page names its endpoints in `<link rel="alternate">` tags typed
// `application/json+oembed` or `text/xml+oembed` (`application/xml+oembed` is seen too). Read from the document
// parsed once per request, so the fetched HTML and the rendered DOM are read alike.
import type { CheerioAPI } from 'cheerio'
import { toHttpUrl } from '../util/url.ts'

export type OembedFormat = 'json' | 'xml'

export interface OembedEndpoint {
  /** The full endpoint URL, with the page's URL already in its query when it came from discovery. */
  url: string
  format: OembedFormat
  /** Where it came from: the page's link, or the registry. */
  source: 'discovery' | 'registry'
}

const TYPES: Readonly<Record<string, OembedFormat>> = {
  'application/json+oembed': 'json',
  'text/xml+oembed': 'xml',
  'application/xml+oembed': 'xml'
}

/** The first JSON link, then the first XML link, of the document; relative hrefs resolved against `baseUrl`. */
export function discoverEndpoints ($: CheerioAPI, baseUrl: string): OembedEndpoint[] {
  const found: Partial<Record<OembedFormat, OembedEndpoint>> = {}
  $('link[href]').each((_i, element) => {
    const rel = ($(element).attr('rel') ?? '').toLowerCase().split(/\s+/)
    if (!rel.includes('alternate')) return
    const format = TYPES[($(element).attr('type') ?? '').trim().toLowerCase()]
    if (format === undefined || found[format] !== undefined) return
    const url = toHttpUrl($(element).attr('href') ?? '', baseUrl)
    if (url !== undefined) found[format] = { url, format, source: 'discovery' }
  })
  return [found.json, found.xml].filter((endpoint): endpoint is OembedEndpoint => endpoint !== undefined)
}
