// Enricher: `data.insights` (docs/api.md §3.4). `technologies` is matched on the page as loaded (the response's HTML
// and headers, or the rendered DOM, its response headers and what the page gave: JS globals, DOM properties, the
// browser's cookies) against the bundled fingerprint set (src/insights/). `lighthouse` is added after it, by its own
// enricher (lighthouse.ts); a part turned off is absent.
import { bundledFingerprints } from '../../insights/fingerprints.ts'
import { detectTechnologies } from '../../insights/detect.ts'
import { pageSignals } from '../../insights/signals.ts'
import type { Enricher } from './enricher.ts'

export const insightsEnricher: Enricher = {
  name: 'insights',
  applies: (_extraction, outputs) => outputs.insights !== false,
  async enrich (extraction, { outputs, page, signal }) {
    if (outputs.insights === false) return
    const insights: Record<string, unknown> = {}
    if (outputs.insights.technologies) {
      const document = page.document
      const html = document?.kind === 'html' ? document : undefined
      insights.technologies = await detectTechnologies(bundledFingerprints(), pageSignals({
        url: page.url,
        headers: page.headers,
        html: html?.source ?? '',
        ...(html === undefined ? {} : { $: html.$ }),
        ...(page.globals === undefined ? {} : { globals: page.globals })
      }), signal)
    }
    extraction.data.insights = insights
  }
}
