// Enricher: `data.iframe` (docs/api.md §3.4), the page's oEmbed embed as `{html, scripts}`, or null when no endpoint
// is found or none answers with something to embed. The page reader found the discovery links in the document it
// parsed, so they are read alike from the fetched HTML and from the rendered DOM; the endpoint is called under the
// request's signal.
import type { Enricher } from './enricher.ts'

export const iframeEnricher: Enricher = {
  name: 'iframe',
  applies: (_extraction, outputs) => outputs.iframe !== false,
  async enrich (extraction, { deps, outputs, page, signal }) {
    if (outputs.iframe === false) return
    const discovered = page.read?.oembed
    extraction.data.iframe = await deps.oembed.find({
      url: page.url,
      requestedUrl: page.requestedUrl,
      params: outputs.iframe,
      signal,
      ...(discovered === undefined ? {} : { discovered })
    })
  }
}
