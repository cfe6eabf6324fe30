// The screenshots' PNGs written again after the browser slot (src/media/png-recompress.ts): same pixels, smaller
// file, and Chromium's own file kept whenever re-encoding cannot help.
import { describe, expect, it } from 'vitest'
import sharp from 'sharp'
import { recompressFiles, recompressPng } from '../../src/media/png-recompress.ts'
import type { GeneratedFile } from '../../src/browser/producers/index.ts'

/** A page-like picture (flat areas, text-like stripes), written the way a fast encoder does: barely compressed. */
async function fastPng (width = 640, height = 400, alpha = false): Promise<Buffer> {
  const channels = alpha ? 4 : 3
  const raw = Buffer.alloc(width * height * channels, 255)
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * channels
      if (y % 20 < 3 && x % 7 < 5) raw.fill(30, i, i + 3)
      if (x < 120) { raw[i] = 20; raw[i + 1] = 80; raw[i + 2] = 160 }
      if (alpha) raw[i + 3] = x % 2 === 0 ? 255 : 128
    }
  }
  return await sharp(raw, { raw: { width, height, channels } }).png({ compressionLevel: 1, adaptiveFiltering: false }).toBuffer()
}

async function pixels (png: Buffer): Promise<{ data: Buffer, width: number, height: number, channels: number }> {
  const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true })
  return { data, width: info.width, height: info.height, channels: info.channels }
}

describe('recompressPng', () => {
  it('gives a smaller PNG with exactly the same pixels', async () => {
    for (const alpha of [false, true]) {
      const input = await fastPng(640, 400, alpha)
      const output = await recompressPng(input)
      expect(output.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))
      expect(output.length).toBeLessThan(input.length)
      expect(await pixels(output)).toEqual(await pixels(input))
    }
  })

  it('keeps the file it was given when it is not a PNG it can read, or when it cannot get smaller', async () => {
    const garbage = Buffer.from('not a png at all')
    expect(await recompressPng(garbage)).toBe(garbage)
    const best = await sharp(await fastPng()).png({ compressionLevel: 9, adaptiveFiltering: true, effort: 10 }).toBuffer()
    const again = await recompressPng(best)
    expect(again.length).toBeLessThanOrEqual(best.length)
    expect(await pixels(again)).toEqual(await pixels(best))
  })
})

describe('recompressFiles', () => {
  it('re-encodes the PNGs only, keeps their details, and times the work as `encode`', async () => {
    const png = await fastPng()
    const files: Record<string, GeneratedFile> = {
      screenshot: { body: png, ext: 'png', contentType: 'image/png', details: { width: 640, height: 400 } },
      pdf: { body: Buffer.from('%PDF-1.7 …'), ext: 'pdf', contentType: 'application/pdf', details: {} }
    }
    const timings: Record<string, number> = {}
    const out = await recompressFiles(files, timings)
    expect(out.screenshot!.body.length).toBeLessThan(png.length)
    expect(out.screenshot!.details).toEqual({ width: 640, height: 400 })
    expect(out.pdf).toBe(files.pdf)
    expect(timings.encode).toBeGreaterThanOrEqual(0)
    const none: Record<string, number> = {}
    const jpeg = { screenshot: { body: Buffer.from([0xff, 0xd8, 0xff]), ext: 'jpg' as const, contentType: 'image/jpeg', details: {} } }
    expect(await recompressFiles(jpeg, none)).toBe(jpeg)
    expect(none).toEqual({})
  })
})
