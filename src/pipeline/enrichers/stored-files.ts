// Enricher: the producers' files stored under deterministic keys and described as media objects (docs/api.md §3.2,
// §8): `{url, type, size, size_pretty, ...details}`, in the order the producers ran.
import { contentDispositionOf, fileKeyOf, type StoredFile } from '../../storage/index.ts'
import { toSizePretty } from '../../media/objects.ts'
import type { FileKind, GeneratedFile } from '../../browser/producers/index.ts'
import type { Enricher } from './enricher.ts'

export const storedFilesEnricher: Enricher = {
  name: 'store',
  applies: (extraction) => Object.keys(extraction.generated).length > 0,
  async enrich (extraction, { deps, reply, cacheKey, ttl }) {
    const maxAgeSeconds = Math.max(1, Math.floor(ttl / 1000))
    const entries = Object.entries(extraction.generated) as Array<[FileKind, GeneratedFile]>
    const described = await Promise.all(entries.map(async ([kind, file]) => {
      const filename = reply.filename?.[kind]
      const key = fileKeyOf(cacheKey, kind, file.ext, filename)
      const url = await deps.storage.put(key, file.body, { contentType: file.contentType, maxAgeSeconds, ...(filename === undefined ? {} : { filename }) })
      const contentDisposition = contentDispositionOf(key, filename)
      const stored: StoredFile = { body: file.body, contentType: file.contentType, size: file.body.length, maxAgeSeconds, ...(contentDisposition === undefined ? {} : { contentDisposition }) }
      const media = { url, type: file.ext, size: file.body.length, size_pretty: toSizePretty(file.body.length), ...file.details }
      return { kind, key, stored, media }
    }))
    for (const { kind, key, stored, media } of described) {
      extraction.data[kind] = media
      extraction.files[kind] = key
      extraction.bytes[kind] = stored
    }
  }
}
