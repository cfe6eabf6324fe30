// Where a page names its video and audio (docs/api.md §3.4 `video`, `audio`), in the order they are tried:
// Open Graph (`og:video:secure_url`, `og:video:url`, `og:video`, each group with its `og:video:type`), then
// `twitter:player:stream`, then JSON-LD `VideoObject`/`AudioObject` `contentUrl`, then `<video>`/`<audio>` and their
// `<source>` children. Pure: the candidates are checked (or not, `ping`) by discover.ts.
import type { CheerioAPI } from 'cheerio'
import { resolveMediaUrl } from './objects.ts'

export type AvKind = 'video' | 'audio'

export interface AvCandidate {
  /** Absolute http(s) URL (or a data: URI of the kind). */
  url: string
  /** The media type the page declares for it (`og:video:type`, `<source type>`), lower-cased, when it does. */
  declared?: string
}

/** The file types browsers play (docs/api.md §3.4): only these become `data.video` / `data.audio`. */
export const PLAYABLE_TYPES: Readonly<Record<AvKind, ReadonlySet<string>>> = {
  video: new Set(['mp4', 'm4v', 'webm', 'ogv', 'ogg']),
  audio: new Set(['mp3', 'm4a', 'aac', 'ogg', 'oga', 'opus', 'wav', 'flac'])
}

/** Declared media types no browser plays as a file: an embed page, Flash, a stream playlist. */
export function declaredUnplayable (declared: string | undefined, kind: AvKind): boolean {
  if (declared === undefined || declared === '') return false
  const mime = declared.split(';')[0]!.trim()
  if (mime === 'application/ogg') return false
  return !mime.startsWith(`${kind}/`) || /mpegurl|x-flv|x-ms-|quicktime|matroska|mp2t/.test(mime)
}

interface OgGroup {
  urls: string[]
  secure: string[]
  type?: string
}

/** Open Graph structured properties: `og:<kind>` or `og:<kind>:url` opens a group, its `:secure_url` and `:type` join it. */
function openGraph ($: CheerioAPI, kind: AvKind): Array<{ value: string, declared?: string }> {
  const groups: OgGroup[] = []
  $('meta[property], meta[name]').each((_, element) => {
    const name = ($(element).attr('property') ?? $(element).attr('name') ?? '').trim().toLowerCase()
    const value = ($(element).attr('content') ?? '').trim()
    if (!name.startsWith(`og:${kind}`) || value === '') return
    let group = groups[groups.length - 1]
    if (name === `og:${kind}` || name === `og:${kind}:url`) {
      if (group === undefined || group.urls.length > 0) groups.push(group = { urls: [], secure: [] })
      group.urls.push(value)
    } else if (name === `og:${kind}:secure_url`) {
      if (group === undefined || group.secure.length > 0) groups.push(group = { urls: [], secure: [] })
      group.secure.push(value)
    } else if (name === `og:${kind}:type` && group !== undefined) {
      group.type = value.toLowerCase()
    }
  })
  return groups.flatMap(group => [...group.secure, ...group.urls].map(value => ({ value, ...(group.type === undefined ? {} : { declared: group.type }) })))
}

function twitterStream ($: CheerioAPI): Array<{ value: string, declared?: string }> {
  const meta = (name: string): string => ($(`meta[name="${name}"], meta[property="${name}"]`).first().attr('content') ?? '').trim()
  const value = meta('twitter:player:stream')
  const declared = meta('twitter:player:stream:content_type').toLowerCase()
  return value === '' ? [] : [{ value, ...(declared === '' ? {} : { declared }) }]
}

/** `contentUrl` of every `VideoObject` / `AudioObject` in the page's JSON-LD, nested ones (`@graph`, `video`) included. */
function jsonLd ($: CheerioAPI, kind: AvKind): Array<{ value: string, declared?: string }> {
  const wanted = kind === 'video' ? 'videoobject' : 'audioobject'
  const found: Array<{ value: string, declared?: string }> = []
  const visit = (node: unknown, depth: number): void => {
    if (depth > 8 || node === null || typeof node !== 'object') return
    if (Array.isArray(node)) {
      for (const item of node) visit(item, depth + 1)
      return
    }
    const record = node as Record<string, unknown>
    const types = ([] as unknown[]).concat(record['@type']).filter((t): t is string => typeof t === 'string').map(t => t.toLowerCase())
    if (types.includes(wanted)) {
      const urls = ([] as unknown[]).concat(record.contentUrl).filter((u): u is string => typeof u === 'string')
      const declared = typeof record.encodingFormat === 'string' && record.encodingFormat.includes('/') ? record.encodingFormat.toLowerCase() : undefined
      for (const value of urls) found.push({ value, ...(declared === undefined ? {} : { declared }) })
    }
    for (const value of Object.values(record)) visit(value, depth + 1)
  }
  $('script[type="application/ld+json" i]').each((_, element) => {
    try {
      visit(JSON.parse($(element).text()), 0)
    } catch {}
  })
  return found
}

function elements ($: CheerioAPI, kind: AvKind): Array<{ value: string, declared?: string }> {
  const found: Array<{ value: string, declared?: string }> = []
  $(kind).each((_, element) => {
    const src = ($(element).attr('src') ?? '').trim()
    if (src !== '') found.push({ value: src })
    $(element).find('source').each((_, source) => {
      const value = ($(source).attr('src') ?? '').trim()
      const declared = ($(source).attr('type') ?? '').trim().toLowerCase()
      if (value !== '') found.push({ value, ...(declared === '' ? {} : { declared }) })
    })
  })
  return found
}

/** The page's candidates for one kind, resolved against the page, de-duplicated, in the order they are tried. */
export function findAvCandidates ($: CheerioAPI, pageUrl: string, kind: AvKind): AvCandidate[] {
  const raw = [...openGraph($, kind), ...twitterStream($), ...jsonLd($, kind), ...elements($, kind)]
  const seen = new Set<string>()
  const candidates: AvCandidate[] = []
  for (const { value, declared } of raw) {
    const url = resolveMediaUrl(value, pageUrl, kind)
    if (url === null || seen.has(url) || declaredUnplayable(declared, kind)) continue
    seen.add(url)
    candidates.push({ url, ...(declared === undefined ? {} : { declared }) })
  }
  return candidates
}
