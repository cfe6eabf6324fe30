// Generated files: stored under deterministic keys, described as media objects (API.md §3.2, §8).
import type { AppContext } from '../context.ts'
import type { ExtractOptions } from '../schemas/options.ts'
import { contentDispositionOf, fileKeyOf, type FileExt, type StoredFile } from '../storage/index.ts'
import { toSizePretty } from '../metadata/media.ts'

import type { Pdf, Screenshot } from '../browser/capture.ts'

const CONTENT_TYPES: Record<FileExt, string> = { png: 'image/png', jpg: 'image/jpeg', webp: 'image/webp', pdf: 'application/pdf' }

export interface StoredFiles {
  data: Record<string, unknown>
  /** Storage keys by the dot path of their media object in `data`. */
  keys: Record<string, string>
  /** The bytes just stored, by the same paths, so this request's answer needs no download. */
  bytes: Record<string, StoredFile>
}

/** Uploads the files a computation made and returns their `data` members and storage keys. */
export async function storeFiles (
  ctx: AppContext,
  options: ExtractOptions,
  cacheKey: string,
  ttl: number,
  files: { screenshot?: Screenshot | undefined, pdf?: Pdf | undefined }
): Promise<StoredFiles> {
  const maxAgeSeconds = Math.max(1, Math.floor(ttl / 1000))
  const data: Record<string, unknown> = {}
  const keys: StoredFiles['keys'] = {}
  const bytes: StoredFiles['bytes'] = {}
  const remember = (path: string, key: string, body: Buffer, contentType: string, filename: string | undefined): void => {
    keys[path] = key
    const contentDisposition = contentDispositionOf(key, filename)
    bytes[path] = { body, contentType, size: body.length, maxAgeSeconds, ...(contentDisposition === undefined ? {} : { contentDisposition }) }
  }
  const uploads: Array<Promise<void>> = []
  if (files.screenshot !== undefined) {
    const shot = files.screenshot
    const filename = options.filename?.screenshot
    const key = fileKeyOf(cacheKey, 'screenshot', shot.type, filename)
    remember('screenshot', key, shot.body, CONTENT_TYPES[shot.type], filename)
    uploads.push(ctx.storage.put(key, shot.body, { contentType: CONTENT_TYPES[shot.type], maxAgeSeconds, ...(filename === undefined ? {} : { filename }) }).then(url => {
      data.screenshot = { url, type: shot.type, size: shot.body.length, size_pretty: toSizePretty(shot.body.length), width: shot.width, height: shot.height }
    }))
  }
  if (files.pdf !== undefined) {
    const pdf = files.pdf
    const filename = options.filename?.pdf
    const key = fileKeyOf(cacheKey, 'pdf', 'pdf', filename)
    remember('pdf', key, pdf.body, CONTENT_TYPES.pdf, filename)
    uploads.push(ctx.storage.put(key, pdf.body, { contentType: CONTENT_TYPES.pdf, maxAgeSeconds, ...(filename === undefined ? {} : { filename }) }).then(url => {
      data.pdf = { url, type: 'pdf', size: pdf.body.length, size_pretty: toSizePretty(pdf.body.length) }
    }))
  }
  await Promise.all(uploads)
  // Keep a stable member order: screenshot before pdf.
  const ordered: Record<string, unknown> = {}
  if (data.screenshot !== undefined) ordered.screenshot = data.screenshot
  if (data.pdf !== undefined) ordered.pdf = data.pdf
  return { data: ordered, keys, bytes }
}
