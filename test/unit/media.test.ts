// Media objects (docs/api.md §4.2) and the candidate checks of §3.4/§9, on real image bytes built in
// test/fixtures/media/images.ts. Probe results here are what a ranged GET returns for those bytes.
import { describe, expect, it } from 'vitest'
import type { ProbeResult } from '../../src/net/types.ts'
import {
  dataUriToMediaObject,
  looksExecutable,
  parseDataUri,
  resolveMediaUrl,
  sniffImage,
  toMediaObject,
  toSizePretty,
  toUncheckedMediaObject,
  typeFromContentType,
  typeFromUrl
} from '../../src/media/objects.ts'
import { makeAvifHeader, makeGif, makeIco, makeJpegHeader, makePng, makeSvg, makeWebpHeader } from '../fixtures/media/images.ts'

const PAGE = 'https://www.example.com/blog/post?id=7'

/** What a ranged GET of the first 64 KiB of `body` (served whole with this content type) gives. */
function served (url: string, body: Buffer, contentType: string | undefined, statusCode = 206): ProbeResult {
  const slice = body.subarray(0, 64 * 1024)
  return {
    url,
    statusCode,
    headers: contentType === undefined ? {} : { 'content-type': contentType },
    body: slice,
    totalSize: body.length
  }
}

describe('typeFromContentType', () => {
  it.each([
    ['image/png', 'png'],
    ['image/jpeg', 'jpg'],
    ['image/pjpeg', 'jpg'],
    ['image/svg+xml; charset=utf-8', 'svg'],
    ['IMAGE/WEBP', 'webp'],
    ['image/gif', 'gif'],
    ['image/x-icon', 'ico'],
    ['image/vnd.microsoft.icon', 'ico'],
    ['image/avif', 'avif'],
    ['video/mp4', 'mp4'],
    ['video/webm', 'webm'],
    ['audio/mpeg', 'mp3'],
    ['audio/mp4', 'm4a'],
    ['application/pdf', 'pdf'],
    ['image/x-jxr', 'jxr']
  ])('%s -> %s', (contentType, type) => {
    expect(typeFromContentType(contentType)).toBe(type)
  })

  it.each(['', 'application/octet-stream', 'application/vnd.ms-excel', 'image/x-portable-pixmap'])('%j names no extension', contentType => {
    expect(typeFromContentType(contentType)).toBeNull()
  })
})

describe('typeFromUrl', () => {
  it.each([
    ['https://cdn.example.com/a/photo.JPEG?w=100#x', 'jpg'],
    ['https://cdn.example.com/logo.svg', 'svg'],
    ['https://example.com/favicon.ico', 'ico'],
    ['https://example.com/clip.webm?t=3', 'webm'],
    ['https://example.com/track.mp3', 'mp3'],
    [`data:image/png;base64,${makePng(1, 1).toString('base64')}`, 'png']
  ])('%s -> %s', (url, type) => {
    expect(typeFromUrl(url)).toBe(type)
  })

  it.each(['https://example.com/image', 'https://example.com/dir.v2/', 'not a url'])('%s has none', url => {
    expect(typeFromUrl(url)).toBeNull()
  })
})

describe('toSizePretty', () => {
  it('writes SI sizes with three significant digits, as pretty-bytes does', () => {
    expect(toSizePretty(315)).toBe('315 B')
    expect(toSizePretty(4118)).toBe('4.12 kB')
    expect(toSizePretty(41183)).toBe('41.2 kB')
    expect(toSizePretty(1_360_000)).toBe('1.36 MB')
    expect(toSizePretty(null)).toBeNull()
  })
})

describe('sniffImage', () => {
  it.each([
    ['png', makePng(1200, 630), { type: 'png', width: 1200, height: 630 }],
    ['gif', makeGif(40, 30), { type: 'gif', width: 40, height: 30 }],
    ['jpeg', makeJpegHeader(800, 600), { type: 'jpg', width: 800, height: 600 }],
    ['webp', makeWebpHeader(320, 200), { type: 'webp', width: 320, height: 200 }],
    ['avif', makeAvifHeader(640, 360), { type: 'avif', width: 640, height: 360 }],
    ['svg viewBox', makeSvg(120, 80), { type: 'svg', width: 120, height: 80 }],
    ['ico, largest image', makeIco([16, 48, 32]), { type: 'ico', width: 48, height: 48 }]
  ])('%s', (_name, bytes, expected) => {
    expect(sniffImage(bytes)).toEqual(expected)
  })

  it('gives the displayed size of a JPEG rotated by its EXIF orientation', () => {
    expect(sniffImage(makeJpegHeader(800, 600, 6))).toEqual({ type: 'jpg', width: 600, height: 800 })
    expect(sniffImage(makeJpegHeader(800, 600, 1))).toEqual({ type: 'jpg', width: 800, height: 600 })
  })

  it('reads only the header: a PNG cut after its IHDR still has dimensions', () => {
    expect(sniffImage(makePng(300, 100).subarray(0, 33))).toEqual({ type: 'png', width: 300, height: 100 })
  })

  it('gives null for bytes that are no image', () => {
    expect(sniffImage(Buffer.from('<!doctype html><title>x</title>'))).toBeNull()
    expect(sniffImage(Buffer.from('{"a":1}'))).toBeNull()
    expect(sniffImage(Buffer.alloc(0))).toBeNull()
  })
})

describe('looksExecutable', () => {
  it('flags SVG with script, event handlers or javascript: URLs', () => {
    expect(looksExecutable(makeSvg(10, 10, '<script>alert(1)</script>'), 'svg')).toBe(true)
    expect(looksExecutable(makeSvg(10, 10, '<SCRIPT type="text/javascript">x()</SCRIPT>'), 'svg')).toBe(true)
    expect(looksExecutable(makeSvg(10, 10, '<rect width="5" height="5" onload="x()"/>'), 'svg')).toBe(true)
    expect(looksExecutable(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"\nonclick = "x()"></svg>'), 'svg')).toBe(true)
    expect(looksExecutable(makeSvg(10, 10, '<a href="javascript:alert(1)"><rect width="5" height="5"/></a>'), 'svg')).toBe(true)
  })

  it('lets a plain SVG through', () => {
    expect(looksExecutable(makeSvg(10, 10), 'svg')).toBe(false)
    expect(looksExecutable(makeSvg(10, 10, '<text>Read the notes on reason</text>'), 'svg')).toBe(false)
  })

  it('flags a raster image whose body starts with <', () => {
    expect(looksExecutable(Buffer.from('<html><body>login</body></html>'), 'png')).toBe(true)
    expect(looksExecutable(Buffer.from('\n  <!doctype html>'), 'ico')).toBe(true)
    expect(looksExecutable(makePng(2, 2), 'png')).toBe(false)
    expect(looksExecutable(makeIco([16]), 'ico')).toBe(false)
  })
})

describe('toMediaObject', () => {
  it('builds the object from the probe: type from the content type, size from the total, dimensions from the header', () => {
    const png = makePng(1200, 630)
    expect(toMediaObject('https://example.com/cover', served('https://example.com/cover', png, 'image/png'))).toStrictEqual({
      url: 'https://example.com/cover',
      type: 'png',
      size: png.length,
      height: 630,
      width: 1200,
      size_pretty: toSizePretty(png.length)
    })
  })

  it('maps image/jpeg to jpg whatever the URL says', () => {
    const media = toMediaObject('https://example.com/p.jpeg', served('https://example.com/p.jpeg', makeJpegHeader(64, 48), 'image/jpeg'))
    expect(media).toMatchObject({ type: 'jpg', width: 64, height: 48 })
  })

  it('takes the type from the URL when the content type names none', () => {
    const media = toMediaObject('https://example.com/i.gif', served('https://example.com/i.gif', makeGif(3, 2), 'application/octet-stream'))
    expect(media).toMatchObject({ type: 'gif', width: 3, height: 2 })
  })

  it('takes the type from the bytes when neither header nor URL names it', () => {
    const media = toMediaObject('https://example.com/img', served('https://example.com/img', makePng(5, 4), undefined))
    expect(media).toMatchObject({ type: 'png', width: 5, height: 4 })
  })

  it('leaves size null when the probe could not tell the total', () => {
    const result = { ...served('https://example.com/a.png', makePng(2, 2), 'image/png'), totalSize: null }
    expect(toMediaObject(result.url, result)).toMatchObject({ size: null, size_pretty: null, width: 2 })
  })

  it('reads an ICO\'s largest image and an SVG viewBox', () => {
    expect(toMediaObject('https://e.com/favicon.ico', served('https://e.com/favicon.ico', makeIco([16, 32]), 'image/vnd.microsoft.icon')))
      .toMatchObject({ type: 'ico', width: 32, height: 32 })
    expect(toMediaObject('https://e.com/l.svg', served('https://e.com/l.svg', makeSvg(300, 150), 'image/svg+xml')))
      .toMatchObject({ type: 'svg', width: 300, height: 150 })
  })

  it('drops a failing candidate', () => {
    const png = makePng(2, 2)
    // status >= 400
    expect(toMediaObject('https://e.com/a.png', served('https://e.com/a.png', png, 'image/png', 404))).toBeNull()
    expect(toMediaObject('https://e.com/a.png', served('https://e.com/a.png', png, 'image/png', 500))).toBeNull()
    // wrong kind of content
    expect(toMediaObject('https://e.com/a.png', served('https://e.com/a.png', Buffer.from('<!doctype html><p>hi'), 'text/html'))).toBeNull()
    expect(toMediaObject('https://e.com/a.png', served('https://e.com/a.png', Buffer.from('{"a":1}'), 'application/json'))).toBeNull()
    expect(toMediaObject('https://e.com/a.bin', served('https://e.com/a.bin', Buffer.from('plain words'), 'application/octet-stream'))).toBeNull()
    expect(toMediaObject('https://e.com/v.mp4', served('https://e.com/v.mp4', png, 'image/png'), 'video')).toBeNull()
    // HTML served as an image, and executable SVG
    expect(toMediaObject('https://e.com/i.png', served('https://e.com/i.png', Buffer.from('<html>nope</html>'), 'image/png'))).toBeNull()
    expect(toMediaObject('https://e.com/i.svg', served('https://e.com/i.svg', makeSvg(9, 9, '<script>x()</script>'), 'image/svg+xml'), 'logo')).toBeNull()
  })

  it('refuses an SVG it could not read whole', () => {
    const big = makeSvg(10, 10, `<!-- ${'x'.repeat(70 * 1024)} --><script>x()</script>`)
    expect(toMediaObject('https://e.com/big.svg', served('https://e.com/big.svg', big, 'image/svg+xml'))).toBeNull()
    const whole = { ...served('https://e.com/ok.svg', makeSvg(10, 10), 'image/svg+xml') }
    expect(toMediaObject(whole.url, whole)).toMatchObject({ type: 'svg' })
  })

  it('builds video and audio objects with their own keys', () => {
    const bytes = Buffer.from([0, 0, 0, 0x18, 0x66, 0x74, 0x79, 0x70, 0x69, 0x73, 0x6f, 0x6d])
    expect(toMediaObject('https://e.com/v', served('https://e.com/v', bytes, 'video/mp4'), 'video')).toStrictEqual({
      url: 'https://e.com/v', type: 'mp4', size: 12, height: null, width: null, size_pretty: '12 B', duration: null, duration_pretty: null
    })
    expect(toMediaObject('https://e.com/a.mp3', served('https://e.com/a.mp3', bytes, 'application/octet-stream'), 'audio')).toStrictEqual({
      url: 'https://e.com/a.mp3', type: 'mp3', size: 12, size_pretty: '12 B', duration: null, duration_pretty: null
    })
  })
})

describe('toUncheckedMediaObject', () => {
  it('keeps the URL and its extension, everything else null', () => {
    expect(toUncheckedMediaObject('https://e.com/x/photo.JPG?v=1')).toStrictEqual({
      url: 'https://e.com/x/photo.JPG?v=1', type: 'jpg', size: null, height: null, width: null, size_pretty: null
    })
    expect(toUncheckedMediaObject('https://e.com/x/photo')).toMatchObject({ type: null })
  })
})

describe('resolveMediaUrl', () => {
  it('resolves against the page and keeps only http(s)', () => {
    expect(resolveMediaUrl('/img/a.png', PAGE)).toBe('https://www.example.com/img/a.png')
    expect(resolveMediaUrl('a.png', PAGE)).toBe('https://www.example.com/blog/a.png')
    expect(resolveMediaUrl('//cdn.example.net/a.png', PAGE)).toBe('https://cdn.example.net/a.png')
    expect(resolveMediaUrl('  http://example.org/b.png?x=1&a=2 ', PAGE)).toBe('http://example.org/b.png?x=1&a=2')
    expect(resolveMediaUrl('javascript:alert(1)', PAGE)).toBeNull()
    expect(resolveMediaUrl('JavaScript:alert(1)', PAGE)).toBeNull()
    expect(resolveMediaUrl('ftp://example.com/a.png', PAGE)).toBeNull()
    expect(resolveMediaUrl('file:///etc/passwd', PAGE)).toBeNull()
    expect(resolveMediaUrl('', PAGE)).toBeNull()
    expect(resolveMediaUrl('http://', PAGE)).toBeNull()
  })

  it('keeps well-formed data: URIs of the right kind', () => {
    const png = `data:image/png;base64,${makePng(1, 1).toString('base64')}`
    expect(resolveMediaUrl(png, PAGE)).toBe(png)
    expect(resolveMediaUrl(png, PAGE, 'video')).toBeNull()
    expect(resolveMediaUrl('data:text/html;base64,PGgxPmhpPC9oMT4=', PAGE)).toBeNull()
    expect(resolveMediaUrl('data:image/png;base64,!!!', PAGE)).toBeNull()
    expect(resolveMediaUrl('data:image/png;base64,', PAGE)).toBeNull()
  })
})

describe('data: URIs', () => {
  it('decodes base64 and percent-encoded payloads', () => {
    const png = makePng(3, 2)
    expect(parseDataUri(`data:image/png;base64,${png.toString('base64')}`)).toEqual({ mime: 'image/png', bytes: png })
    const svg = parseDataUri(`data:image/svg+xml;charset=utf-8,${encodeURIComponent(makeSvg(4, 4).toString())}`)
    expect(svg?.mime).toBe('image/svg+xml')
    expect(svg?.bytes.toString()).toContain('viewBox="0 0 4 4"')
    expect(parseDataUri('data:,')).toBeNull()
    expect(parseDataUri('data:image/png;base64')).toBeNull()
  })

  it('becomes a media object without a request', () => {
    const png = makePng(3, 2)
    const uri = `data:image/png;base64,${png.toString('base64')}`
    expect(dataUriToMediaObject(uri)).toStrictEqual({
      url: uri, type: 'png', size: png.length, height: 2, width: 3, size_pretty: `${png.length} B`
    })
    const svg = `data:image/svg+xml,${encodeURIComponent(makeSvg(7, 5).toString())}`
    expect(dataUriToMediaObject(svg, 'logo')).toMatchObject({ type: 'svg', width: 7, height: 5 })
  })

  it('refuses executable or mistyped payloads', () => {
    const evil = `data:image/svg+xml,${encodeURIComponent(makeSvg(7, 5, '<script>x()</script>').toString())}`
    expect(dataUriToMediaObject(evil)).toBeNull()
    expect(dataUriToMediaObject('data:text/plain,hello')).toBeNull()
  })
})
