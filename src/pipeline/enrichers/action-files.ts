// Enricher: what the `actions` step recorded (browser/steps/actions.ts) as `data.actions` (docs/firecrawl.md#actions):
// each screenshot and PDF stored under a key of its own (its place in the list, under the entry's cache key) and
// described as a media object like `data.screenshot`; the scrapes and script values as they are.
import { contentDispositionOf, fileKeyOf, type StoredFile } from '../../storage/index.ts'
import { toSizePretty } from '../../media/objects.ts'
import type { CapturedFile } from '../../browser/steps/index.ts'
import type { Enricher, EnrichContext, Extraction } from './enricher.ts'

async function store (extraction: Extraction, { deps, cacheKey, ttl }: EnrichContext, path: `actions.${string}`, file: CapturedFile): Promise<Record<string, unknown>> {
  const maxAgeSeconds = Math.max(1, Math.floor(ttl / 1000))
  const key = fileKeyOf(cacheKey, path, file.ext)
  const url = await deps.storage.put(key, file.body, { contentType: file.contentType, maxAgeSeconds })
  const contentDisposition = contentDispositionOf(key)
  const stored: StoredFile = { body: file.body, contentType: file.contentType, size: file.body.length, maxAgeSeconds, ...(contentDisposition === undefined ? {} : { contentDisposition }) }
  extraction.files[path] = key
  extraction.bytes[path] = stored
  return { url, type: file.ext, size: file.body.length, size_pretty: toSizePretty(file.body.length), ...file.details }
}

export const actionFilesEnricher: Enricher = {
  name: 'actions',
  applies: (extraction) => extraction.actions !== undefined,
  async enrich (extraction, context) {
    const actions = extraction.actions
    if (actions === undefined) return
    const [screenshots, pdfs] = await Promise.all([
      Promise.all(actions.screenshots.map(async (file, i) => await store(extraction, context, `actions.screenshots.${i}`, file))),
      Promise.all(actions.pdfs.map(async (file, i) => await store(extraction, context, `actions.pdfs.${i}`, file)))
    ])
    extraction.data.actions = { screenshots, scrapes: actions.scrapes, javascriptReturns: actions.javascriptReturns, pdfs }
  }
}
