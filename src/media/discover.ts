// `video` and `audio` (docs/api.md §3.4) as one component, built once with the guarded probe: the target itself when
// it is a file of the kind, else the page's candidates (sources.ts) in order. Each is checked as `ping` says: probed
// under the request's signal (a failing one, or one that is not a browser-playable format, is dropped and the next
// tried), or, with `ping.<kind>=false`, returned unchecked as `{url, type}` when its extension or declared type does
// not already rule it out. Never more than MAX_AV_PROBES candidates are probed per kind.
import type { CheerioAPI } from 'cheerio'
import type { Logger } from 'pino'
import type { Probe } from '../net/types.ts'
import { probeMediaObject, toUncheckedMediaObject, typeFromUrl, type MediaObject } from './objects.ts'
import { findAvCandidates, PLAYABLE_TYPES, type AvCandidate, type AvKind } from './sources.ts'

export type { AvKind } from './sources.ts'

/** Candidates probed per kind in one request, at most; further ones count as failing. */
export const MAX_AV_PROBES = 8

export interface AvInput {
  kinds: readonly AvKind[]
  /** The page's final URL. */
  url: string
  /** The parsed page, when the target is HTML. */
  $?: CheerioAPI
  /** The kind of file the target itself is, when it is video or audio (classifyTarget). */
  target?: AvKind
  ping: Readonly<Record<AvKind, boolean>>
  signal: AbortSignal
}

export interface AvFinder {
  find: (input: AvInput) => Promise<Partial<Record<AvKind, MediaObject | null>>>
}

export function createAvFinder ({ probe, log }: { probe: Probe, log?: Logger }): AvFinder {
  async function pick (kind: AvKind, candidates: AvCandidate[], input: AvInput): Promise<MediaObject | null> {
    const playable = PLAYABLE_TYPES[kind]
    if (!input.ping[kind]) {
      const unchecked = candidates.find(({ url }) => {
        const ext = typeFromUrl(url)
        return ext === null || playable.has(ext)
      })
      return unchecked === undefined ? null : toUncheckedMediaObject(unchecked.url, kind)
    }
    let probes = 0
    for (const { url } of candidates) {
      if (++probes > MAX_AV_PROBES) {
        log?.debug({ url, kind }, 'media candidate skipped: probe budget spent')
        break
      }
      const media = await probeMediaObject(url, kind, { probe, signal: input.signal, ...(log === undefined ? {} : { log }) })
      if (media !== null && media.type !== null && playable.has(media.type)) return media
      if (media !== null) log?.debug({ url, kind, type: media.type }, 'media candidate dropped: not a browser-playable format')
    }
    return null
  }

  async function find (input: AvInput): Promise<Partial<Record<AvKind, MediaObject | null>>> {
    const out: Partial<Record<AvKind, MediaObject | null>> = {}
    for (const kind of input.kinds) {
      const candidates: AvCandidate[] = input.target === kind
        ? [{ url: input.url }]
        : input.$ === undefined ? [] : findAvCandidates(input.$, input.url, kind)
      out[kind] = await pick(kind, candidates, input)
    }
    return out
  }

  return { find }
}
