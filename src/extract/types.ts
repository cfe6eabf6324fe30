// A rule's `type` (docs/api.md §3.3): validates and normalizes one value read by a rule. A value that fails gives
// null, which the rule counts as a miss (and selectorAll drops). Media types return media objects (§4.2) checked
// by `ping`, through the caller's `media` check, so they are probed under the request's signal and address guard.
import { isIP } from 'node:net'
import type { RuleType } from '../schemas/options.ts'
import type { MediaKind, MediaObject } from '../media/objects.ts'
import { normalizeField } from '../metadata/normalize.ts'

export interface TypeContext {
  /** The page's final URL: relative URLs are resolved against it. */
  url: string
  /** A media candidate as a media object (probed unless `ping.<kind>=false`), or null when it fails. */
  media: (value: string, kind: MediaKind) => Promise<MediaObject | null>
}

/** `null`, `''`, `[]` (and nothing at all) are misses (§3.3). */
export function isMiss (value: unknown): boolean {
  return value === undefined || value === null || value === '' || (Array.isArray(value) && value.length === 0)
}

const TRUE_WORDS = new Set(['true', '1', 'yes', 'on'])
const FALSE_WORDS = new Set(['false', '0', 'no', 'off'])
// The last label is a letter-only TLD, and not a file extension (`logo@2x.png` is no address).
const EMAIL_SOURCE = "[a-z0-9.!#$%&'*+/=?^_`{|}~-]+@(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\\.)+(?!(?:png|jpe?g|gif|webp|svg|avif|css|js)\\b)[a-z]{2,63}\\b"
const ONE_EMAIL = new RegExp(`^${EMAIL_SOURCE}$`, 'i')
const NUMBER_IN_TEXT = /[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:e[-+]?\d+)?|[-+]?\.\d+/i

function asText (value: unknown): string | null {
  if (typeof value === 'string') return value
  if (typeof value === 'number' && Number.isFinite(value)) return String(value)
  if (typeof value === 'boolean') return String(value)
  return null
}

function toNumber (value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null
  const text = asText(value)?.trim()
  if (text === undefined || text === '') return null
  const whole = Number(text)
  if (Number.isFinite(whole)) return whole
  const found = NUMBER_IN_TEXT.exec(text)?.[0]
  if (found === undefined) return null
  const parsed = Number(found.replace(/,/g, ''))
  return Number.isFinite(parsed) ? parsed : null
}

function toBoolean (value: unknown): boolean | null {
  if (typeof value === 'boolean') return value
  const text = asText(value)?.trim().toLowerCase()
  if (text === undefined) return null
  if (TRUE_WORDS.has(text)) return true
  if (FALSE_WORDS.has(text)) return false
  return null
}

function toObject (value: unknown): unknown {
  if (value !== null && typeof value === 'object') return value
  if (typeof value !== 'string') return null
  try {
    const parsed: unknown = JSON.parse(value)
    return parsed !== null && typeof parsed === 'object' ? parsed : null
  } catch {
    return null
  }
}

function decodeMailto (text: string): string {
  return text.replace(/mailto:([^"'\s<>?]+)/gi, (_match, address: string) => {
    try {
      return `mailto:${decodeURIComponent(address)}`
    } catch {
      return `mailto:${address}`
    }
  })
}

/** One address stays a string; a longer text gives every address in it, lower-cased, de-duplicated, in order. */
function toEmail (value: unknown): string | string[] | null {
  const text = asText(value)
  if (text === null) return null
  const single = decodeMailto(text.trim()).replace(/^mailto:/i, '').replace(/\?.*$/, '')
  if (ONE_EMAIL.test(single)) return single.toLowerCase()
  const found = new Set<string>()
  for (const match of decodeMailto(text).matchAll(new RegExp(EMAIL_SOURCE, 'gi'))) found.add(match[0].toLowerCase())
  return found.size === 0 ? null : [...found]
}

function toRegexp (value: unknown): string | null {
  const text = asText(value)?.trim()
  if (text === undefined || text === '') return null
  const literal = /^\/(.+)\/([dgimsuvy]*)$/s.exec(text)
  try {
    if (literal !== null) new RegExp(literal[1] ?? '', literal[2])
    else new RegExp(text)
    return text
  } catch {
    return null
  }
}

/** Absolute http(s), resolved against the page and serialized by the WHATWG URL parser. */
function toUrl (value: unknown, base: string): string | null {
  const text = asText(value)?.trim()
  if (text === undefined || text === '') return null
  try {
    const url = new URL(text, base)
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null
  } catch {
    return null
  }
}

/** The value checked and normalized by `type`, or null when it fails (a miss). */
export async function applyType (value: unknown, type: RuleType, context: TypeContext): Promise<unknown> {
  if (isMiss(value)) return null
  switch (type) {
    case 'auto': return value
    case 'string': return asText(value)
    case 'number': return toNumber(value)
    case 'boolean': return toBoolean(value)
    case 'object': return toObject(value)
    case 'email': return toEmail(value)
    case 'regexp': return toRegexp(value)
    case 'url': return toUrl(value, context.url)
    case 'ip': {
      const text = asText(value)?.trim() ?? ''
      return isIP(text) === 0 ? null : text
    }
    case 'date':
    case 'lang':
    case 'title':
    case 'description':
    case 'author':
    case 'publisher':
      return normalizeField(type, typeof value === 'number' ? value : asText(value)) ?? null
    case 'image':
    case 'logo':
    case 'video':
    case 'audio': {
      const text = asText(value)
      return text === null ? null : await context.media(text, type)
    }
  }
}
