// Video and audio details (docs/api.md §4.2): duration, and a video's width and height, read from the container by
// music-metadata (mp4/m4a, webm, ogg, mp3, wav, flac, …) over a bounded read: the probe's first bytes, then at most
// MAX_EXTRA_READS ranged reads of at most EXTRA_READ_BYTES in all, under the request's signal and the address guard
// (every read is a guarded probe). So a 1 GB file costs its head, and an mp4 whose `moov` atom follows the media data
// costs one more read of the file's tail. What the budget does not reach stays null: nothing is estimated from part
// of a container (a cut-short wav or ogg would give a wrong duration).
import prettyMilliseconds from 'pretty-ms'
import { parseFromTokenizer, type IAudioMetadata } from 'music-metadata'
import type { Probe, ProbeResult } from '../net/types.ts'
import { abortable } from '../util/abort.ts'
import { RangedTokenizer } from './ranged-tokenizer.ts'

/** Ranged reads after the probe's first bytes, at most. */
export const MAX_EXTRA_READS = 3
/** Bytes those reads fetch, in all. */
export const EXTRA_READ_BYTES = 1024 * 1024
/** Bytes one further read asks for at least. */
const READ_BLOCK = 64 * 1024

export interface AvDetails {
  width: number | null
  height: number | null
  duration: number | null
  duration_pretty: string | null
}

export const NO_AV_DETAILS: Readonly<AvDetails> = Object.freeze({ width: null, height: null, duration: null, duration_pretty: null })

export interface AvReadOptions {
  probe: Probe
  signal: AbortSignal
}

/** Seconds as pretty-ms writes them (`2.5s`, `1m 30s`). */
export function toDurationPretty (seconds: number | null): string | null {
  return seconds === null ? null : prettyMilliseconds(Math.round(seconds * 1000))
}

/** Whether a probe's answer is the first bytes of a range the server honoured (so further ranges can be asked). */
function honoursRanges (result: ProbeResult): boolean {
  return result.statusCode === 206 && /^\s*bytes\s+0\s*-/i.test(result.headers['content-range'] ?? '')
}

/**
 * The details of a probed video or audio file. `head` is the probe's answer (its first bytes); the container is
 * parsed from there, with further ranged reads of the same URL only where it needs them. Never throws but for the
 * request's own deadline.
 */
export async function readAvDetails (head: ProbeResult, options: AvReadOptions): Promise<AvDetails> {
  const { probe, signal } = options
  const mime = (head.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase()
  const tokenizer = new RangedTokenizer({
    head: head.body,
    size: head.totalSize,
    ranges: honoursRanges(head),
    ...(mime === '' || mime === 'application/octet-stream' ? {} : { mimeType: mime }),
    fetch: async (offset, length) => {
      const part = await probe(head.url, { signal, offset, maxBytes: length })
      const range = /^\s*bytes\s+(\d+)\s*-/i.exec(part.headers['content-range'] ?? '')
      return part.statusCode === 206 && Number(range?.[1]) === offset ? part.body : null
    }
  }, { bytes: EXTRA_READ_BYTES, reads: MAX_EXTRA_READS, block: READ_BLOCK })
  try {
    // Raced with the deadline: the parse may be between reads when the request's time is up.
    return detailsOf(await abortable(parseFromTokenizer(tokenizer, { duration: false, skipCovers: true, skipPostHeaders: true }), signal))
  } catch (err) {
    if (signal.aborted) throw err
    return { ...NO_AV_DETAILS }
  }
}

/** The details of a file held whole in memory (a `data:` URI). */
export async function readAvDetailsOf (bytes: Buffer, mime: string): Promise<AvDetails> {
  const head: ProbeResult = { url: '', statusCode: 200, headers: { 'content-type': mime }, body: bytes, totalSize: bytes.length }
  const never = async (): Promise<never> => { throw new Error('a data: URI is read whole') }
  return await readAvDetails(head, { probe: never, signal: new AbortController().signal })
}

function detailsOf (metadata: IAudioMetadata): AvDetails {
  const tracks = metadata.format.trackInfo ?? []
  const video = tracks.find(track => track.video !== undefined)?.video
  // The container's duration (audio), else the longest track's (an mp4 video track's media header).
  const trackDurations = tracks.map(track => track.duration).filter(isPositive)
  const duration = [metadata.format.duration].filter(isPositive)[0] ??
    (trackDurations.length === 0 ? null : Math.max(...trackDurations))
  const width = video?.displayWidth ?? video?.pixelWidth
  const height = video?.displayHeight ?? video?.pixelHeight
  const rounded = duration === null ? null : Math.round(duration * 1000) / 1000
  return {
    width: isPositive(width) ? Math.round(width) : null,
    height: isPositive(height) ? Math.round(height) : null,
    duration: rounded,
    duration_pretty: toDurationPretty(rounded)
  }
}

function isPositive (value: number | undefined): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0
}
