// The crawl fixture site (every crawl and map test uses it): 200 HTML pages on `site.test:<port>` (a name that the
// tests' resolver sends to 127.0.0.1, with `www.site.test` as its alias and `blog.site.test` as a subdomain), an
// external site on another loopback port, and what makes crawling hard: robots.txt rules for `pagecast` (and a
// stricter `*` group that must not apply), sitemaps (robots.txt line, /sitemap.xml, an index with a nested index and
// a gzipped child), link loops, redirects, query-parameter duplicates, www/index.html duplicates, fragments, and
// an endless calendar (/cal/2026/11 → /cal/2026/12 → ...). `truth` is written from the site's structure, by hand,
// not computed by src/crawl: tests compare what the service returns with it exactly.
import http from 'node:http'
import { gzipSync } from 'node:zlib'
import type { AddressInfo } from 'node:net'
import type { Resolver } from '../../src/net/guard.ts'

export const SITE_HOST = 'site.test'
export const WWW_HOST = 'www.site.test'
export const SUB_HOST = 'blog.site.test'

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void

export interface CrawlSite {
  port: number
  /** `http://site.test:<port>` */
  origin: string
  /** `http://127.0.0.1:<port2>`: the external site. */
  external: string
  /** `http://blog.site.test:<port>` */
  sub: string
  /** `ALLOW_PRIVATE_HOSTS` for an app that may reach all of it. */
  allowPrivateHosts: string
  /** The resolver an app needs (build's `resolve` override): *.site.test → 127.0.0.1, every other name fails. */
  resolve: Resolver
  /** Requests per `host path` (path with query), e.g. `site.test /robots.txt`. */
  hits: Map<string, number>
  /** Adds or replaces a route of site.test (for hostile sitemaps and the like). */
  route (path: string, handler: Handler): void
  truth: CrawlTruth
  close (): Promise<void>
}

export interface CrawlTruth {
  /** The 200 pages of site.test, canonical URLs. */
  pages: string[]
  /** The pages robots.txt refuses to `pagecast` (/private/ and below). */
  disallowed: string[]
  /** The links of the home page as written, resolved, in document order (http(s) only, fragments dropped, each once). */
  homeLinks: string[]
  /** map, `sitemap: skip`, defaults (includeSubdomains, ignoreQueryParameters): start URL, then home links kept. */
  mapSkip: string[]
  /** map, `sitemap: only`: the sitemaps' URLs in reading order (breadth first), kept and deduplicated. */
  mapOnly: string[]
  /** map, `sitemap: include` (the default): mapSkip, then mapOnly's URLs not in it. */
  mapInclude: string[]
  /** crawl with `excludePaths: ['^/cal/']`, `ignoreQueryParameters: true`: every page robots.txt allows (189). */
  crawlAll: string[]
  /** crawl with `sitemap: skip`, `maxDiscoveryDepth: 1`, `excludePaths: ['^/cal/']`: final URLs (/old/1 → /docs/1). */
  crawlDepth1: string[]
  /** robotsBlocked of crawlDepth1. */
  crawlDepth1Blocked: string[]
  /** crawl with `sitemap: only`: the start URL and the sitemaps' pages on site.test that robots.txt allows. */
  crawlSitemapOnly: string[]
  /** robotsBlocked of crawlSitemapOnly. */
  crawlSitemapOnlyBlocked: string[]
}

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1)
const SECTIONS = { docs: 60, blog: 50, products: 40, guides: 13, private: 10 } as const

/** The 200 page paths: home, about, five sections (index + leaves), 20 orphans only the sitemaps list. */
export function pagePaths (): string[] {
  const paths = ['/', '/about']
  for (const [name, n] of Object.entries(SECTIONS)) paths.push(`/${name}/`, ...range(n).map((i) => `/${name}/${i}`))
  paths.push(...range(20).map((i) => `/orphan/${i}`))
  return paths
}

function page (title: string, links: string[]): string {
  const anchors = links.map((href) => `<a href="${href}">${href}</a>`).join('\n')
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>` +
    `<meta name="description" content="${title} of the crawl fixture site"></head><body><h1>${title}</h1>\n${anchors}\n</body></html>`
}

function urlset (urls: string[]): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${urls.map((u) => `  <url><loc>${u}</loc><changefreq>daily</changefreq></url>`).join('\n')}\n</urlset>\n`
}

function sitemapIndex (urls: string[]): string {
  return `<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${urls.map((u) => `  <sitemap><loc>${u}</loc></sitemap>`).join('\n')}\n</sitemapindex>\n`
}

export async function startCrawlSite (): Promise<CrawlSite> {
  const hits = new Map<string, number>()
  const extra = new Map<string, Handler>()
  let port = 0
  let extPort = 0
  const o = (): string => `http://${SITE_HOST}:${port}`
  const ext = (): string => `http://127.0.0.1:${extPort}`
  const sub = (): string => `http://${SUB_HOST}:${port}`

  const homeLinks = (): string[] => ['/about', '/docs/', '/blog/', '/products/', '/guides/', '/private/', '/cal/2026/11', '/old/1',
    '/products/?ref=home', `${ext()}/ext/1`, `${sub()}/`, 'mailto:hello@site.test', '#top', 'javascript:void(0)', '/']

  function linksOf (path: string): string[] | undefined {
    if (path === '/' || path === '/index.html') return homeLinks()
    if (path === '/about') return ['/', '/index.html', `http://${WWW_HOST}:${port}/about`, '/docs/1#intro']
    const m = /^\/(docs|blog|products|guides|private)\/(\d*)$/.exec(path)
    if (m !== null) {
      const [, name = '', num = ''] = m
      const n = SECTIONS[name as keyof typeof SECTIONS]
      if (num === '') {
        const leaves = range(n).flatMap((i) => name === 'products' ? [`/${name}/${i}`, `/${name}/${i}?ref=list`] : [`/${name}/${i}`])
        return ['/', ...leaves]
      }
      const i = Number(num)
      if (i < 1 || i > n || String(i) !== num) return undefined
      const next = i === n ? 1 : i + 1
      const more = name === 'products' ? [`/products/${i}?color=red`] : []
      return [`/${name}/`, `/${name}/${next}`, ...more]
    }
    const orphan = /^\/orphan\/(\d+)$/.exec(path)
    if (orphan !== null && Number(orphan[1]) >= 1 && Number(orphan[1]) <= 20) return ['/']
    return undefined
  }

  const sitemaps = (): Record<string, () => string | Buffer> => ({
    '/sitemap.xml': () => urlset(['/', '/about', '/docs/', '/blog/', '/products/', '/guides/'].map((p) => o() + p)),
    '/sitemap-index.xml': () => sitemapIndex([`${o()}/sitemaps/docs.xml`, `${o()}/sitemaps/blog.xml.gz`, `${o()}/sitemaps/nested.xml`]),
    '/sitemaps/docs.xml': () => urlset(range(60).map((i) => `${o()}/docs/${i}`)),
    '/sitemaps/blog.xml.gz': () => gzipSync(urlset(range(50).map((i) => `${o()}/blog/${i}`))),
    '/sitemaps/nested.xml': () => sitemapIndex([`${o()}/sitemaps/products.xml`, `${o()}/sitemaps/orphans.xml`]),
    '/sitemaps/products.xml': () => urlset([...range(40).map((i) => `${o()}/products/${i}`), `${o()}/private/3`, `${ext()}/ext/9`, `${sub()}/s/1`]),
    '/sitemaps/orphans.xml': () => urlset(range(20).map((i) => `${o()}/orphan/${i}`))
  })

  const robots = (): string => [
    'User-agent: pagecast', 'Disallow: /private/', '',
    'User-agent: *', 'Disallow: /', '',
    `Sitemap: ${o()}/sitemap-index.xml`, ''
  ].join('\n')

  function send (res: http.ServerResponse, status: number, type: string, body: string | Buffer): void {
    res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) })
    res.end(body)
  }

  const server = http.createServer((req, res) => {
    const host = (req.headers.host ?? '').replace(/:\d+$/, '')
    const url = new URL(req.url ?? '/', 'http://x')
    const path = url.pathname
    hits.set(`${host} ${path}${url.search}`, (hits.get(`${host} ${path}${url.search}`) ?? 0) + 1)
    if (host === SUB_HOST) {
      if (path === '/' || /^\/s\/[1-5]$/.test(path)) { send(res, 200, 'text/html; charset=utf-8', page(`Sub ${path}`, ['/s/1', '/s/2', `${o()}/`])); return }
      send(res, 404, 'text/plain', 'not found'); return
    }
    if (host !== SITE_HOST && host !== WWW_HOST) { send(res, 421, 'text/plain', 'misdirected'); return }
    const handler = extra.get(path)
    if (handler !== undefined) { handler(req, res); return }
    if (path === '/robots.txt') { send(res, 200, 'text/plain; charset=utf-8', robots()); return }
    const sitemap = sitemaps()[path]
    if (sitemap !== undefined) {
      const body = sitemap()
      send(res, 200, Buffer.isBuffer(body) ? 'application/gzip' : 'application/xml', body); return
    }
    const old = /^\/old\/(\d+)$/.exec(path)
    if (old !== null) { res.writeHead(301, { location: `/docs/${old[1]}` }); res.end(); return }
    const cal = /^\/cal\/(\d{4})\/(\d{1,2})$/.exec(path)
    if (cal !== null) {
      // The trap: every month links to the next one, forever.
      const [y, m] = [Number(cal[1]), Number(cal[2])]
      const next = m === 12 ? `/cal/${y + 1}/1` : `/cal/${y}/${m + 1}`
      send(res, 200, 'text/html; charset=utf-8', page(`Calendar ${y}-${m}`, [next, '/'])); return
    }
    const links = linksOf(path)
    if (links === undefined) { send(res, 404, 'text/html', '<!doctype html><title>Not found</title>'); return }
    send(res, 200, 'text/html; charset=utf-8', page(path === '/index.html' ? 'Home' : `Page ${path}`, links))
  })
  const external = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname
    hits.set(`external ${path}`, (hits.get(`external ${path}`) ?? 0) + 1)
    if (path === '/robots.txt') { send(res, 404, 'text/plain', 'none'); return }
    send(res, 200, 'text/html; charset=utf-8', page(`External ${path}`, ['/ext/1', '/ext/2', `${o()}/`]))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  await new Promise<void>((resolve) => external.listen(0, '127.0.0.1', resolve))
  port = (server.address() as AddressInfo).port
  extPort = (external.address() as AddressInfo).port

  const abs = (p: string): string => o() + p
  const pages = pagePaths().map(abs)
  const disallowed = ['/private/', ...range(10).map((i) => `/private/${i}`)].map(abs)
  const resolvedHome = [...new Set(homeLinks().filter((h) => !/^(mailto|javascript):|^#/.test(h)).map((h) => new URL(h, abs('/')).href))]
  const mapSkip = [abs('/'), ...['/about', '/docs/', '/blog/', '/products/', '/guides/', '/cal/2026/11', '/old/1'].map(abs), `${sub()}/`]
  const mapOnly = [
    ...['/', '/about', '/docs/', '/blog/', '/products/', '/guides/'].map(abs),
    ...range(60).map((i) => abs(`/docs/${i}`)), ...range(50).map((i) => abs(`/blog/${i}`)),
    ...range(40).map((i) => abs(`/products/${i}`)), `${sub()}/s/1`, ...range(20).map((i) => abs(`/orphan/${i}`))
  ]
  const truth: CrawlTruth = {
    pages,
    disallowed,
    homeLinks: resolvedHome,
    mapSkip,
    mapOnly,
    mapInclude: [...mapSkip, ...mapOnly.filter((u) => !mapSkip.includes(u))],
    crawlAll: pages.filter((u) => !disallowed.includes(u)),
    crawlDepth1: ['/', '/about', '/docs/', '/blog/', '/products/', '/guides/', '/docs/1'].map(abs),
    crawlDepth1Blocked: [abs('/private/')],
    crawlSitemapOnly: [...new Set([abs('/'), ...mapOnly.filter((u) => u.startsWith(o()))])],
    crawlSitemapOnlyBlocked: [abs('/private/3')]
  }

  return {
    port,
    origin: o(),
    external: ext(),
    sub: sub(),
    allowPrivateHosts: [`${SITE_HOST}:${port}`, `${WWW_HOST}:${port}`, `${SUB_HOST}:${port}`, `127.0.0.1:${extPort}`].join(','),
    resolve: async (hostname) => {
      if (hostname === SITE_HOST || hostname.endsWith(`.${SITE_HOST}`)) return [{ address: '127.0.0.1', family: 4 }]
      throw Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })
    },
    hits,
    route: (path, handler) => { extra.set(path, handler) },
    truth,
    close: async () => {
      for (const s of [server, external]) {
        s.closeAllConnections()
        await new Promise<void>((resolve) => s.close(() => resolve()))
      }
    }
  }
}
