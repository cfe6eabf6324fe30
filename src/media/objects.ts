// Media objects (docs/api.md §4.2) and the checks a media URL must pass before it is returned (§3.4 `ping`, §9).
// Everything here is pure except probeMediaObject, which makes the one ranged GET a candidate gets.
import { imageSize } from 'image-size'
import prettyBytes from 'pretty-bytes'
import type { Logger } from 'pino'
import type { Probe, ProbeResult } from '../net/types.ts'
import { toHttpUrl } from '../util/url.ts'
import { DEFAULT_PROBE_BYTES } from '../config.ts'
import { CONTENT_TYPE_EXTENSIONS } from './content-types.ts'
import { readAvDetails, readAvDetailsOf, type AvDetails } from './av.ts'

/** What a media URL is wanted for; `logo` is an image with the same checks. */
export type MediaKind = 'image' | 'logo' | 'video' | 'audio'

export interface MediaObject {
  url: string
  /** File extension: from the content type, else from the URL. */
  type: string | null
  size: number | null
  /** Images and video only. */
  height?: number | null
  width?: number | null
  size_pretty: string | null
  /** Video and audio only. */
  duration?: number | null
  duration_pretty?: string | null
}

export interface Dimensions {
  width: number | null
  height: number | null
}

export interface SniffedImage extends Dimensions {
  type: string
}

/** A probe reads at most this much (the guarded client's default). */
export const PROBE_BYTES = DEFAULT_PROBE_BYTES
/** An SVG must be read whole to be checked for script; one re-probe reads up to this much. */
export const SVG_CHECK_BYTES = 1024 * 1024

const EXTENSION_ALIASES: Readonly<Record<string, string>> = { jpeg: 'jpg', jpe: 'jpg', jfif: 'jpg', tif: 'tiff', htm: 'html' }

const VIDEO_EXTENSIONS = new Set(['mp4', 'm4v', 'webm', 'ogv', 'mov', 'mkv', 'avi', 'mpeg', 'mpg', '3gp'])
const AUDIO_EXTENSIONS = new Set(['mp3', 'm4a', 'aac', 'ogg', 'oga', 'opus', 'wav', 'flac', 'weba'])

/** Content types that say nothing about the bytes; the bytes decide. */
const UNINFORMATIVE_TYPES = new Set([
  '', 'application/octet-stream', 'binary/octet-stream', 'application/x-octet-stream', 'application/unknown',
  'application/binary', 'text/plain', 'application/xml', 'text/xml'
])

/** The media type of a content-type header value, lower-cased, without parameters. */
export function mimeOf (contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase()
}

/** File extension for a content type, or null when the type names none. */
export function typeFromContentType (contentType: string | undefined): string | null {
  const mime = mimeOf(contentType)
  if (mime === '') return null
  const known = CONTENT_TYPE_EXTENSIONS[mime]
  if (known !== undefined) return known
  const match = /^(image|video|audio)\/(?:x-)?([a-z0-9]{2,5})$/.exec(mime)
  return match === null ? null : normalizeExtension(match[2]!)
}

/** File extension of a URL's last path segment (query and fragment ignored); data: URIs use their media type. */
export function typeFromUrl (url: string): string | null {
  if (/^data:/i.test(url)) {
    const parsed = parseDataUri(url)
    return parsed === null ? null : typeFromContentType(parsed.mime)
  }
  let pathname: string
  try {
    pathname = new URL(url).pathname
  } catch {
    return null
  }
  const segment = pathname.slice(pathname.lastIndexOf('/') + 1)
  const match = /\.([a-z0-9]{1,5})$/i.exec(segment)
  return match === null ? null : normalizeExtension(match[1]!.toLowerCase())
}

function normalizeExtension (ext: string): string {
  return EXTENSION_ALIASES[ext] ?? ext
}

/** `315 B`, `4.12 kB`, `1.36 MB`: SI units, three significant digits. */
export function toSizePretty (size: number | null): string | null {
  return size === null ? null : prettyBytes(size)
}

/** Format and pixel dimensions from an image's first bytes, or null when they are not an image we know. */
export function sniffImage (bytes: Uint8Array): SniffedImage | null {
  if (bytes.length === 0) return null
  try {
    const result = imageSize(bytes)
    const type = normalizeSniffedType(result.type)
    if (type === null) return null
    let width = positive(result.width)
    let height = positive(result.height)
    // JPEG EXIF orientations 5–8 are rotated a quarter turn: the displayed image is the other way round.
    if (result.orientation !== undefined && result.orientation >= 5 && result.orientation <= 8) {
      [width, height] = [height, width]
    }
    return { type, width, height }
  } catch {
    return isSvgText(bytes) ? { type: 'svg', width: null, height: null } : null
  }
}

function normalizeSniffedType (type: string | undefined): string | null {
  if (type === undefined) return null
  if (type === 'jxl-stream') return 'jxl'
  if (type === 'j2c') return 'jp2'
  return type
}

function positive (value: number | undefined): number | null {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.round(value) : null
}

function isSvgText (bytes: Uint8Array): boolean {
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, 4096)).toString('utf8')
  return /<svg[\s>]/i.test(head)
}

/** Index of the first byte that is not a UTF-8 byte order mark or ASCII whitespace. */
function firstSignificantByte (bytes: Uint8Array): number {
  let i = 0
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) i = 3
  while (i < bytes.length && (bytes[i] === 0x20 || bytes[i] === 0x09 || bytes[i] === 0x0a || bytes[i] === 0x0d || bytes[i] === 0x0c)) i++
  return i
}

const SVG_SCRIPT = /<script[\s>/]/i
// An event-handler attribute: whitespace, a quote or a slash before `on<name>=`.
const SVG_EVENT_HANDLER = /[\s"'/]on[a-z0-9_-]+\s*=/i
const SVG_JAVASCRIPT_URL = /javascript\s*:/i

/**
 * Whether an image candidate looks executable (§9): an SVG with `<script>`, an `on*=` attribute or a
 * `javascript:` URL, or a raster image (ico, png, …) whose body starts with `<` (HTML served as an image).
 */
export function looksExecutable (bytes: Uint8Array, type: string | null): boolean {
  if (type === 'svg') {
    const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('utf8')
    return SVG_SCRIPT.test(text) || SVG_EVENT_HANDLER.test(text) || SVG_JAVASCRIPT_URL.test(text)
  }
  return bytes[firstSignificantByte(bytes)] === 0x3c
}

export interface DataUri {
  mime: string
  bytes: Buffer
}

/** Decodes a well-formed `data:` URI, or gives null. */
export function parseDataUri (uri: string): DataUri | null {
  const match = /^data:([^,]*),(.*)$/is.exec(uri.trim())
  if (match === null) return null
  const params = match[1]!.split(';').map(part => part.trim())
  const isBase64 = params.length > 1 && params[params.length - 1]!.toLowerCase() === 'base64'
  const mime = (params[0] ?? '').toLowerCase() || 'text/plain'
  if (!/^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/.test(mime)) return null
  const payload = match[2]!
  let bytes: Buffer
  if (isBase64) {
    const compact = payload.replace(/\s+/g, '')
    let decoded = compact
    try {
      decoded = decodeURIComponent(compact)
    } catch {
      return null
    }
    if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(decoded) || decoded.length % 4 === 1) return null
    bytes = Buffer.from(decoded, 'base64')
  } else {
    try {
      bytes = Buffer.from(decodeURIComponent(payload), 'utf8')
    } catch {
      return null
    }
  }
  if (bytes.length === 0) return null
  return { mime, bytes }
}

function isImageKind (kind: MediaKind): boolean {
  return kind === 'image' || kind === 'logo'
}

function mimeFitsKind (mime: string, kind: MediaKind): boolean {
  if (isImageKind(kind)) return mime.startsWith('image/')
  if (kind === 'video') return mime.startsWith('video/') || mime === 'application/ogg'
  return mime.startsWith('audio/') || mime === 'application/ogg'
}

/**
 * A candidate URL as §9 wants it: resolved against the page, http(s) only; a well-formed `data:` URI of the
 * kind's media type is kept as is; `javascript:` and everything else give null.
 */
export function resolveMediaUrl (value: string, baseUrl: string, kind: MediaKind = 'image'): string | null {
  const trimmed = value.trim()
  if (trimmed === '') return null
  if (/^data:/i.test(trimmed)) {
    const parsed = parseDataUri(trimmed)
    return parsed !== null && mimeFitsKind(parsed.mime, kind) ? trimmed : null
  }
  return toHttpUrl(trimmed, baseUrl) ?? null
}

/** Why a probed candidate is not a usable media object of this kind, or null when it is. */
export function rejectReason (url: string, result: ProbeResult, kind: MediaKind): string | null {
  if (result.statusCode < 200 || result.statusCode >= 300) return `status ${result.statusCode}`
  const mime = mimeOf(result.headers['content-type'])
  if (isImageKind(kind)) {
    const sniffed = sniffImage(result.body)
    if (!mime.startsWith('image/') && !(UNINFORMATIVE_TYPES.has(mime) && sniffed !== null)) return `content type ${mime || 'missing'}`
    const type = imageTypeOf(mime, url, sniffed)
    if (type === 'svg' && isTruncated(result)) return 'svg too large to check'
    if (looksExecutable(result.body, type)) return 'looks executable'
    return null
  }
  if (mimeFitsKind(mime, kind)) return null
  const ext = typeFromUrl(url)
  const known = kind === 'video' ? VIDEO_EXTENSIONS : AUDIO_EXTENSIONS
  if (UNINFORMATIVE_TYPES.has(mime) && ext !== null && known.has(ext)) return null
  return `content type ${mime || 'missing'}`
}

function imageTypeOf (mime: string, url: string, sniffed: SniffedImage | null): string | null {
  const fromHeader = UNINFORMATIVE_TYPES.has(mime) ? null : typeFromContentType(mime)
  return fromHeader ?? sniffed?.type ?? typeFromUrl(url)
}

function isTruncated (result: ProbeResult): boolean {
  return result.totalSize === null ? result.body.length >= PROBE_BYTES : result.body.length < result.totalSize
}

function buildMediaObject (kind: MediaKind, url: string, type: string | null, size: number | null, dimensions: Dimensions): MediaObject {
  const sizePretty = toSizePretty(size)
  if (kind === 'audio') return { url, type, size, size_pretty: sizePretty, duration: null, duration_pretty: null }
  const media: MediaObject = { url, type, size, height: dimensions.height, width: dimensions.width, size_pretty: sizePretty }
  if (kind === 'video') return { ...media, duration: null, duration_pretty: null }
  return media
}

/**
 * The media object for a probed candidate, or null when the candidate fails: a status other than 2xx, a content
 * type of the wrong kind (text/html for an image), or an image that looks executable.
 */
export function toMediaObject (url: string, result: ProbeResult, kind: MediaKind = 'image'): MediaObject | null {
  if (rejectReason(url, result, kind) !== null) return null
  const mime = mimeOf(result.headers['content-type'])
  if (isImageKind(kind)) {
    const sniffed = sniffImage(result.body)
    const type = UNINFORMATIVE_TYPES.has(mime)
      ? (typeFromUrl(url) ?? sniffed?.type ?? null)
      : (typeFromContentType(mime) ?? typeFromUrl(url) ?? sniffed?.type ?? null)
    return buildMediaObject(kind, url, type, result.totalSize, sniffed ?? { width: null, height: null })
  }
  const type = UNINFORMATIVE_TYPES.has(mime) ? typeFromUrl(url) : (typeFromContentType(mime) ?? typeFromUrl(url))
  return buildMediaObject(kind, url, type, result.totalSize, { width: null, height: null })
}

/** A `data:` URI decoded locally: no request is made. Null when it is malformed or not of the kind. */
export function dataUriToMediaObject (uri: string, kind: MediaKind = 'image'): MediaObject | null {
  const parsed = parseDataUri(uri)
  if (parsed === null || !mimeFitsKind(parsed.mime, kind)) return null
  const type = typeFromContentType(parsed.mime)
  if (isImageKind(kind)) {
    if (looksExecutable(parsed.bytes, type)) return null
    const sniffed = sniffImage(parsed.bytes)
    return buildMediaObject(kind, uri, type ?? sniffed?.type ?? null, parsed.bytes.length, sniffed ?? { width: null, height: null })
  }
  return buildMediaObject(kind, uri, type, parsed.bytes.length, { width: null, height: null })
}

/** An unchecked media object (`ping.<kind>=false`): the URL and its extension, everything else null. */
export function toUncheckedMediaObject (url: string, kind: MediaKind = 'image'): MediaObject {
  return buildMediaObject(kind, url, typeFromUrl(url), null, { width: null, height: null })
}

export interface TargetBody {
  url: string
  statusCode: number
  headers: Record<string, string>
  body: Buffer
}

/**
 * The target itself as a media object (§9, non-HTML targets), from the bytes already fetched: no request.
 * The size is the content-length when the body was not content-encoded.
 */
export function targetToMediaObject (target: TargetBody, kind: MediaKind): MediaObject | null {
  const encoding = (target.headers['content-encoding'] ?? 'identity').trim().toLowerCase()
  const declared = Number(target.headers['content-length'])
  const totalSize = (encoding === '' || encoding === 'identity') && target.headers['content-length'] !== undefined &&
    Number.isSafeInteger(declared) && declared >= 0
    ? declared
    : null
  const body = target.body.length > SVG_CHECK_BYTES ? target.body.subarray(0, SVG_CHECK_BYTES) : target.body
  const result: ProbeResult = { url: target.url, statusCode: target.statusCode, headers: target.headers, body, totalSize: totalSize ?? target.body.length }
  const media = toMediaObject(target.url, result, kind)
  return media === null ? null : { ...media, size: totalSize, size_pretty: toSizePretty(totalSize) }
}

export interface ProbeMediaOptions {
  probe: Probe
  signal: AbortSignal
  log?: Logger
}

/**
 * Checks one candidate (§3.4 `ping`): data: URIs are decoded locally; anything else gets one ranged GET of up to
 * 64 KiB (an SVG that does not fit is read again, up to 1 MiB, so it can be checked whole; a video or audio
 * container may take a few more bounded ranged reads, av.ts). A failing candidate
 * gives null; only the request's own deadline (the signal) makes this throw.
 */
export async function probeMediaObject (url: string, kind: MediaKind, options: ProbeMediaOptions): Promise<MediaObject | null> {
  const { probe, signal, log } = options
  if (/^data:/i.test(url)) {
    const media = dataUriToMediaObject(url, kind)
    const parsed = media === null || isImageKind(kind) ? null : parseDataUri(url)
    return parsed === null ? media : withAvDetails(media!, kind, await readAvDetailsOf(parsed.bytes, parsed.mime))
  }
  let result: ProbeResult
  try {
    result = await probe(url, { signal, maxBytes: PROBE_BYTES })
    if (isImageKind(kind) && result.statusCode >= 200 && result.statusCode < 300 && isTruncated(result) &&
      sniffImage(result.body)?.type === 'svg') {
      result = await probe(url, { signal, maxBytes: SVG_CHECK_BYTES })
    }
  } catch (err) {
    if (signal.aborted) throw err
    log?.debug({ url, kind, err }, 'media candidate unreachable')
    return null
  }
  const reason = rejectReason(url, result, kind)
  if (reason !== null) {
    log?.debug({ url, kind, reason }, 'media candidate dropped')
    return null
  }
  const media = toMediaObject(url, result, kind)
  // Video and audio: duration (and a video's size) from the container, over a bounded read (av.ts).
  return media === null || isImageKind(kind) ? media : withAvDetails(media, kind, await readAvDetails(result, { probe, signal }))
}

/** A video or audio media object with its details: duration for both, width and height for video only. */
function withAvDetails (media: MediaObject, kind: MediaKind, details: AvDetails): MediaObject {
  const { width, height, ...timing } = details
  return kind === 'video' ? { ...media, width, height, ...timing } : { ...media, ...timing }
}
