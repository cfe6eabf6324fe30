// `adblock` (docs/api.md §3.5): the filter engine and the consent-banner rules, loaded once and shared by every page.
//
// Network and cosmetic filtering use Ghostery's adblocker (the engine Microlink uses) over a serialized engine that
// ships in the repository (assets/adblock/engine.bin: EasyList, EasyPrivacy, EasyList Cookie, Peter Lowe's list and
// uBlock Origin's lists, compiled by Ghostery's `fromPrebuiltFull`; provenance and licences in
// docs/bundled-data.md). Nothing is downloaded at run time. Consent banners are answered by DuckDuckGo's
// autoconsent (consent.ts); those its opt-out did not remove are hidden, and taken out of the document, by a second,
// cosmetic-only engine over the cookie-notice lists in data/cookie-notices/ (the AdGuard Cookie Notices filter's
// element-hiding rules and pagecast's own few). Components do not import each other: the browser pool gets this
// object from the context.
import { readFile } from 'node:fs/promises'
import { FiltersEngine, Request } from '@ghostery/adblocker'
import type { RequestType } from '@ghostery/adblocker'
import { getDomain, getHostname } from 'tldts'
import { loadConsentScript } from './consent.ts'
import { loadConsentDetector, type ConsentDetector } from './consent-detect.ts'

export { CONSENT_STATUS_EXPRESSION, CONSENT_STYLE_SELECTOR } from './consent.ts'
export type { ConsentStatus } from './consent.ts'
export type { ConsentDetector } from './consent-detect.ts'

/** The bundled engine, next to src/ (the Docker image copies assets/ too). */
export const DEFAULT_ENGINE_URL = new URL('../../assets/adblock/engine.bin', import.meta.url)
/** The cookie-notice lists (element hiding only), in the syntax of EasyList; docs/bundled-data.md. */
export const DEFAULT_CONSENT_LISTS: readonly URL[] = [
  new URL('../../data/cookie-notices/adguard/cookie-notices.txt', import.meta.url),
  new URL('../../data/cookie-notices/platforms.txt', import.meta.url)
]
/**
 * A custom property that only the consent lists' hiding style sets: the page step finds the rules of the consent
 * stylesheet by it, and removes the elements they match.
 */
export const CONSENT_HIDDEN_PROPERTY = '--pagecast-consent-banner'
const CONSENT_HIDING_STYLE = `display: none !important; ${CONSENT_HIDDEN_PROPERTY}: 1;`

/** What to do with one request. */
export type RequestVerdict =
  | { action: 'allow' }
  | { action: 'block', filter: string }
  /** Answer with a neutered resource instead (uBlock's redirect resources: an empty script, a 1x1 GIF, ...). */
  | { action: 'redirect', filter: string, contentType: string, body: Buffer }

export interface RequestDetails {
  url: string
  /** The URL of the document that made the request (the frame's). */
  sourceUrl: string
  /** CDP's resource type in lower case (`script`, `image`, `xhr`, ...), or `sub_frame` for a frame's document. */
  type: string
}

/** The class names, ids and link targets found in a document: generic hiding rules are looked up by them. */
export interface DomFeatures {
  classes: string[]
  ids: string[]
  hrefs: string[]
}

export interface AdblockStats {
  networkFilters: number
  cosmeticFilters: number
  /** Element-hiding rules of the cookie-notice lists. */
  consentFilters: number
  /** ms to read and deserialize the engine, parse the cookie-notice lists and read the consent rules, at start. */
  loadMs: number
  /** Size of the serialized engine, bytes. */
  engineBytes: number
}

export interface Adblocker {
  readonly stats: AdblockStats
  /** The verdict for a sub-request (the main document of a job is never filtered). */
  match (details: RequestDetails): RequestVerdict
  /**
   * The CSS that hides ad slots and leftover banners in the document at `url`: its hostname's rules, the generic
   * rules that apply everywhere, and the generic rules keyed by what the document contains (`features`).
   */
  cosmeticStyles (url: string, features: DomFeatures): string
  /**
   * The CSS that hides consent banners in the document at `url`, from the cookie-notice lists: every hiding rule in
   * it sets CONSENT_HIDDEN_PROPERTY, so that what it hides can be removed.
   */
  consentStyles (url: string, features: DomFeatures): string
  /** The script that starts autoconsent in a loaded document (consent.ts); JavaScript must be on. */
  readonly consentScript: string
  /** Whether a document may hold a consent platform, so that the script is worth starting (consent-detect.ts). */
  readonly consentDetector: ConsentDetector
}

export interface AdblockOptions {
  /** The serialized engine; default DEFAULT_ENGINE_URL. */
  engine?: URL | string
  /** The cookie-notice lists; default DEFAULT_CONSENT_LISTS. */
  consentLists?: ReadonlyArray<URL | string>
}

const TYPES: ReadonlySet<string> = new Set([
  'document', 'sub_frame', 'stylesheet', 'image', 'media', 'font', 'script', 'texttrack', 'xhr', 'fetch', 'prefetch',
  'eventsource', 'websocket', 'manifest', 'signedexchange', 'ping', 'cspviolationreport', 'preflight', 'other'
])

function requestType (type: string): RequestType {
  return (TYPES.has(type) ? type : 'other') as RequestType
}

/** The rules of one document: its hostname's, the generic ones, and those keyed by what it contains. */
function styles (engine: FiltersEngine, url: string, features: DomFeatures, hidingStyle?: string): string {
  const hostname = getHostname(url) ?? ''
  if (hostname === '') return ''
  const { styles } = engine.getCosmeticsFilters({
    url,
    hostname,
    domain: getDomain(url) ?? hostname,
    classes: features.classes,
    ids: features.ids,
    hrefs: features.hrefs,
    // Scriptlets need document start to be of any use, and extended selectors a content script: both are left out.
    getBaseRules: true,
    getInjectionRules: false,
    getExtendedRules: false,
    getRulesFromHostname: true,
    getRulesFromDOM: true,
    hidingStyle
  })
  return styles
}

/** The cookie-notice lists as one cosmetic-only engine (parsed at start: a few seconds on a busy machine). */
async function loadConsentEngine (lists: ReadonlyArray<URL | string>): Promise<FiltersEngine> {
  const texts = await Promise.all(lists.map(async (list) => await readFile(list, 'utf8')))
  return FiltersEngine.parse(texts.join('\n'), {
    loadNetworkFilters: false,
    loadCSPFilters: false,
    enableHtmlFiltering: false,
    loadExtendedSelectors: false
  })
}

/**
 * Reads and deserializes the bundled engine, parses the cookie-notice lists and reads the consent rules. Throws when
 * the engine does not match the library.
 */
export async function loadAdblocker (options: AdblockOptions = {}): Promise<Adblocker> {
  const t0 = performance.now()
  const [bytes, consentEngine, consentScript, consentDetector] = await Promise.all([
    readFile(options.engine ?? DEFAULT_ENGINE_URL),
    loadConsentEngine(options.consentLists ?? DEFAULT_CONSENT_LISTS),
    loadConsentScript(),
    loadConsentDetector()
  ])
  const engine = FiltersEngine.deserialize(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength))
  const loadMs = performance.now() - t0
  const { networkFilters, cosmeticFilters } = engine.getFilters()
  const stats: AdblockStats = {
    networkFilters: networkFilters.length,
    cosmeticFilters: cosmeticFilters.length,
    consentFilters: consentEngine.getFilters().cosmeticFilters.length,
    loadMs,
    engineBytes: bytes.byteLength
  }

  return {
    stats,
    consentScript,
    consentDetector,
    match ({ url, sourceUrl, type }) {
      const request = Request.fromRawDetails({ url, sourceUrl, type: requestType(type) })
      if (!request.isSupported) return { action: 'allow' }
      const { match, redirect, filter } = engine.match(request)
      if (!match) return { action: 'allow' }
      const rule = filter?.toString() ?? ''
      if (redirect !== undefined) {
        // A content type with `;base64` carries a base64 body; any other, the body as text.
        const [mime = 'text/plain', encoding] = redirect.contentType.split(';')
        const body = encoding?.trim() === 'base64' ? Buffer.from(redirect.body, 'base64') : Buffer.from(redirect.body, 'utf8')
        return { action: 'redirect', filter: rule, contentType: mime.trim(), body }
      }
      return { action: 'block', filter: rule }
    },
    cosmeticStyles: (url, features) => styles(engine, url, features),
    consentStyles: (url, features) => styles(consentEngine, url, features, CONSENT_HIDING_STYLE)
  }
}

/** Loads the engine on first use and keeps it: the context creates one, the pool and the page steps share it. */
export interface AdblockLoader {
  get (): Promise<Adblocker>
}

export function createAdblockLoader (options: AdblockOptions = {}): AdblockLoader {
  let loading: Promise<Adblocker> | undefined
  return {
    async get () {
      loading ??= loadAdblocker(options)
      return await loading
    }
  }
}
