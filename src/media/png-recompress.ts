// The screenshots' PNGs, written again once the browser slot is released (docs/browser.md#captures). Inside the slot
// Chromium encodes with its fast encoder (`optimizeForSpeed`: no row filter, zlib level 1), which roughly halves the
// encode of a 2560×1600 capture but makes the file about 2.7× larger than its default encode. Here libvips (sharp,
// on libuv's thread pool, so off the event loop and in parallel with the browser's next job) decodes it and writes it
// with zlib level 6 and no row filter: on the fixture pages that is 3-6% smaller than Chromium's default encode, in
// 10-30 ms for 2560×1600 (docs/benchmarks.md). PNG is lossless both ways, so the pixels are the same; the smaller of
// the two files is kept, and any failure keeps Chromium's.
import sharp from 'sharp'
import type { FileKind, GeneratedFile } from '../browser/producers/index.ts'

/** Beyond this many pixels the file is kept as Chromium wrote it (the largest capture is 16,384 px tall). */
const MAX_PIXELS = 16_384 * 8_192

/** zlib level 6 without adaptive filtering: smaller than Chromium's default encode of a page, at a fraction of its time. */
export const PNG_OPTIONS = Object.freeze({ compressionLevel: 6, adaptiveFiltering: false })

/** `body` re-encoded when that makes it smaller; else `body` itself. Never rejects. */
export async function recompressPng (body: Buffer): Promise<Buffer> {
  try {
    const out = await sharp(body, { limitInputPixels: MAX_PIXELS, failOn: 'error' }).png(PNG_OPTIONS).toBuffer()
    return out.length < body.length ? out : body
  } catch {
    return body
  }
}

const NONE: ReadonlySet<FileKind> = new Set()

/**
 * The generated files with every PNG re-encoded (recompressPng) but those of the kinds in `asWritten`
 * (`screenshot.optimizeForSpeed`); the others as they are. `timings.encode` gets the time the encodes took (ms, for
 * server-timing). Never rejects.
 */
export async function recompressFiles (
  files: Partial<Record<FileKind, GeneratedFile>>, timings: Record<string, number>, asWritten: ReadonlySet<FileKind> = NONE
): Promise<Partial<Record<FileKind, GeneratedFile>>> {
  const entries = Object.entries(files) as Array<[FileKind, GeneratedFile]>
  const encodes = ([kind, file]: [FileKind, GeneratedFile]): boolean => file.ext === 'png' && !asWritten.has(kind)
  if (!entries.some(encodes)) return files
  const t = performance.now()
  const out = Object.fromEntries(await Promise.all(entries.map(async ([kind, file]): Promise<[FileKind, GeneratedFile]> =>
    encodes([kind, file]) ? [kind, { ...file, body: await recompressPng(file.body) }] : [kind, file])))
  timings.encode = performance.now() - t
  return out
}
