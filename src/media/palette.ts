// Colours of an image (docs/api.md §3.4 `palette`): up to six, most dominant first, with every colour that covers at
// least a tenth of the image among them; the dominant one as background, and the two palette colours that read best
// on it (WCAG contrast). Decoding is sharp's (libvips, prebuilt); the palette is a small median cut, written here.
//
// Why not a quantizer package: the ≥10% guarantee is the point, and a generic quantizer (libimagequant in sharp,
// image-q, quantize) averages a large flat colour with its neighbours, so a block of exactly #E63946 may come back
// as #E33A47. Here the image is downscaled with nearest-neighbour sampling (no blended pixels), counted in a
// 15-bit histogram; any bin holding ≥10% of the pixels is kept as its own colour, and a median cut over the rest
// fills the remaining places. ~4 000 pixels, so it costs well under a millisecond after the decode.
import sharp from 'sharp'

export interface PaletteFields {
  palette: string[] | null
  background_color: string | null
  color: string | null
  alternative_color: string | null
}

export const NO_PALETTE: Readonly<PaletteFields> = Object.freeze({ palette: null, background_color: null, color: null, alternative_color: null })

/** Colours in a palette at most. */
export const MAX_COLORS = 6
/** Coverage from which a colour is always in the palette. */
const DOMINANT_SHARE = 0.1
/** The image is sampled down to fit this square before counting. */
const SAMPLE_SIDE = 64
/** Larger images are not decoded (a decompression bomb stays a few bytes of header). */
const MAX_INPUT_PIXELS = 50_000_000
/** Formats decoded for a palette; svg and ico give nulls (docs/api.md §3.4). */
export const DECODABLE_TYPES: ReadonlySet<string> = new Set(['png', 'jpg', 'webp', 'gif', 'avif', 'tiff'])

interface Swatch {
  r: number
  g: number
  b: number
  count: number
}

/** The four fields for an encoded image, or NO_PALETTE when it cannot be decoded or has no opaque pixel. */
export async function paletteOfImage (bytes: Uint8Array): Promise<PaletteFields> {
  let raw: Buffer
  try {
    raw = await sharp(bytes, { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error', animated: false })
      .resize(SAMPLE_SIDE, SAMPLE_SIDE, { fit: 'inside', kernel: 'nearest', withoutEnlargement: true })
      .ensureAlpha()
      .raw()
      .toBuffer()
  } catch {
    return { ...NO_PALETTE }
  }
  return colorsOf(paletteOfPixels(raw))
}

/** Up to MAX_COLORS colours of RGBA pixels (alpha under half ignored), most pixels first. */
export function paletteOfPixels (rgba: Uint8Array): string[] {
  const bins = new Map<number, Swatch>()
  let total = 0
  for (let i = 0; i + 3 < rgba.length; i += 4) {
    if (rgba[i + 3]! < 128) continue
    const r = rgba[i]!
    const g = rgba[i + 1]!
    const b = rgba[i + 2]!
    const key = ((r >> 3) << 10) | ((g >> 3) << 5) | (b >> 3)
    const bin = bins.get(key)
    if (bin === undefined) {
      bins.set(key, { r, g, b, count: 1 })
    } else {
      bin.r += r
      bin.g += g
      bin.b += b
      bin.count++
    }
    total++
  }
  if (total === 0) return []
  const means = [...bins.values()].map(bin => ({ r: bin.r / bin.count, g: bin.g / bin.count, b: bin.b / bin.count, count: bin.count }))
  const dominant = means.filter(bin => bin.count >= total * DOMINANT_SHARE).sort((a, b) => b.count - a.count).slice(0, MAX_COLORS)
  const rest = means.filter(bin => bin.count < total * DOMINANT_SHARE)
  const swatches = [...dominant, ...medianCut(rest, MAX_COLORS - dominant.length)]
  return merge(swatches).sort((a, b) => b.count - a.count).slice(0, MAX_COLORS).map(toHex)
}

/** Splits the bins into at most `boxes` boxes, always the one with the most pixels times its widest span first. */
function medianCut (bins: Swatch[], boxes: number): Swatch[] {
  if (boxes <= 0 || bins.length === 0) return []
  const queue: Swatch[][] = [bins]
  while (queue.length < boxes) {
    let best = -1
    let bestScore = 0
    queue.forEach((box, index) => {
      if (box.length < 2) return
      const score = weight(box) * widest(box).span
      if (score > bestScore) {
        best = index
        bestScore = score
      }
    })
    if (best < 0) break
    const box = queue.splice(best, 1)[0]!
    const { channel } = widest(box)
    box.sort((a, b) => a[channel] - b[channel])
    const half = weight(box) / 2
    let seen = 0
    let cut = 1
    for (let i = 0; i < box.length - 1; i++) {
      seen += box[i]!.count
      cut = i + 1
      if (seen >= half) break
    }
    queue.push(box.slice(0, cut), box.slice(cut))
  }
  return queue.map(average)
}

function weight (box: Swatch[]): number {
  return box.reduce((sum, bin) => sum + bin.count, 0)
}

function widest (box: Swatch[]): { channel: 'r' | 'g' | 'b', span: number } {
  let out: { channel: 'r' | 'g' | 'b', span: number } = { channel: 'r', span: -1 }
  for (const channel of ['r', 'g', 'b'] as const) {
    const values = box.map(bin => bin[channel])
    const span = Math.max(...values) - Math.min(...values)
    if (span > out.span) out = { channel, span }
  }
  return out
}

function average (box: Swatch[]): Swatch {
  const count = weight(box)
  const mean = (channel: 'r' | 'g' | 'b'): number => box.reduce((sum, bin) => sum + bin[channel] * bin.count, 0) / count
  return { r: mean('r'), g: mean('g'), b: mean('b'), count }
}

/** Colours that print the same (within 2 levels a channel) are one. */
function merge (swatches: Swatch[]): Swatch[] {
  const out: Swatch[] = []
  for (const swatch of [...swatches].sort((a, b) => b.count - a.count)) {
    const same = out.find(kept => Math.abs(kept.r - swatch.r) <= 2 && Math.abs(kept.g - swatch.g) <= 2 && Math.abs(kept.b - swatch.b) <= 2)
    if (same === undefined) out.push({ ...swatch })
    else same.count += swatch.count
  }
  return out
}

function toHex ({ r, g, b }: Swatch): string {
  return `#${[r, g, b].map(v => Math.round(v).toString(16).padStart(2, '0')).join('').toUpperCase()}`
}

/** WCAG 2 relative luminance of `#RRGGBB`. */
function luminance (hex: string): number {
  const [r, g, b] = [1, 3, 5].map(i => {
    const c = Number.parseInt(hex.slice(i, i + 2), 16) / 255
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4
  }) as [number, number, number]
  return 0.2126 * r + 0.7152 * g + 0.0722 * b
}

/** WCAG 2 contrast ratio of two `#RRGGBB` colours (1 to 21). */
export function contrastRatio (a: string, b: string): number {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number]
  return (light + 0.05) / (dark + 0.05)
}

/** The four fields of a palette: background the dominant colour, then the two others that contrast most with it. */
export function colorsOf (palette: string[]): PaletteFields {
  const background = palette[0]
  if (background === undefined) return { ...NO_PALETTE }
  const ranked = palette.slice(1).sort((a, b) => contrastRatio(b, background) - contrastRatio(a, background))
  const color = ranked[0] ?? background
  return { palette, background_color: background, color, alternative_color: ranked[1] ?? color }
}
