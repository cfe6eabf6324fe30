// A Firecrawl Document (docs/firecrawl.md#the-document) from one served `GET /` envelope (query.ts says what the
// envelope holds). The formats asked for are made here from the page's serialized DOM: `html` is the cleaned markup
// (no scripts, styles or other non-content elements; `includeTags`/`excludeTags` applied; without navigation,
// banners, footers and sidebars when `onlyMainContent`), `markdown` that markup through our Markdown converter.
import { load } from 'cheerio'
import type { Envelope } from '../cache/entries.ts'
import { toMarkdown } from '../extract/markdown.ts'
import type { ScrapeRequest } from './request.ts'
import { FIELDS } from './query.ts'

export interface DocumentMetadata {
  title?: string
  description?: string
  language?: string
  /** The URL as requested. */
  sourceURL: string
  /** The page's URL (after redirects; see docs/firecrawl.md for the one approximation). */
  url: string
  statusCode: number
  contentType?: string
  favicon?: string
  cacheState: 'hit' | 'miss'
  /** ISO 8601: when the page was loaded. */
  cachedAt: string
  /** Every `<meta name|property content>` of the page, by its name as written (repeated ones as a list), and `og:*` also in camelCase (`ogTitle`). */
  [meta: string]: unknown
}

export interface ActionsResult {
  screenshots: string[]
  scrapes: Array<{ url: string, html: string }>
  javascriptReturns: Array<{ type: string, value: unknown }>
  pdfs: string[]
}

export interface Document {
  markdown?: string
  html?: string
  rawHtml?: string
  links?: string[]
  images?: string[]
  screenshot?: string
  actions?: ActionsResult
  metadata: DocumentMetadata
  warning?: string
}

/** What document() needs of the served answer besides its envelope. */
export interface Served {
  envelope: Envelope
  /** HIT or STALE answers are `hit`. */
  cacheState: 'hit' | 'miss'
  /** Epoch ms the entry was computed. */
  createdAt: number
  /** The normalized target URL of the query (what redirects start from). */
  requestedUrl: string
}

/**
 * What `onlyMainContent` leaves out: the page's navigation, banners, footers, sidebars and dialogs, by element and
 * ARIA role. Not Readability (the `mainContent` of GET /): it drops the article's own heading, which Firecrawl's
 * clients expect to keep.
 */
const NOT_MAIN = 'header, nav, footer, aside, dialog, [role="navigation"], [role="banner"], [role="contentinfo"], [role="complementary"], [role="dialog"], [aria-hidden="true"]'

/** Elements that are never content; removed before any other cleaning. */
const NEVER_CONTENT = 'script, style, noscript, template, link, meta, base, head, iframe, object, embed'

const strings = (value: unknown): string[] => Array.isArray(value) ? [...new Set(value.filter((item): item is string => typeof item === 'string'))] : []

const text = (value: unknown): string | undefined => typeof value === 'string' && value !== '' ? value : undefined

/** `og:title` as `ogTitle`, `article:published_time` as `articlePublishedTime`. */
function camel (name: string): string {
  return name.replace(/[:_-]+([a-z0-9])/gi, (_m, letter: string) => letter.toUpperCase())
}

function metaTags (value: unknown): Record<string, string | string[]> {
  const found: Record<string, string | string[]> = {}
  const add = (name: string, content: string): void => {
    const had = found[name]
    found[name] = had === undefined ? content : Array.isArray(had) ? [...had, content] : [had, content]
  }
  for (const tag of Array.isArray(value) ? value as Array<Record<string, unknown>> : []) {
    const name = text(tag.name) ?? text(tag.property)
    const content = typeof tag.content === 'string' ? tag.content : undefined
    if (name === undefined || content === undefined || name === '__proto__') continue
    add(name, content)
    if (/^og:/i.test(name)) add(camel(name), content)
  }
  return found
}

/** The cleaned markup of the page: `includeTags`, `excludeTags`, then the main content when asked. */
export function cleanHtml (rawHtml: string, request: Pick<ScrapeRequest, 'includeTags' | 'excludeTags' | 'onlyMainContent'>): string {
  const $ = load(rawHtml)
  $(NEVER_CONTENT).remove()
  if (request.excludeTags.length > 0) $(request.excludeTags.join(', ')).remove()
  // Chosen tags are taken as they are.
  if (request.onlyMainContent && request.includeTags.length === 0) $(NOT_MAIN).remove()
  let html: string
  if (request.includeTags.length > 0) {
    html = $(request.includeTags.join(', ')).toArray().map((element) => $.html(element)).join('\n')
  } else {
    html = $('body').html() ?? $.root().html() ?? ''
  }
  return html.trim()
}

/** The page's URL: the requested one when nothing redirected, else the metadata's `url` (og:url, canonical, final URL). */
function pageUrlOf (served: Served): string {
  const metaUrl = text(served.envelope.data.url)
  return served.envelope.redirects.length === 0 || metaUrl === undefined ? served.requestedUrl : metaUrl
}

function fileUrl (value: unknown): string | undefined {
  return value !== null && typeof value === 'object' ? text((value as { url?: unknown }).url) : undefined
}

/** `data.actions` of the envelope (pipeline/enrichers/action-files.ts): the captures' URLs, the scrapes, the values. */
function actionsOf (request: ScrapeRequest, data: Record<string, unknown>): ActionsResult | undefined {
  if (request.actions.length === 0) return undefined
  const recorded = (data.actions ?? {}) as Record<string, unknown>
  const list = (value: unknown): unknown[] => Array.isArray(value) ? value : []
  return {
    screenshots: list(recorded.screenshots).map(fileUrl).filter((url): url is string => url !== undefined),
    scrapes: list(recorded.scrapes) as ActionsResult['scrapes'],
    javascriptReturns: list(recorded.javascriptReturns) as ActionsResult['javascriptReturns'],
    pdfs: list(recorded.pdfs).map(fileUrl).filter((url): url is string => url !== undefined)
  }
}

/** The Document of a served scrape, with the formats `request` asks for. */
export function documentOf (request: ScrapeRequest, served: Served): Document {
  const { envelope } = served
  const data = envelope.data
  const rawHtml = typeof data[FIELDS.rawHtml] === 'string' ? data[FIELDS.rawHtml] as string : ''
  const url = pageUrlOf(served)
  const tags = metaTags(data[FIELDS.metaTags])
  const contentType = envelope.headers['content-type']
  const metadata: DocumentMetadata = {
    ...tags,
    ...(text(data.title) === undefined ? {} : { title: data.title as string }),
    ...(text(data.description) === undefined ? {} : { description: data.description as string }),
    ...(text(data.lang) === undefined ? {} : { language: data.lang as string }),
    ...(text(data[FIELDS.favicon]) === undefined ? {} : { favicon: data[FIELDS.favicon] as string }),
    sourceURL: request.url,
    url,
    statusCode: envelope.statusCode ?? 200,
    ...(contentType === undefined ? {} : { contentType }),
    cacheState: served.cacheState,
    cachedAt: new Date(served.createdAt).toISOString()
  }
  const document: Document = { metadata }
  const { formats } = request
  const wantsContent = formats.has('markdown') || formats.has('html')
  const cleaned = wantsContent ? cleanHtml(rawHtml, request) : ''
  if (formats.has('markdown')) document.markdown = toMarkdown(cleaned, url)
  if (formats.has('html')) document.html = cleaned
  if (formats.has('rawHtml')) document.rawHtml = rawHtml
  if (formats.has('links')) document.links = strings(data[FIELDS.links])
  if (formats.has('images')) document.images = strings(data[FIELDS.images])
  if (formats.has('screenshot')) {
    const screenshot = fileUrl(data.screenshot)
    if (screenshot !== undefined) document.screenshot = screenshot
    else document.warning = 'The screenshot could not be taken.'
  }
  const actions = actionsOf(request, data)
  if (actions !== undefined) document.actions = actions
  return document
}
