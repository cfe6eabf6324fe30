// Enricher: `data.insights.lighthouse` (docs/api.md §3.4), a Lighthouse report of the target, run with a browser of
// its own (browser/lighthouse/) after the page was loaded: in a slot of the browser queue, one run at a time, within
// the request's deadline, every request it makes under the address guard and through the request's `proxy`.
// `output=json` gives the report object (LHR); `html` and `csv` Lighthouse's own report text, unchanged.
import { currentEgress } from '../../net/egress-scope.ts'
import type { OutputOptions } from '../../schemas/option-groups.ts'
import type { Enricher } from './enricher.ts'

const asksLighthouse = (outputs: Readonly<OutputOptions>): boolean => outputs.insights !== false && outputs.insights.lighthouse !== false

export const lighthouseEnricher: Enricher = {
  name: 'lighthouse',
  applies: (_extraction, outputs) => asksLighthouse(outputs),
  // The report is of the page as a browser loads it: the request is rendered too (docs/api.md §3.6).
  needsBrowser: asksLighthouse,
  async enrich (extraction, { deps, outputs, page, signal, deadline }) {
    if (outputs.insights === false || outputs.insights.lighthouse === false) return
    const scope = currentEgress()
    const result = await deps.lighthouse.run(page.requestedUrl, outputs.insights.lighthouse, { signal, deadline, proxy: scope?.proxy })
    // The proxy carried the run's requests (`-proxy` in x-fetch-mode).
    if (scope !== undefined && result.proxied > 0) scope.carried = true
    const insights = extraction.data.insights
    if (typeof insights === 'object' && insights !== null && !Array.isArray(insights)) {
      (insights as Record<string, unknown>).lighthouse = result.report
    } else {
      extraction.data.insights = { lighthouse: result.report }
    }
  }
}
