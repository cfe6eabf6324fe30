// Sitemaps (sitemaps.org): `<urlset>` files, `<sitemapindex>` files pointing at more of them, either gzipped, and
// plain-text lists. Read with htmlparser2's tokenizer in xmlMode (scan.ts: one linear pass, no tree); everything a
// hostile site controls is bounded: bytes per file (after gunzip), bytes in all, files read, index nesting, URLs
// kept, characters per `<loc>`, and the caller's signal.
import zlib from 'node:zlib'
import { scanMarkup } from './scan.ts'
import { toHttpUrl } from '../util/url.ts'
import { readBounded } from '../util/bounded-read.ts'
import { MAX_URL_LENGTH } from './url.ts'
import type { CrawlFetch } from './types.ts'

export interface SitemapLimits {
  /** Bytes of one sitemap read, after gunzip (sitemaps.org allows 50 MB; larger files are read up to here). */
  maxBytes: number
  /** Bytes of all sitemaps of one discovery, after gunzip. */
  maxTotalBytes: number
  /** Sitemap files fetched at most. */
  maxFiles: number
  /** Levels of index below a root (root index → child index → urlset is 2). */
  maxDepth: number
  /** Page URLs kept at most. */
  maxUrls: number
}

export const SITEMAP_LIMITS: Readonly<SitemapLimits> = Object.freeze({
  maxBytes: 10 * 1024 * 1024,
  maxTotalBytes: 50 * 1024 * 1024,
  maxFiles: 50,
  maxDepth: 3,
  maxUrls: 50_000
})

export interface ParsedSitemap {
  kind: 'urlset' | 'index' | 'text' | 'unknown'
  /** `<loc>` values (or the lines of a text sitemap) that are absolute http(s) URLs, in order. */
  locs: string[]
  /** More entries were there than `maxEntries`. */
  truncated: boolean
}

function localName (tag: string): string {
  const colon = tag.lastIndexOf(':')
  return (colon === -1 ? tag : tag.slice(colon + 1)).toLowerCase()
}

/** Open elements tracked at most; deeper ones are only counted (nothing a sitemap reads is that deep). */
const MAX_TRACKED_DEPTH = 32

/** Parses one sitemap document (XML urlset or index, or a text list), keeping at most `maxEntries` locations. */
export function parseSitemap (text: string, maxEntries = SITEMAP_LIMITS.maxUrls): ParsedSitemap {
  const result: ParsedSitemap = { kind: 'unknown', locs: [], truncated: false }
  const keep = (value: string): void => {
    const url = toHttpUrl(value)
    if (url === undefined || url.length > MAX_URL_LENGTH) return
    if (result.locs.length >= maxEntries) { result.truncated = true; return }
    result.locs.push(url)
  }
  const body = text.replace(/^\uFEFF/, '')
  if (!/^\s*</.test(body)) {
    // A text sitemap: one URL per line.
    result.kind = 'text'
    for (const line of body.split(/\r?\n/)) if (line.trim() !== '' && line.length <= MAX_URL_LENGTH) keep(line.trim())
    return result
  }
  const stack: string[] = []
  let untracked = 0
  let loc: string | undefined
  let seenRoot = false
  scanMarkup(body, true, {
    open (name) {
      const tag = localName(name)
      if (!seenRoot) {
        seenRoot = !name.startsWith('?') && !name.startsWith('!')
        if (tag === 'urlset') result.kind = 'urlset'
        else if (tag === 'sitemapindex') result.kind = 'index'
      }
      const parent = untracked > 0 ? undefined : stack.at(-1)
      if (tag === 'loc' && (parent === 'url' || parent === 'sitemap')) loc = ''
      if (stack.length < MAX_TRACKED_DEPTH) stack.push(tag)
      else untracked++
      return false
    },
    close (name) {
      const tag = localName(name)
      if (tag === 'loc' && loc !== undefined) { keep(loc.trim()); loc = undefined }
      if (untracked > 0) untracked--
      else if (stack.at(-1) === tag) stack.pop()
    },
    text (value) {
      if (loc !== undefined && loc.length <= MAX_URL_LENGTH) loc += value.slice(0, MAX_URL_LENGTH + 1 - loc.length)
    }
  })
  return result
}

/** Whether bytes start as a gzip member does (a `.xml.gz` file sent without Content-Encoding). */
export function isGzip (body: Uint8Array): boolean {
  return body.length >= 2 && body[0] === 0x1f && body[1] === 0x8b
}

/**
 * Gunzips at most `maxBytes` of output: the stream is read a chunk at a time and dropped at the bound, so a gzip
 * bomb costs about one chunk beyond it. A corrupt or cut stream yields what decoded before the fault.
 */
export async function gunzipBounded (body: Buffer, maxBytes: number): Promise<{ body: Buffer, truncated: boolean }> {
  const gunzip = zlib.createGunzip({ finishFlush: zlib.constants.Z_SYNC_FLUSH })
  gunzip.end(body)
  // A corrupt member: keep what came out before the fault.
  return await readBounded(gunzip, maxBytes, { keepOnError: true })
}

export interface SitemapFile {
  url: string
  /** Page URLs it gave (0 for an index). */
  urls: number
  error?: string
}

export interface SitemapDiscovery {
  /** Page URLs from every urlset read, in reading order (breadth first, each file's entries in order), not deduplicated. */
  urls: string[]
  files: SitemapFile[]
  /** A bound cut the discovery short (files, depth, bytes or URLs). */
  truncated: boolean
}

/**
 * Reads sitemaps breadth first from `roots` (robots.txt `Sitemap:` lines, `/sitemap.xml`), following indexes at most
 * `maxDepth` levels down, each file at most once, within the limits. A file that fails (status, guard, parse) is
 * noted and skipped; the caller's signal ends the whole discovery (it rejects).
 */
export async function readSitemaps (
  roots: readonly string[],
  deps: { fetch: CrawlFetch, signal: AbortSignal, limits?: Partial<SitemapLimits> }
): Promise<SitemapDiscovery> {
  const limits = { ...SITEMAP_LIMITS, ...deps.limits }
  const { signal } = deps
  const out: SitemapDiscovery = { urls: [], files: [], truncated: false }
  const queued = new Set<string>()
  let level: string[] = []
  for (const root of roots) if (!queued.has(root)) { queued.add(root); level.push(root) }
  let bytes = 0
  for (let depth = 0; level.length > 0; depth++) {
    const next: string[] = []
    for (const url of level) {
      if (out.files.length >= limits.maxFiles || bytes >= limits.maxTotalBytes || out.urls.length >= limits.maxUrls) {
        out.truncated = true
        return out
      }
      signal.throwIfAborted()
      const file: SitemapFile = { url, urls: 0 }
      out.files.push(file)
      let parsed: ParsedSitemap
      try {
        const budget = Math.min(limits.maxBytes, limits.maxTotalBytes - bytes)
        const res = await deps.fetch(url, { signal, maxBytes: budget, headers: { accept: 'application/xml,text/xml,text/plain;q=0.9,*/*;q=0.5' } })
        if (res.statusCode < 200 || res.statusCode >= 300) { file.error = `status ${res.statusCode}`; continue }
        let body = res.body
        let truncated = res.truncated
        if (isGzip(body)) ({ body, truncated } = await gunzipBounded(body, budget))
        bytes += body.length
        if (truncated) out.truncated = true
        parsed = parseSitemap(body.toString('utf8'), limits.maxUrls - out.urls.length)
      } catch (err) {
        if (signal.aborted) throw err
        file.error = err instanceof Error ? err.message : String(err)
        continue
      }
      if (parsed.truncated) out.truncated = true
      if (parsed.kind === 'index') {
        if (depth >= limits.maxDepth) { out.truncated = true; continue }
        for (const child of parsed.locs) {
          // More children than files left to read are not kept.
          if (queued.size >= limits.maxFiles) { out.truncated = true; break }
          if (!queued.has(child)) { queued.add(child); next.push(child) }
        }
      } else {
        file.urls = parsed.locs.length
        out.urls.push(...parsed.locs)
      }
    }
    level = next
  }
  return out
}
