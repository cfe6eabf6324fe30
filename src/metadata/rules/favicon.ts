// The favicon fallback of §9, built on metascraper-logo-favicon without its own HTTP client:
//   1. the page's `link[rel*=icon]` / `meta[name*=msapplication]` candidates, square first, then by kind
//      (apple-touch, android and png; jpg; svg; ico), then by size;
//   2. `/favicon.png`, then `/favicon.ico` on the page's origin;
//   3. both steps again for the registrable root domain when the host is a subdomain.
// Step 1 is the package's candidate collection with our `pickFn`; the package calls it without any request
// context, so it reads the request's state from an AsyncLocalStorage the extractor enters for each run. Steps 2
// and 3 are our rules: the package tries `/favicon.ico` before `/favicon.png` and its root-domain step skips the
// root page's icon links. Every check goes through RequestState.checkMedia: our guarded probe, the request's
// signal, the executable-candidate rules.
import type { AsyncLocalStorage } from 'node:async_hooks'
import { getDomain } from 'tldts'
import { mimeOf, typeFromUrl } from '../../media/objects.ts'
import type { RequestState, Rule } from './types.ts'

export interface IconCandidate {
  url: string
  /** `rel` of a link, '' for a meta tag. */
  rel: string
  /** The declared `type`, '' when absent. */
  type: string
  /** The declared `sizes`, '' when absent. */
  sizes: string
}

interface RankedIcon {
  candidate: IconCandidate
  square: boolean
  kind: number
  area: number
  order: number
}

/** Largest declared size, from `sizes` (`16x16 32x32`, `any`) or else from the URL (`icon-180x180.png`). */
export function parseIconSize (sizes: string, url: string): { width: number, height: number, any: boolean } {
  const tokens = sizes.toLowerCase().split(/\s+/).filter(Boolean)
  if (tokens.includes('any')) return { width: 0, height: 0, any: true }
  let best = { width: 0, height: 0, any: false }
  for (const token of tokens) {
    const match = /^(\d+)[x×](\d+)$/.exec(token)
    if (match === null) continue
    const width = Number(match[1])
    const height = Number(match[2])
    if (width * height > best.width * best.height) best = { width, height, any: false }
  }
  if (best.width > 0) return best
  const fromUrl = /(\d+)[x×](\d+)/.exec(url)
  return fromUrl === null ? best : { width: Number(fromUrl[1]), height: Number(fromUrl[2]), any: false }
}

/** Kind rank, higher first: apple-touch, android and png (5); jpg (4); svg (3); ico (2); other (1); mask-icon (0). */
export function iconKindRank (candidate: IconCandidate): number {
  const rel = candidate.rel.toLowerCase()
  const type = mimeOf(candidate.type)
  const ext = typeFromUrl(candidate.url)
  let path = candidate.url.toLowerCase()
  try {
    path = new URL(candidate.url).pathname.toLowerCase()
  } catch {}
  // Safari's pinned-tab mask is a single-colour silhouette, the poorest logo there is.
  if (rel.split(/\s+/).includes('mask-icon')) return 0
  if (rel.includes('apple-touch') || path.includes('apple') || path.includes('android') || type === 'image/png' || ext === 'png') return 5
  if (type === 'image/jpeg' || ext === 'jpg') return 4
  if (type === 'image/svg+xml' || ext === 'svg') return 3
  if (type.includes('icon') || ext === 'ico') return 2
  return 1
}

/** Apple documents 180×180 as the touch icon size, so an undeclared apple-touch-icon is taken to be that big. */
const APPLE_TOUCH_DEFAULT_SIZE = 180

function declaredIconSize (candidate: IconCandidate): { width: number, height: number, any: boolean } {
  const size = parseIconSize(candidate.sizes, candidate.url)
  if (!size.any && size.width === 0 && candidate.rel.toLowerCase().includes('apple-touch-icon')) {
    return { width: APPLE_TOUCH_DEFAULT_SIZE, height: APPLE_TOUCH_DEFAULT_SIZE, any: false }
  }
  return size
}

/** Square candidates first (an undeclared size counts as square), then by kind, then by size, then page order. */
export function rankIconCandidates (candidates: readonly IconCandidate[]): IconCandidate[] {
  const ranked: RankedIcon[] = candidates.map((candidate, order) => {
    const size = declaredIconSize(candidate)
    return {
      candidate,
      square: size.any || size.width === size.height,
      kind: iconKindRank(candidate),
      area: size.any ? Number.MAX_SAFE_INTEGER : size.width * size.height,
      order
    }
  })
  ranked.sort((a, b) =>
    Number(b.square) - Number(a.square) || b.kind - a.kind || b.area - a.area || a.order - b.order)
  return ranked.map(item => item.candidate)
}

/**
 * A candidate as metascraper-logo-favicon hands it over (the tag's attributes plus its resolved `url`).
 * msapplication meta tags count only when they name an image (TileImage, square150x150logo, …), not a colour
 * or a browserconfig.xml.
 */
export function toIconCandidate (item: unknown): IconCandidate | null {
  if (item === null || typeof item !== 'object') return null
  const attribs = item as Record<string, unknown>
  const text = (key: string): string => typeof attribs[key] === 'string' ? attribs[key] : ''
  const url = text('url')
  if (url === '') return null
  const rel = text('rel')
  if (rel === '') {
    const name = text('name')
    if (!/image|logo/i.test(name)) return null
  }
  return { url, rel, type: text('type'), sizes: text('sizes') }
}

/** The first candidate, in rank order, that passes the check; with `ping.logo` off, the first one unchecked. */
export async function pickIcon (candidates: readonly IconCandidate[], request: RequestState): Promise<string | undefined> {
  const ranked = rankIconCandidates(candidates)
  if (!request.ping.logo) return ranked[0]?.url
  for (const candidate of ranked) {
    if (await request.checkMedia(candidate.url, 'logo') !== null) return candidate.url
  }
  return undefined
}

/** `pickFn` for metascraper-logo-favicon. */
export function createPickFn (als: AsyncLocalStorage<RequestState>): (sizes: unknown[]) => Promise<string | undefined> {
  return async sizes => {
    const request = als.getStore()
    if (request === undefined) return undefined
    const candidates = sizes.map(toIconCandidate).filter(candidate => candidate !== null)
    return pickIcon(candidates, request)
  }
}

/**
 * `resolveFaviconUrl` for metascraper-logo-favicon. The package would otherwise reach favicons with its own HTTP
 * client, past our address guard; our rules do not call into that path (`favicon: false`, our own pickFn and
 * origin rule), and this keeps it on our probe should it ever run. It never throws.
 */
export function createResolveFaviconUrl (als: AsyncLocalStorage<RequestState>) {
  return async (faviconUrl: string): Promise<{ url: string } | undefined> => {
    const request = als.getStore()
    if (request === undefined || !request.ping.logo) return undefined
    try {
      return await request.checkMedia(faviconUrl, 'logo') === null ? undefined : { url: faviconUrl }
    } catch {
      return undefined
    }
  }
}

/**
 * Step 2: `/favicon.png`, then `/favicon.ico` on the document's origin. With `ping.logo` off nothing is fetched and
 * `/favicon.ico` is assumed (a guessed png is far less likely to exist).
 */
export function originFaviconRule (): Rule {
  return async ({ url, request }) => {
    let origin: string
    try {
      origin = new URL(url).origin
    } catch {
      return undefined
    }
    if (origin === 'null') return undefined
    if (!request.ping.logo) return `${origin}/favicon.ico`
    for (const name of ['favicon.png', 'favicon.ico']) {
      const candidate = `${origin}/${name}`
      if (await request.checkMedia(candidate, 'logo') !== null) return candidate
    }
    return undefined
  }
}

/** The root domain's origin when the host is a subdomain of it (`https://news.example.co.uk` -> `https://example.co.uk/`). */
export function rootDomainUrl (url: string): string | null {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return null
  }
  const domain = getDomain(parsed.hostname, { allowPrivateDomains: true })
  if (domain === null || domain === parsed.hostname) return null
  return `${parsed.protocol}//${domain}${parsed.port === '' ? '' : `:${parsed.port}`}/`
}

export type LogoScraper = (options: { url: string, html: string, request: RequestState }) => Promise<string | undefined>

export interface RootFaviconOptions {
  /** Runs the favicon steps 1 and 2 on another document. */
  scrapeLogo: LogoScraper
  /** Turns the first bytes of an HTML response into text; null when the response is not HTML. */
  toHtml: (body: Buffer, headers: Record<string, string>) => string | null
}

/**
 * Step 3: for a subdomain, the root domain's home page (its first 64 KiB, where the `<head>` is) gives its own
 * icon candidates, then its `/favicon.png` and `/favicon.ico` are tried.
 */
export function createRootFaviconRule ({ scrapeLogo, toHtml }: RootFaviconOptions): Rule {
  return async ({ url, request }) => {
    if (!request.ping.logo) return undefined
    const rootUrl = rootDomainUrl(url)
    if (rootUrl === null) return undefined
    let html = ''
    let base = rootUrl
    try {
      const home = await request.probe(rootUrl, { signal: request.signal })
      if (home.statusCode >= 200 && home.statusCode < 300) {
        html = toHtml(home.body, home.headers) ?? ''
        base = home.url
      }
    } catch (err) {
      if (request.signal.aborted) throw err
      request.log?.debug({ url: rootUrl, err }, 'root domain page unreachable')
    }
    return scrapeLogo({ url: base, html, request })
  }
}
