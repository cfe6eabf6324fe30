// A Firecrawl scrape as the `GET /` query it stands for (docs/firecrawl.md#how-a-scrape-maps), so that it is parsed,
// gated, guarded, cached, single-flighted and rendered exactly as `GET /` is. The page's content is read once by
// `data` rules (docs/api.md §3.3): the serialized DOM, its links, images, favicon and <meta> tags; the formats are
// made from those (document.ts). The rules are the same whatever formats are asked for, so every format of a page
// comes from one cache entry; only what changes the page (screenshot, actions, emulation, headers) splits it.
import type { ScrapeRequest } from './request.ts'

/** The `data` fields the query reads, by their role. */
export const FIELDS = {
  rawHtml: 'rawHtml',
  links: 'links',
  images: 'images',
  favicon: 'favicon',
  metaTags: 'metaTags'
} as const

/** The rules every scrape reads (`[name, value]` pairs of the query). */
const CONTENT_RULES: ReadonlyArray<readonly [string, string]> = [
  ['meta.title', 'true'],
  ['meta.description', 'true'],
  ['meta.lang', 'true'],
  ['meta.url', 'true'],
  [`data.${FIELDS.rawHtml}.attr`, 'outerHTML'],
  [`data.${FIELDS.links}.selectorAll`, 'a[href]'],
  [`data.${FIELDS.links}.attr`, 'href'],
  [`data.${FIELDS.links}.type`, 'url'],
  [`data.${FIELDS.images}.selectorAll`, 'img[src]'],
  [`data.${FIELDS.images}.attr`, 'src'],
  [`data.${FIELDS.images}.type`, 'url'],
  [`data.${FIELDS.favicon}.selector`, 'link[rel~="icon"]'],
  [`data.${FIELDS.favicon}.attr`, 'href'],
  [`data.${FIELDS.favicon}.type`, 'url'],
  [`data.${FIELDS.metaTags}.selectorAll`, 'meta[content]'],
  [`data.${FIELDS.metaTags}.attr.name.attr`, 'name'],
  [`data.${FIELDS.metaTags}.attr.property.attr`, 'property'],
  [`data.${FIELDS.metaTags}.attr.content.attr`, 'content']
]

/** The device a `mobile` scrape emulates (browser/devices.ts). */
export const MOBILE_DEVICE = 'iPhone 15'

/** How the scrape's cache options map (docs/firecrawl.md#cache): maxAge 0 recomputes; on pro, maxAge is the ttl. */
function cachePairs (request: ScrapeRequest, pro: boolean): Array<readonly [string, string]> {
  if (request.maxAge === undefined) return []
  if (request.maxAge === 0) return [['force', 'true']]
  if (!pro) return []
  // Our ttl's bounds (docs/api.md §3.7): a younger or older maxAge is brought within them.
  const ttl = Math.min(Math.max(request.maxAge, 60_000), 31 * 86_400_000)
  return [['ttl', String(ttl)]]
}

/**
 * The actions as `GET /`'s `actions` (a JSON list the page step runs in the order given); `waitFor` is the fixed
 * wait before them (`waitForTimeout`, at most `timeout`).
 */
function actionPairs (request: ScrapeRequest): Array<readonly [string, string]> {
  const pairs: Array<readonly [string, string]> = []
  if (request.actions.length > 0) pairs.push(['actions', JSON.stringify(request.actions)])
  const waited = request.waitFor
  if (waited > 0) pairs.push(['waitForTimeout', String(request.timeout === undefined ? waited : Math.min(waited, request.timeout))])
  return pairs
}

/** The screenshot the formats ask for (the actions' own are taken by the actions step, each at its place). */
function screenshotPairs (request: ScrapeRequest): Array<readonly [string, string]> {
  if (request.screenshot === undefined) return []
  const fullPage = request.screenshot.fullPage
  const quality = request.screenshot.quality
  const pairs: Array<readonly [string, string]> = [['screenshot', 'true']]
  if (fullPage) pairs.push(['screenshot.fullPage', 'true'])
  if (quality !== undefined) pairs.push(['screenshot.type', 'jpeg'], ['screenshot.quality', String(quality)])
  const viewport = request.screenshot?.viewport
  if (viewport !== undefined) pairs.push(['viewport.width', String(viewport.width)], ['viewport.height', String(viewport.height)])
  return pairs
}

/** The raw `GET /` query of a scrape; `pro` says which listener's plan it runs under. */
export function scrapeQuery (request: ScrapeRequest, pro: boolean): string {
  const pairs: Array<readonly [string, string]> = [['url', request.url], ...CONTENT_RULES]
  pairs.push(...screenshotPairs(request), ...actionPairs(request))
  if (request.mobile) pairs.push(['device', MOBILE_DEVICE])
  if (!request.blockAds) pairs.push(['adblock', 'false'])
  if (request.timeout !== undefined) pairs.push(['timeout', String(request.timeout)])
  for (const [name, value] of Object.entries(request.headers)) pairs.push([`headers.${name}`, value])
  if (request.languages.length > 0) pairs.push(['headers.accept-language', request.languages.join(', ')])
  if (request.proxy !== undefined) pairs.push(['proxy', request.proxy])
  pairs.push(...cachePairs(request, pro))
  return pairs.map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`).join('&')
}
