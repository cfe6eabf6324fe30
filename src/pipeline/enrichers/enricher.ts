// What an enricher is: work on the extracted result once the browser slot is released, in the order of index.ts:
// storing the producers' files and describing them as media objects, then adding colours to every image-like media
// object (palette). Each reads the result built so far and adds to it.
import type { Logger } from 'pino'
import type { HttpClient } from '../../net/types.ts'
import type { Storage } from '../../storage/index.ts'
import type { OembedClient } from '../../oembed/index.ts'
import type { LighthouseRunner } from '../../browser/lighthouse/index.ts'
import type { OutputOptions, ReplyOptions } from '../../schemas/option-groups.ts'
import type { FileKind, GeneratedFile } from '../../browser/producers/index.ts'
import type { ActionResults } from '../../browser/steps/index.ts'
import type { StoredFile } from '../../storage/index.ts'
import type { PageReadResult } from '../../reader/index.ts'

/** The components the enrichers use: storage for the producers' files, oEmbed, the guarded client, Lighthouse. */
export interface EnrichDeps {
  readonly storage: Pick<Storage, 'put'>
  readonly oembed: Pick<OembedClient, 'find'>
  readonly http: Pick<HttpClient, 'probe'>
  readonly lighthouse: Pick<LighthouseRunner, 'run'>
}

/** The result of one computation as the enrichers see it. */
export interface Extraction {
  /** The `data` of the envelope, in the order its members will be sent. */
  data: Record<string, unknown>
  /** The producers' files, not yet stored. */
  generated: Partial<Record<FileKind, GeneratedFile>>
  /** Storage keys of stored files, by the dot path of their media object in `data`. */
  files: Record<string, string>
  /** The bytes of those files, by the same paths, so this request's answer needs no download. */
  bytes: Record<string, StoredFile>
  /** What the `actions` step recorded, its files not yet stored (becomes `data.actions`). */
  actions?: ActionResults
}

/** The loaded page, as the enrichers that read it see it. */
export interface LoadedPage {
  /** The final URL, after redirects. */
  readonly url: string
  /** The URL asked for. */
  readonly requestedUrl: string
  /** What the page reader read of it (src/reader/); absent when nothing read the page. */
  readonly read?: PageReadResult
  /** The target's response headers (lower-case names, repeats joined by `, `). */
  readonly headers: Readonly<Record<string, string>>
}

export interface EnrichContext {
  /** The components the enrichers use (storage, oEmbed, the guarded client, Lighthouse). */
  readonly deps: EnrichDeps
  readonly page: LoadedPage
  readonly outputs: Readonly<OutputOptions>
  readonly reply: Readonly<ReplyOptions>
  readonly cacheKey: string
  /** The entry's ttl in ms (files are cached as long). */
  readonly ttl: number
  readonly signal: AbortSignal
  /** Epoch ms by which the computation must be over. */
  readonly deadline: number
  readonly log: Logger
  /** Phase durations in ms (server-timing); an enricher adds its own. */
  readonly timings: Record<string, number>
}

export interface Enricher {
  /** A short name; also its server-timing entry. */
  readonly name: string
  applies (extraction: Extraction, outputs: Readonly<OutputOptions>): boolean
  /** Whether these outputs ask it for work that makes the request rendered in the browser (prerender.ts needsBrowser). */
  readonly needsBrowser?: (outputs: Readonly<OutputOptions>) => boolean
  enrich (extraction: Extraction, context: EnrichContext): Promise<void>
}
