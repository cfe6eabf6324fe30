// Reading generated files back in tests: PNG pixels (pngjs), JPEG/WebP/PNG headers (image-size), PDF pages,
// sizes and orientation (pdf-lib). Also makes small solid PNGs to serve as fixture images.
import { PNG } from 'pngjs'
import { imageSize } from 'image-size'
import { PDFDocument } from 'pdf-lib'

export type Rgba = [number, number, number, number]

export interface DecodedPng {
  width: number
  height: number
  /** RGBA of the pixel at (x, y). */
  pixel (x: number, y: number): Rgba
}

export function decodePng (body: Buffer): DecodedPng {
  const png = PNG.sync.read(body)
  return {
    width: png.width,
    height: png.height,
    pixel (x, y) {
      if (x < 0 || y < 0 || x >= png.width || y >= png.height) throw new RangeError(`pixel (${x}, ${y}) outside ${png.width}x${png.height}`)
      const at = (png.width * y + x) * 4
      return [png.data[at] ?? 0, png.data[at + 1] ?? 0, png.data[at + 2] ?? 0, png.data[at + 3] ?? 0]
    }
  }
}

/** Format and pixel size from the file's header. */
export function imageInfo (body: Buffer): { type: string, width: number, height: number } {
  const size = imageSize(body)
  return { type: size.type ?? 'unknown', width: size.width, height: size.height }
}

/** Whether two colours are within `tolerance` on every channel (alpha included). */
export function near (a: Rgba, b: Rgba, tolerance = 8): boolean {
  return a.every((value, i) => Math.abs(value - (b[i] ?? 0)) <= tolerance)
}

/** Mean absolute channel difference between two decoded images of the same size, 0-255. */
export function meanDifference (a: DecodedPng, b: DecodedPng, step = 4): number {
  if (a.width !== b.width || a.height !== b.height) throw new Error('images differ in size')
  let total = 0
  let count = 0
  for (let y = 0; y < a.height; y += step) {
    for (let x = 0; x < a.width; x += step) {
      const p = a.pixel(x, y)
      const q = b.pixel(x, y)
      total += Math.abs(p[0] - q[0]) + Math.abs(p[1] - q[1]) + Math.abs(p[2] - q[2])
      count += 3
    }
  }
  return total / count
}

/** A PNG of one colour. */
export function solidPng (width: number, height: number, color: Rgba): Buffer {
  const png = new PNG({ width, height })
  for (let i = 0; i < width * height; i++) png.data.set(color, i * 4)
  return PNG.sync.write(png)
}

export interface PdfPageInfo {
  /** PDF points (1/72 in). */
  width: number
  height: number
  orientation: 'portrait' | 'landscape' | 'square'
}

export async function pdfInfo (body: Buffer): Promise<{ pages: number, sizes: PdfPageInfo[] }> {
  const doc = await PDFDocument.load(body)
  const sizes = doc.getPages().map((page) => {
    const { width, height } = page.getSize()
    const orientation = width > height ? 'landscape' : width < height ? 'portrait' : 'square'
    return { width, height, orientation } satisfies PdfPageInfo
  })
  return { pages: doc.getPageCount(), sizes }
}
