// `video` and `audio` (docs/api.md §3.4, §4.2) through the API, on fixture pages and the committed media files of
// test/fixtures/media/files, whose durations, sizes and dimensions are known: where the source is found and in what
// order, `ping` (failing candidates dropped, unchecked objects), the target itself as the file, both load modes,
// an mp4 whose `moov` follows its media data, and bounded reads of a 1 GB file and of a body that never ends.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { build, qs, type Built } from '../helpers/build.ts'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'
import { mediaFile, serveEndless, serveFile, servePage, serveVirtual } from '../helpers/media-files.ts'

let fx: FixtureServer
let app: Built

beforeAll(async () => {
  fx = await startFixtureServer()
  for (const name of ['clip.mp4', 'clip.webm', 'clip.ogv', 'tone.mp3', 'tone.m4a', 'tone.ogg', 'tone.opus', 'tone.wav', 'tone.flac']) {
    serveFile(fx, `/media/${name}`, name)
  }
  app = await build({ ALLOW_PRIVATE_HOSTS: fx.host, API_KEYS: 'k', BROWSER_CONCURRENCY: '1' })
}, 120_000)

afterAll(async () => {
  await app?.close()
  await fx?.close()
})

async function get (query: Record<string, string | number | boolean>, target: Built = app) {
  const res = await target.pro.inject({ method: 'GET', url: `/?${qs({ ...query, force: true })}`, headers: { 'x-api-key': 'k' } })
  return { res, body: res.json<{ status: string, data: Record<string, any>, code?: string }>() }
}

const CLIP_MP4 = { type: 'mp4', size: 5484, size_pretty: '5.48 kB', width: 320, height: 240, duration: 2, duration_pretty: '2s' }

describe('video', () => {
  for (const prerender of [false, true]) {
    it(`takes og:video, a media object read from the container (prerender=${String(prerender)})`, async () => {
      const url = servePage(fx, `/og-video-${String(prerender)}`, `<meta property="og:video" content="/media/clip.mp4"><meta property="og:video:type" content="video/mp4">`)
      const { res, body } = await get({ url, video: true, prerender })
      expect(res.statusCode).toBe(200)
      expect(res.headers['x-fetch-mode']).toBe(prerender ? 'prerender' : 'fetch')
      expect(body.data.video).toEqual({ url: `${fx.origin}/media/clip.mp4`, ...CLIP_MP4 })
      // Without the parameter there is no video field.
      const plain = await get({ url, prerender })
      expect(plain.body.data).not.toHaveProperty('video')
    }, 60_000)
  }

  it('drops failing candidates in order and takes the next: a 404, an HTML page, a Flash type, then twitter:player:stream', async () => {
    fx.route('/media/gone.mp4', (_req, res) => { res.writeHead(404, { 'content-type': 'text/html' }); res.end('<p>gone</p>') })
    const url = servePage(fx, '/fallbacks', [
      '<meta property="og:video:secure_url" content="/media/gone.mp4">',
      '<meta property="og:video:url" content="/fallbacks">',
      '<meta property="og:video" content="/media/player.swf"><meta property="og:video:type" content="application/x-shockwave-flash">',
      '<meta name="twitter:player:stream" content="/media/clip.ogv">',
      '<script type="application/ld+json">{"@context":"https://schema.org","@graph":[{"@type":"Article","video":{"@type":"VideoObject","contentUrl":"/media/clip.webm"}}]}</script>'
    ].join(''))
    const before = { gone: fx.hitsOf('/media/gone.mp4'), swf: fx.hitsOf('/media/player.swf'), ogv: fx.hitsOf('/media/clip.ogv') }
    const { body } = await get({ url, video: true, meta: false })
    // The Theora clip (twitter:player:stream) is playable and comes before JSON-LD: it wins, with its dimensions.
    // Its duration is null: the parser gives none for Theora (Ogg keeps it in the last page's granule position).
    expect(body.data.video).toEqual({
      url: `${fx.origin}/media/clip.ogv`, type: 'ogv', size: 9282, size_pretty: '9.28 kB', width: 160, height: 120, duration: null, duration_pretty: null
    })
    expect(fx.hitsOf('/media/gone.mp4') - before.gone).toBe(1)
    // A declared type no browser plays as a file is not even probed.
    expect(fx.hitsOf('/media/player.swf') - before.swf).toBe(0)
    expect(body.data).toEqual({ video: body.data.video })
  })

  it('reads JSON-LD VideoObject contentUrl and <video><source>, skipping formats browsers do not play', async () => {
    serveFile(fx, '/media/clip.mov', 'clip.mp4', { contentType: 'video/quicktime' })
    const url = servePage(fx, '/jsonld', '<script type="application/ld+json">{"@type":"VideoObject","contentUrl":"/media/clip.mov"}</script>',
      '<video><source src="/media/clip.webm" type="video/webm"></video>')
    const { body } = await get({ url, video: true, meta: false })
    expect(body.data.video).toEqual({
      url: `${fx.origin}/media/clip.webm`, type: 'webm', size: 7716, size_pretty: '7.72 kB', width: 160, height: 120, duration: 1.5, duration_pretty: '1.5s'
    })
  })

  it('is null when the page names no video, and when every candidate fails', async () => {
    const none = await get({ url: servePage(fx, '/no-video', ''), video: true })
    expect(none.body.data.video).toBeNull()
    const failing = await get({ url: servePage(fx, '/bad-video', '<meta property="og:video" content="/media/gone.mp4">'), video: true })
    expect(failing.body.data.video).toBeNull()
  })

  it('with ping.video=false gives the first candidate unchecked, {url, type}, without fetching it', async () => {
    const url = servePage(fx, '/unchecked', '<meta property="og:video" content="/media/unchecked.mov"><meta property="og:video" content="/media/unchecked.mp4">')
    const { body } = await get({ url, video: true, 'ping.video': false })
    expect(body.data.video).toEqual({
      url: `${fx.origin}/media/unchecked.mp4`, type: 'mp4', size: null, size_pretty: null, width: null, height: null, duration: null, duration_pretty: null
    })
    expect(fx.hitsOf('/media/unchecked.mp4')).toBe(0)
  })

  for (const prerender of [false, true]) {
    it(`describes the target itself when it is a video file (prerender=${String(prerender)})`, async () => {
      const { body } = await get({ url: `${fx.origin}/media/clip.mp4`, video: true, prerender })
      expect(body.data.video).toEqual({ url: `${fx.origin}/media/clip.mp4`, ...CLIP_MP4 })
    }, 60_000)
  }

  it('reads an mp4 whose moov atom follows the media data with one more ranged read, of the tail', async () => {
    const small = await build({ ALLOW_PRIVATE_HOSTS: fx.host, API_KEYS: 'k', MAX_PROBE_BYTES: '4096' })
    try {
      const served = serveFile(fx, '/media/moov-end.mp4', 'clip-moov-end.mp4')
      const url = servePage(fx, '/moov-end', '<meta property="og:video" content="/media/moov-end.mp4">')
      const { body } = await get({ url, video: true, meta: false }, small)
      expect(body.data.video).toMatchObject({ type: 'mp4', size: 58842, width: 320, height: 240, duration: 2, duration_pretty: '2s' })
      expect(served.ranges).toEqual(['bytes=0-4095', 'bytes=0-58841'])

      // A server that ignores ranges: the first bytes only, and what they do not reveal is null.
      const plain = serveFile(fx, '/media/moov-end-norange.mp4', 'clip-moov-end.mp4', { ignoreRanges: true })
      const url2 = servePage(fx, '/moov-end-norange', '<meta property="og:video" content="/media/moov-end-norange.mp4">')
      const second = await get({ url: url2, video: true, meta: false }, small)
      expect(second.body.data.video).toMatchObject({ type: 'mp4', size: 58842, width: null, height: null, duration: null, duration_pretty: null })
      expect(plain.ranges).toHaveLength(1)
    } finally {
      await small.close()
    }
  })

  it('describes a 1 GB mp4 from its first bytes and its tail, in well under a second of reading', async () => {
    // clip-moov-end.mp4 with a 1 GB `free` box before its media data: the `moov` now ends a 1 GB file.
    const original = mediaFile('clip-moov-end.mp4')
    const gap = 1_000_000_000
    const freeBox = Buffer.alloc(8)
    freeBox.writeUInt32BE(gap, 0)
    freeBox.write('free', 4, 'ascii')
    const size = original.length + gap
    const byteAt = (i: number): number => i < 40 ? original[i]! : i < 48 ? freeBox[i - 40]! : i < 40 + gap ? 0 : original[i - gap]!
    const served = serveVirtual(fx, '/media/huge.mp4', size, (start, end) => {
      const out = Buffer.alloc(end - start)
      for (let i = start; i < end; i++) out[i - start] = byteAt(i)
      return out
    })
    const url = servePage(fx, '/huge', '<meta property="og:video" content="/media/huge.mp4">')
    const t = performance.now()
    const { body } = await get({ url, video: true, meta: false })
    expect(performance.now() - t).toBeLessThan(5000)
    expect(body.data.video).toMatchObject({ type: 'mp4', size, size_pretty: '1 GB', width: 320, height: 240, duration: 2 })
    expect(served.ranges).toHaveLength(2)
    expect(served.sent).toBeLessThan(200 * 1024)
  })

  it('reads a body that never ends only as far as its first bytes, and answers at once', async () => {
    const ftyp = mediaFile('clip-moov-end.mp4').subarray(0, 40)
    const mdat = Buffer.from([0x00, 0x00, 0x00, 0x01, 0x6d, 0x64, 0x61, 0x74, 0, 0, 0, 0x10, 0, 0, 0, 0]) // 64-bit size: 64 GiB
    const served = serveEndless(fx, '/media/endless.mp4', Buffer.concat([ftyp, mdat]), 'video/mp4')
    const url = servePage(fx, '/endless', '<meta property="og:video" content="/media/endless.mp4">')
    const t = performance.now()
    const { res, body } = await get({ url, video: true, meta: false })
    expect(res.statusCode).toBe(200)
    expect(performance.now() - t).toBeLessThan(5000)
    expect(body.data.video).toEqual({
      url: `${fx.origin}/media/endless.mp4`, type: 'mp4', size: null, size_pretty: null, width: null, height: null, duration: null, duration_pretty: null
    })
    expect(served.ranges).toHaveLength(1)
    // What was read (64 KiB) plus what the sockets buffered before the read stopped.
    expect(served.sent).toBeLessThan(8 * 1024 * 1024)
  })
})

describe('audio', () => {
  const AUDIO: Array<[string, Record<string, unknown>]> = [
    ['tone.mp3', { type: 'mp3', size: 24494, size_pretty: '24.5 kB', duration: 3.03, duration_pretty: '3s' }],
    ['tone.m4a', { type: 'm4a', size: 9384, size_pretty: '9.38 kB', duration: 2.046, duration_pretty: '2s' }],
    ['tone.ogg', { type: 'ogg', size: 6394, size_pretty: '6.39 kB', duration: 2.5, duration_pretty: '2.5s' }],
    ['tone.opus', { type: 'ogg', size: 8078, size_pretty: '8.08 kB', duration: 2, duration_pretty: '2s' }],
    ['tone.wav', { type: 'wav', size: 16078, size_pretty: '16.1 kB', duration: 1, duration_pretty: '1s' }],
    ['tone.flac', { type: 'flac', size: 13103, size_pretty: '13.1 kB', duration: 1.25, duration_pretty: '1.2s' }]
  ]
  for (const [name, expected] of AUDIO) {
    it(`describes ${name} as the target itself, with its duration and no width or height`, async () => {
      const { body } = await get({ url: `${fx.origin}/media/${name}`, audio: true, prerender: false })
      expect(body.data.audio).toEqual({ url: `${fx.origin}/media/${name}`, ...expected })
    })
  }

  for (const prerender of [false, true]) {
    it(`takes og:audio, then <audio>/<source> (prerender=${String(prerender)})`, async () => {
      const og = servePage(fx, `/og-audio-${String(prerender)}`, '<meta property="og:audio" content="/media/tone.mp3">', '<audio src="/media/tone.wav"></audio>')
      const first = await get({ url: og, audio: true, prerender })
      expect(first.body.data.audio).toMatchObject({ url: `${fx.origin}/media/tone.mp3`, type: 'mp3', duration: 3.03 })
      const tag = servePage(fx, `/audio-tag-${String(prerender)}`, '', '<audio controls><source src="/media/tone.flac" type="audio/flac"></audio>')
      const second = await get({ url: tag, audio: true, video: true, prerender })
      expect(second.body.data.audio).toMatchObject({ url: `${fx.origin}/media/tone.flac`, type: 'flac', duration: 1.25 })
      expect(second.body.data.video).toBeNull()
    }, 60_000)
  }

  it('gives video and audio of a page with both, in one request', async () => {
    const url = servePage(fx, '/both', '<meta property="og:video" content="/media/clip.webm"><meta property="og:audio" content="/media/tone.ogg">')
    const { body } = await get({ url, video: true, audio: true, meta: false })
    expect(Object.keys(body.data)).toEqual(['video', 'audio'])
    expect(body.data.video).toMatchObject({ type: 'webm', duration: 1.5 })
    expect(body.data.audio).toMatchObject({ type: 'ogg', duration: 2.5 })
  })
})
