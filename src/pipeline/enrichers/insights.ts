// Enricher: `data.insights` (docs/api.md §3.4). `technologies` is matched on the page as loaded (the response's HTML
// and headers, or the rendered DOM, its response headers and what the page gave: JS globals, DOM properties, the
// browser's cookies) against the bundled fingerprint set (src/insights/). `lighthouse` is added after it, by its own
// enricher (lighthouse.ts); a part turned off is absent.
import type { Enricher } from './enricher.ts'

export const insightsEnricher: Enricher = {
  name: 'insights',
  applies: (_extraction, outputs) => outputs.insights !== false,
  async enrich (extraction, { outputs, page }) {
    if (outputs.insights === false) return
    const insights: Record<string, unknown> = {}
    // Matched by the page reader, on the document it parsed (src/reader/read-page.ts).
    if (outputs.insights.technologies) insights.technologies = page.read?.technologies ?? []
    extraction.data.insights = insights
  }
}
