// The palette's quantization and colour choice (src/media/palette.ts) on raw pixels: exact colours for flat blocks,
// at most six, every colour covering ≥10% among them even beside a gradient of thousands of colours, transparent
// pixels ignored, WCAG contrast ranking.
import { describe, expect, it } from 'vitest'
import { colorsOf, contrastRatio, paletteOfPixels } from '../../src/media/palette.ts'

function pixels (parts: Array<[number, (i: number) => [number, number, number, number?]]>): Uint8Array {
  const total = parts.reduce((sum, [n]) => sum + n, 0)
  const out = new Uint8Array(total * 4)
  let at = 0
  for (const [n, colour] of parts) {
    for (let i = 0; i < n; i++, at++) {
      const [r, g, b, a = 255] = colour(i)
      out.set([r, g, b, a], at * 4)
    }
  }
  return out
}

const solid = (r: number, g: number, b: number) => (): [number, number, number] => [r, g, b]

describe('paletteOfPixels', () => {
  it('gives flat colours exactly, most pixels first', () => {
    expect(paletteOfPixels(pixels([[30, solid(0, 0, 255)], [60, solid(255, 0, 0)], [10, solid(0, 128, 0)]])))
      .toEqual(['#FF0000', '#0000FF', '#008000'])
  })

  it('keeps every colour covering a tenth or more beside a gradient of thousands of colours, six at most', () => {
    const gradient = (i: number): [number, number, number] => [i % 256, (i * 7) % 256, (i * 13) % 256]
    const palette = paletteOfPixels(pixels([[6000, gradient], [1100, solid(18, 52, 86)], [1000, solid(250, 250, 250)], [900, solid(200, 30, 30)]]))
    expect(palette.length).toBeLessThanOrEqual(6)
    expect(palette).toContain('#123456')
    expect(palette).toContain('#FAFAFA')
    // 900 of 9000 pixels is exactly a tenth.
    expect(palette).toContain('#C81E1E')
  })

  it('ignores transparent pixels, and gives nothing for a fully transparent image', () => {
    expect(paletteOfPixels(pixels([[90, () => [255, 255, 255, 0]], [10, solid(10, 20, 30)]]))).toEqual(['#0A141E'])
    expect(paletteOfPixels(pixels([[4, () => [1, 2, 3, 0]]]))).toEqual([])
  })
})

describe('colorsOf', () => {
  it('takes the dominant colour as background and ranks the others by WCAG contrast on it', () => {
    expect(contrastRatio('#FFFFFF', '#000000')).toBeCloseTo(21, 5)
    expect(colorsOf(['#777777', '#808080', '#000000', '#FFFFFF'])).toEqual({
      palette: ['#777777', '#808080', '#000000', '#FFFFFF'], background_color: '#777777', color: '#000000', alternative_color: '#FFFFFF'
    })
  })

  it('repeats color as alternative_color with two colours, and is all null with none', () => {
    expect(colorsOf(['#FFFFFF', '#333333'])).toMatchObject({ color: '#333333', alternative_color: '#333333' })
    expect(colorsOf([])).toEqual({ palette: null, background_color: null, color: null, alternative_color: null })
  })
})
