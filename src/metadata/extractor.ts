// Metadata without a browser: an already fetched response in, the normalized §9 fields out, with probed media
// objects for image and logo. metascraper and its rule bundles are built once, here; every outbound request
// (media pings, favicons, the root domain's page) goes through the injected guarded `probe`.
import { AsyncLocalStorage } from 'node:async_hooks'
import { TextDecoder } from 'node:util'
import metascraper from 'metascraper'
import metascraperAuthor from 'metascraper-author'
import metascraperDate from 'metascraper-date'
import metascraperDescription from 'metascraper-description'
import metascraperImage from 'metascraper-image'
import metascraperLang from 'metascraper-lang'
import metascraperLogo from 'metascraper-logo'
import metascraperLogoFavicon from 'metascraper-logo-favicon'
import metascraperPublisher from 'metascraper-publisher'
import metascraperTitle from 'metascraper-title'
import metascraperUrl from 'metascraper-url'
import type { Logger } from 'pino'
import type { Probe } from '../net/types.ts'
import { DEFAULT_MAX_HTML_BYTES } from '../config.ts'
import { META_FIELDS, type MetaField } from '../schemas/options.ts'
import {
  mimeOf,
  probeMediaObject,
  sniffImage,
  targetToMediaObject,
  toUncheckedMediaObject,
  PROBE_BYTES,
  type MediaKind,
  type MediaObject
} from '../media/objects.ts'
import { isHtml, SNIFFABLE_TYPES } from '../media/content-kind.ts'
import { guardAuthorRules, jsonLdAuthorRules, twitterCreatorRules } from './rules/author.ts'
import { createPickFn, createResolveFaviconUrl, createRootFaviconRule, originFaviconRule, type LogoScraper } from './rules/favicon.ts'
import { guardMediaRules, guardTextRules, guardUrlRules } from './rules/guards.ts'
import { toHttpUrl } from '../util/url.ts'
import { boundMarkup } from '../util/dom-limits.ts'
import { httpDateRules, toHttpDate } from './rules/http-date.ts'
import { publisherDomainRules, registrableDomain } from './rules/publisher.ts'
import type { HtmlDom, ImageLikeKind, PingOptions, RequestState, Rule, RuleBundle } from './rules/types.ts'

/** Distinct URLs probed per media kind in one extraction; further candidates count as failing. */
export const MAX_PROBES_PER_KIND = 16

export interface MetadataExtractorOptions {
  probe: Probe
  log?: Logger
  /** HTML beyond this many bytes is not parsed (MAX_HTML_BYTES, docs/api.md §9); DEFAULT_MAX_HTML_BYTES when absent. */
  maxHtmlBytes?: number
}

export interface ExtractInput {
  /** Final URL after redirects. */
  url: string
  statusCode: number
  /** Lower-case names. */
  headers: Record<string, string>
  body: Buffer
  /** The fields to return; every one is present in the result (null when missing), no other is. */
  fields: readonly MetaField[]
  ping: PingOptions
  /** The request's deadline, passed into every probe. */
  signal: AbortSignal
  /** The HTML already decoded and parsed for this request (docs/architecture.md: parsed once for metadata and rules). */
  document?: ParsedHtml
}

/** An HTML body decoded (decodeHtml) and parsed with cheerio, its base URI the page's URL. */
export interface ParsedHtml {
  html: string
  dom: HtmlDom
}

export type MetadataResult = Partial<Record<MetaField, unknown>>

export interface MetadataExtractor {
  extract: (input: ExtractInput) => Promise<MetadataResult>
}

export type TargetKind = 'html' | 'other' | Extract<MediaKind, 'image' | 'video' | 'audio'>

interface ScrapeOptions {
  url: string
  html: string
  htmlDom?: HtmlDom
  validateUrl: false
  pickPropNames: Set<string>
  request: RequestState
}

type Scraper = (options: ScrapeOptions) => Promise<Record<string, unknown>>

type MetascraperRules = Parameters<typeof metascraper>[0]
type FaviconOptions = NonNullable<Parameters<typeof metascraperLogoFavicon>[0]>

export function createMetadataExtractor ({ probe, log, maxHtmlBytes = DEFAULT_MAX_HTML_BYTES }: MetadataExtractorOptions): MetadataExtractor {
  const als = new AsyncLocalStorage<RequestState>()
  const faviconOptions = {
    // No third-party logo service; /favicon.* and the root domain are our rules (favicon.ts says why).
    google: false,
    favicon: false,
    rootFavicon: false,
    keyvOpts: { store: createNullStore() },
    pickFn: createPickFn(als),
    resolveFaviconUrl: createResolveFaviconUrl(als)
  } as unknown as FaviconOptions

  const rootScraper = toScraper([
    { logo: guardMediaRules('logo', [...rulesOf(metascraperLogoFavicon(faviconOptions), 'logo'), originFaviconRule()]) }
  ])
  const scrapeLogo: LogoScraper = async ({ url, html, request }) => {
    const out = await rootScraper({ url, html, validateUrl: false, pickPropNames: new Set(['logo']), request })
    return typeof out.logo === 'string' ? out.logo : undefined
  }

  const scraper = toScraper([
    { title: guardTextRules(rulesOf(metascraperTitle(), 'title')) },
    { description: guardTextRules(rulesOf(metascraperDescription(), 'description')) },
    { lang: rulesOf(metascraperLang(), 'lang') },
    {
      author: guardAuthorRules([
        ...bundleRules(jsonLdAuthorRules(), 'author'),
        ...rulesOf(metascraperAuthor(), 'author'),
        ...bundleRules(twitterCreatorRules(), 'author')
      ])
    },
    { publisher: guardTextRules([...rulesOf(metascraperPublisher(), 'publisher'), ...bundleRules(publisherDomainRules(), 'publisher')]) },
    { date: [...rulesOf(metascraperDate(), 'date'), ...bundleRules(httpDateRules(), 'date')] },
    { image: guardMediaRules('image', rulesOf(metascraperImage(), 'image')) },
    { url: guardUrlRules(rulesOf(metascraperUrl(), 'url')) },
    {
      logo: guardMediaRules('logo', [
        ...rulesOf(metascraperLogo(), 'logo'),
        ...rulesOf(metascraperLogoFavicon(faviconOptions), 'logo'),
        originFaviconRule(),
        createRootFaviconRule({ scrapeLogo, toHtml: (body, headers) => htmlOf(body, headers, maxHtmlBytes) })
      ])
    }
  ])

  async function extract (input: ExtractInput): Promise<MetadataResult> {
    const fields = META_FIELDS.filter(field => input.fields.includes(field))
    if (fields.length === 0) return {}
    input.signal.throwIfAborted()

    const target = classifyTarget(input.headers, input.body)
    if (target === 'image' || target === 'video' || target === 'audio') return describeMediaTarget(input, target, fields)

    const given = target === 'html' ? input.document : undefined
    const html = given?.html ?? (target === 'html' ? decodeHtml(input.body, input.headers['content-type'], maxHtmlBytes) : '')
    const request = createRequestState(input, probe, log)
    const raw = await als.run(request, () =>
      scraper({ url: input.url, html, ...(given === undefined ? {} : { htmlDom: given.dom }), validateUrl: false, pickPropNames: new Set(fields), request }))

    const result: MetadataResult = {}
    // Image and logo are checked at once (each is a probe), their places in the result kept.
    const media: Array<Promise<void>> = []
    for (const field of fields) {
      const value = raw[field]
      if (field === 'image' || field === 'logo') {
        result[field] = null
        if (typeof value === 'string') media.push(toMedia(value, field, request).then((object) => { result[field] = object }))
      } else {
        result[field] = typeof value === 'string' && value !== '' ? value : null
      }
    }
    await Promise.all(media)
    return result
  }

  return { extract }
}

async function toMedia (url: string, kind: ImageLikeKind, request: RequestState): Promise<MediaObject | null> {
  return request.ping[kind] ? request.checkMedia(url, kind) : toUncheckedMediaObject(url, kind)
}

function createRequestState (input: ExtractInput, probe: Probe, log: Logger | undefined): RequestState {
  const checks = new Map<string, Promise<MediaObject | null>>()
  const probed: Record<ImageLikeKind, number> = { image: 0, logo: 0 }
  const { signal } = input
  return {
    headers: input.headers,
    signal,
    ping: { image: input.ping.image, logo: input.ping.logo },
    probe,
    log,
    // image and logo candidates pass the same checks, so one probe per URL serves both.
    checkMedia (url, kind) {
      const known = checks.get(url)
      if (known !== undefined) return known
      if (!/^data:/i.test(url)) {
        if (probed[kind] >= MAX_PROBES_PER_KIND) {
          log?.debug({ url, kind }, 'media candidate skipped: probe budget spent')
          return Promise.resolve(null)
        }
        probed[kind]++
      }
      const pending = probeMediaObject(url, kind, { probe, signal, ...(log === undefined ? {} : { log }) })
      checks.set(url, pending)
      return pending
    }
  }
}

/** Image, video and audio targets (§9): the target is the media; url, publisher and date come from the URL and headers. */
function describeMediaTarget (input: ExtractInput, kind: 'image' | 'video' | 'audio', fields: readonly MetaField[]): MetadataResult {
  const result: MetadataResult = {}
  for (const field of fields) {
    switch (field) {
      case 'url':
        result.url = toHttpUrl(input.url, input.url) ?? null
        break
      case 'publisher':
        result.publisher = registrableDomain(input.url)
        break
      case 'date':
        result.date = toHttpDate(input.headers['last-modified']) ?? toHttpDate(input.headers.date) ?? null
        break
      case 'image':
        result.image = kind !== 'image'
          ? null
          : input.ping.image ? targetToMediaObject(input, 'image') : toUncheckedMediaObject(input.url, 'image')
        break
      default:
        result[field] = null
    }
  }
  return result
}

export function classifyTarget (headers: Record<string, string>, body: Buffer): TargetKind {
  if (isHtml(headers['content-type'], body)) return 'html'
  const mime = mimeOf(headers['content-type'])
  if (mime.startsWith('image/')) return 'image'
  if (mime.startsWith('video/')) return 'video'
  if (mime.startsWith('audio/')) return 'audio'
  if (SNIFFABLE_TYPES.has(mime) && sniffImage(body.subarray(0, PROBE_BYTES)) !== null) return 'image'
  return 'other'
}

/** The text of an HTML response's first bytes, or null when it is not HTML (root-domain favicon step). */
function htmlOf (body: Buffer, headers: Record<string, string>, maxBytes: number): string | null {
  if (!isHtml(headers['content-type'], body)) return null
  // Another page than the target, parsed by metascraper from this text: held to the same DOM bounds.
  return boundMarkup(decodeHtml(body, headers['content-type'], maxBytes))
}

/**
 * Decodes at most `maxBytes` of HTML (MAX_HTML_BYTES): the charset comes from a byte order mark, else the content
 * type, else a `<meta charset>` / `http-equiv` declaration in the first 1024 bytes, else UTF-8.
 */
export function decodeHtml (body: Buffer, contentType: string | undefined, maxBytes: number): string {
  const bytes = body.length > maxBytes ? body.subarray(0, maxBytes) : body
  const label = bomCharset(bytes) ?? charsetParameter(contentType) ?? metaCharset(bytes) ?? 'utf-8'
  let decoder: TextDecoder
  try {
    decoder = new TextDecoder(label)
  } catch {
    decoder = new TextDecoder('utf-8')
  }
  return decoder.decode(bytes)
}

function bomCharset (bytes: Buffer): string | undefined {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return 'utf-8'
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be'
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le'
  return undefined
}

function charsetParameter (contentType: string | undefined): string | undefined {
  const match = /;\s*charset\s*=\s*["']?([^"';\s]+)/i.exec(contentType ?? '')
  return match?.[1]
}

function metaCharset (bytes: Buffer): string | undefined {
  const head = bytes.subarray(0, 1024).toString('latin1')
  const match = /<meta\s[^>]*?charset\s*=\s*["']?\s*([a-z0-9_.:-]+)/i.exec(head)
  if (match === null) return undefined
  // A document that is read as ASCII-compatible bytes cannot be UTF-16, whatever it says (HTML spec).
  return /^utf-16/i.test(match[1]!) ? 'utf-8' : match[1]
}

function rulesOf (bundle: unknown, field: string): Rule[] {
  const rules = bundleRules(bundle as RuleBundle, field)
  if (rules.length === 0) throw new Error(`metascraper bundle has no ${field} rules`)
  return rules
}

function bundleRules (bundle: RuleBundle, field: string): Rule[] {
  const rules = bundle[field]
  return Array.isArray(rules) ? [...rules] : []
}

/**
 * A metascraper instance over our bundles. Every rule first makes the document's whole-tree serialization
 * computed once per run: @metascraper/helpers memoizes its JSON-LD parse by comparing `$.html()` of the previous
 * and current document, which otherwise serializes the whole page twice on every JSON-LD rule (about 20 of them;
 * on a 1 MiB page that was most of the extraction time). Rules only read the document, so one string is right.
 */
function toScraper (bundles: RuleBundle[]): Scraper {
  const prepared = new WeakSet<object>()
  const prepare = (rule: Rule): Rule => args => {
    if (!prepared.has(args.htmlDom)) {
      prepared.add(args.htmlDom)
      memoizeWholeHtml(args.htmlDom)
    }
    return rule(args)
  }
  const wrapped = bundles.map(bundle =>
    Object.fromEntries(Object.entries(bundle).map(([field, rules]) => [field, rules.map(prepare)])))
  return metascraper(wrapped as unknown as MetascraperRules) as unknown as Scraper
}

function memoizeWholeHtml ($: HtmlDom): void {
  const serialize = $.html.bind($)
  let whole: string | undefined
  const html = (...args: unknown[]): string => {
    if (args.length === 0) {
      whole ??= serialize()
      return whole
    }
    return (serialize as (...rest: unknown[]) => string)(...args)
  }
  $.html = html as typeof $.html
}

/**
 * A Keyv store that keeps nothing: metascraper-logo-favicon would otherwise memoize every origin's favicon in an
 * unbounded Map for the life of the process, and a cached answer would skip the probe this request must make.
 */
function createNullStore () {
  return {
    get: async (): Promise<undefined> => undefined,
    has: async (): Promise<boolean> => false,
    set: async (): Promise<boolean> => true,
    delete: async (): Promise<boolean> => false,
    clear: async (): Promise<void> => {},
    iterator: async function * (): AsyncGenerator<never> {}
  }
}
