// The enrichers, in the order they run on the extracted result (docs/api.md §1.4 step 10). A new piece of work on the
// result is one entry here and one file.
import type { EnrichContext, Enricher, Extraction } from './enricher.ts'
import { storedFilesEnricher } from './stored-files.ts'
import { actionFilesEnricher } from './action-files.ts'
import { iframeEnricher } from './iframe.ts'
import { paletteEnricher } from './palette.ts'
import { insightsEnricher } from './insights.ts'
import { lighthouseEnricher } from './lighthouse.ts'

export type { EnrichContext, EnrichDeps, Enricher, Extraction, LoadedPage } from './enricher.ts'

export const ENRICHERS: readonly Enricher[] = Object.freeze([
  storedFilesEnricher,
  actionFilesEnricher,
  iframeEnricher,
  // After the files are stored: the screenshot is one of the image-like media objects it colours.
  paletteEnricher,
  insightsEnricher,
  // Last: it adds to `data.insights`, and holds a browser slot for seconds.
  lighthouseEnricher
])

/** Runs the enrichers that apply, in order, timing each under its name. */
export async function enrich (extraction: Extraction, context: EnrichContext): Promise<void> {
  for (const enricher of ENRICHERS) {
    if (!enricher.applies(extraction, context.outputs)) continue
    const t = performance.now()
    await enricher.enrich(extraction, context)
    context.timings[enricher.name] = performance.now() - t
  }
}
