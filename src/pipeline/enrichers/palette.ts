// Enricher: `palette` (docs/api.md §3.4). Every image-like media object of the result (`image`, `logo`,
// `screenshot`, and the values of `image`/`logo`-typed `data` rules, nested and collection rules included) gains
// `palette`, `background_color`, `color` and `alternative_color` (src/media/palette.ts). A page asset is read once
// per URL with one guarded ranged GET of at most MAX_PALETTE_BYTES under the request's signal; a file the service
// made (the screenshot) is read from the bytes it stored; a data: URI is decoded locally. An image that is larger,
// unreachable, or of a format that is not decoded (svg, ico) gets the four fields as null. The images are fetched
// whatever `ping` says: asking for a palette is asking for the pixels.
import type { Rule } from '../../schemas/options.ts'
import { parseDataUri, sniffImage } from '../../media/objects.ts'
import { DECODABLE_TYPES, NO_PALETTE, paletteOfImage, type PaletteFields } from '../../media/palette.ts'
import type { EnrichContext, Enricher, Extraction } from './enricher.ts'

/** Bytes read of one image at most; a larger image gets null colours. */
export const MAX_PALETTE_BYTES = 8 * 1024 * 1024
/** Distinct images fetched per request at most; the others get null colours. */
export const MAX_PALETTE_IMAGES = 32

type MediaLike = Record<string, unknown> & { url: string }

function isMediaObject (value: unknown): value is MediaLike {
  return typeof value === 'object' && value !== null && !Array.isArray(value) &&
    typeof (value as { url?: unknown }).url === 'string' && 'size_pretty' in value
}

/** The media objects a field's rules made: the value itself, each item of a collection, and nested rules' fields. */
function ruleMedia (value: unknown, rules: readonly Rule[], out: Set<MediaLike>): void {
  if (Array.isArray(value)) {
    for (const item of value) ruleMedia(item, rules, out)
    return
  }
  if (typeof value !== 'object' || value === null) return
  if (rules.some(rule => rule.type === 'image' || rule.type === 'logo') && isMediaObject(value)) {
    out.add(value)
    return
  }
  for (const rule of rules) {
    if (Array.isArray(rule.attr)) continue
    for (const [field, nested] of Object.entries(rule.attr)) ruleMedia((value as Record<string, unknown>)[field], nested, out)
  }
}

/** Every image-like media object of the result, each once. */
export function imageLikeObjects (extraction: Extraction, data: Readonly<Record<string, readonly Rule[]>> | undefined): MediaLike[] {
  const out = new Set<MediaLike>()
  for (const field of ['image', 'logo', 'screenshot']) {
    const value = extraction.data[field]
    if (isMediaObject(value) && (field === 'screenshot' || data?.[field] === undefined)) out.add(value)
  }
  for (const [field, rules] of Object.entries(data ?? {})) ruleMedia(extraction.data[field], rules, out)
  return [...out]
}

async function bytesOf (media: MediaLike, extraction: Extraction, { deps, signal, log }: EnrichContext): Promise<Uint8Array | null> {
  const stored = extraction.bytes.screenshot
  if (stored !== undefined && extraction.data.screenshot === media) return stored.body
  if (/^data:/i.test(media.url)) return parseDataUri(media.url)?.bytes ?? null
  try {
    const result = await deps.http.probe(media.url, { signal, maxBytes: MAX_PALETTE_BYTES })
    if (result.statusCode < 200 || result.statusCode >= 300) return null
    const whole = result.totalSize === null ? result.body.length < MAX_PALETTE_BYTES : result.body.length >= result.totalSize
    return whole ? result.body : null
  } catch (err) {
    if (signal.aborted) throw err
    log.debug({ url: media.url, err }, 'palette: image unreachable')
    return null
  }
}

async function colorsOfMedia (media: MediaLike, extraction: Extraction, context: EnrichContext): Promise<PaletteFields> {
  const bytes = await bytesOf(media, extraction, context)
  if (bytes === null) return { ...NO_PALETTE }
  const type = sniffImage(bytes)?.type
  return type !== undefined && DECODABLE_TYPES.has(type) ? await paletteOfImage(bytes) : { ...NO_PALETTE }
}

export const paletteEnricher: Enricher = {
  name: 'palette',
  applies: (_extraction, outputs) => outputs.palette,
  async enrich (extraction, context) {
    const objects = imageLikeObjects(extraction, context.outputs.data)
    const byUrl = new Map<string, Promise<PaletteFields>>()
    await Promise.all(objects.map(async (media) => {
      const key = extraction.data.screenshot === media ? `screenshot ${media.url}` : media.url
      let pending = byUrl.get(key)
      if (pending === undefined) {
        pending = byUrl.size < MAX_PALETTE_IMAGES ? colorsOfMedia(media, extraction, context) : Promise.resolve({ ...NO_PALETTE })
        byUrl.set(key, pending)
      }
      Object.assign(media, await pending)
    }))
  }
}
