// Media's benchmark (docs/benchmarks.md): a cold `video=true` request against the same request without it, and a
// cold `palette=true` one likewise, on one loopback page naming the committed clip.mp4 (og:video, served with byte
// ranges) and blocks.png (og:image); fetch mode, interleaved, in the same run. Loopback only; bounded in time.
import { startFixtureServer } from '../test/helpers/fixture-server.ts'
import { serveFile, servePage } from '../test/helpers/media-files.ts'
import { BENCH_KEY, fmt, line, median, startBenchService } from './lib.ts'

const KEY = BENCH_KEY
const ROUNDS = 40

export async function benchMedia (): Promise<Record<string, number>> {
  const fx = await startFixtureServer()
  serveFile(fx, '/media/clip.mp4', 'clip.mp4')
  serveFile(fx, '/media/blocks.png', 'blocks.png')
  const page = servePage(fx, '/media-page', '<meta property="og:video" content="/media/clip.mp4"><meta property="og:image" content="/media/blocks.png">')
  const service = await startBenchService(fx)
  const { proUrl } = service
  const figures: Record<string, number> = {}
  const base = `${proUrl}/?url=${encodeURIComponent(page)}&prerender=false&force`
  const timed = async (query: string, check: (data: Record<string, any>) => boolean): Promise<number> => {
    const t = performance.now()
    const res = await fetch(`${base}${query}`, { headers: { 'x-api-key': KEY } })
    const body = await res.json() as { data: Record<string, any> }
    const ms = performance.now() - t
    if (res.status !== 200 || !check(body.data)) throw new Error(`media bench: unexpected answer to ${query}`)
    return ms
  }
  const plain = async (): Promise<number> => await timed('', data => !('video' in data))
  const video = async (): Promise<number> => await timed('&video', data => data.video?.duration === 2)
  const palette = async (): Promise<number> => await timed('&palette', data => data.image?.background_color === '#E63946')

  try {
    for (let i = 0; i < 5; i++) { await plain(); await video(); await palette() }
    const plainTimes: number[] = []
    const videoTimes: number[] = []
    const paletteTimes: number[] = []
    for (let i = 0; i < ROUNDS; i++) {
      plainTimes.push(await plain())
      videoTimes.push(await video())
      paletteTimes.push(await palette())
    }
    figures.plainMs = median(plainTimes)
    figures.videoMs = median(videoTimes)
    figures.paletteMs = median(paletteTimes)
    figures.videoRatio = figures.videoMs / figures.plainMs
    figures.paletteRatio = figures.paletteMs / figures.plainMs
  } finally {
    await service.close()
    await fx.close()
  }
  return figures
}

export function printMedia (f: Record<string, number>): void {
  line('## media (video, palette)')
  line(`video=true: ${fmt(f.videoMs!)} ms against ${fmt(f.plainMs!)} ms for the same request without it (median of ${ROUNDS}, cold, fetch mode); ratio ${fmt(f.videoRatio!)}`)
  line(`palette=true: ${fmt(f.paletteMs!)} ms against ${fmt(f.plainMs!)} ms; ratio ${fmt(f.paletteRatio!)}`)
}
