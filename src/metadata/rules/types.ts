// The shape of our metascraper rules, and the per-request state they read.
// metascraper hands every extra property given to a run on to each rule, so rules get `request` beside
// `htmlDom` and `url`.
import type { RulesTestOptions } from 'metascraper'
import type { Logger } from 'pino'
import type { Probe } from '../../net/types.ts'
import type { MediaObject } from '../../media/objects.ts'

export type HtmlDom = RulesTestOptions['htmlDom']

/** Which media kinds are checked with a probe in this request (`ping.<kind>`). */
export interface PingOptions {
  image: boolean
  logo: boolean
}

export type ImageLikeKind = keyof PingOptions

/** Everything one extraction knows besides the document: made per request, never shared. */
export interface RequestState {
  /** The target's response headers (lower-case names). */
  headers: Readonly<Record<string, string>>
  /** The request's deadline; every probe gets it. */
  signal: AbortSignal
  ping: Readonly<PingOptions>
  probe: Probe
  log: Logger | undefined
  /** Checks a media candidate once per request (memoized by URL); null when it fails. */
  checkMedia: (url: string, kind: ImageLikeKind) => Promise<MediaObject | null>
}

export interface RuleArgs {
  htmlDom: HtmlDom
  /** The URL the document was loaded from. */
  url: string
  request: RequestState
}

export type Rule = (args: RuleArgs) => unknown

/** A metascraper rules bundle as we build it: field name -> ordered rules. */
export type RuleBundle = Record<string, Rule[]>
