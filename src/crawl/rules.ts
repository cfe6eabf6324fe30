// A crawl request's body (Firecrawl v1 or v2 names) into CrawlRules, checked; and the rules compiled for admit():
// the path patterns on RE2, the linear-time engine, so a pattern cannot cost more than the path it is tested on.
import { loadRe2 } from '../util/re2.ts'
import { canonicalUrl } from './url.ts'
import type { CrawlRules, SitemapMode } from './types.ts'

/** Default and ceiling of `limit` (the caller may lower the ceiling, e.g. from the plan). */
export const DEFAULT_CRAWL_LIMIT = 10_000
/** Patterns per list, and characters per pattern, at most. */
export const MAX_PATTERNS = 100
export const MAX_PATTERN_LENGTH = 1000

/** A request value the rules cannot take: `field` names it as the client wrote it, `message` says why. */
export class RuleError extends Error {
  readonly field: string
  constructor (field: string, message: string) {
    super(message)
    this.name = 'RuleError'
    this.field = field
  }
}

type Body = Readonly<Record<string, unknown>>

function bool (body: Body, name: string, fallback: boolean): boolean {
  const value = body[name]
  if (value === undefined || value === null) return fallback
  if (typeof value !== 'boolean') throw new RuleError(name, `\`${name}\` must be a boolean.`)
  return value
}

function count (body: Body, name: string, min: number, max: number): number | undefined {
  const value = body[name]
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new RuleError(name, `\`${name}\` must be an integer from ${min} to ${max}.`)
  }
  return value
}

function patterns (body: Body, name: string): string[] {
  const value = body[name]
  if (value === undefined || value === null) return []
  if (!Array.isArray(value) || value.length > MAX_PATTERNS || !value.every((p) => typeof p === 'string' && p.length <= MAX_PATTERN_LENGTH)) {
    throw new RuleError(name, `\`${name}\` must be a list of at most ${MAX_PATTERNS} regular expressions of at most ${MAX_PATTERN_LENGTH} characters.`)
  }
  const list = value as string[]
  list.forEach((source, i) => { compilePattern(source, `${name}[${i}]`) })
  return list
}

/** A pattern on RE2; a RuleError naming `field` when RE2 refuses it (lookarounds, backreferences) or is missing. */
export function compilePattern (source: string, field: string): RegExp {
  const RE2 = loadRe2()
  if (RE2 === undefined) throw new RuleError(field, 'Path patterns need the linear-time regular expression engine (re2), which is not installed on this server.')
  try {
    return new RE2(source, 'u')
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err)
    throw new RuleError(field, `\`${field}\` is not a regular expression RE2 accepts (no lookarounds or backreferences): ${reason}`)
  }
}

function sitemapMode (body: Body): SitemapMode {
  const value = body.sitemap
  if (value === undefined || value === null) return bool(body, 'ignoreSitemap', false) ? 'skip' : 'include'
  if (value !== 'include' && value !== 'skip' && value !== 'only') throw new RuleError('sitemap', '`sitemap` must be `include`, `skip` or `only`.')
  return value
}

export interface RulesOptions {
  /** Ceiling of `limit`; DEFAULT_CRAWL_LIMIT when absent. */
  maxLimit?: number
}

/**
 * CrawlRules from a crawl request body: v2 names, and v1's `maxDepth` (as maxDiscoveryDepth), `ignoreSitemap`
 * (as `sitemap: skip`) and `allowBackwardLinks` (as crawlEntireDomain). Throws RuleError on a bad value.
 */
export function rulesFromRequest (body: Body, options: RulesOptions = {}): CrawlRules {
  const maxLimit = options.maxLimit ?? DEFAULT_CRAWL_LIMIT
  if (typeof body.url !== 'string') throw new RuleError('url', '`url` is required: the address to start from.')
  const start = canonicalUrl(body.url)
  if (start === undefined) throw new RuleError('url', `\`url\` must be an absolute http or https URL: \`${body.url.slice(0, 200)}\` is not.`)
  const depth = count(body, 'maxDiscoveryDepth', 0, 1000) ?? count(body, 'maxDepth', 0, 1000)
  return {
    start,
    includePaths: patterns(body, 'includePaths'),
    excludePaths: patterns(body, 'excludePaths'),
    regexOnFullURL: bool(body, 'regexOnFullURL', false),
    maxDiscoveryDepth: depth,
    limit: count(body, 'limit', 1, maxLimit) ?? Math.min(DEFAULT_CRAWL_LIMIT, maxLimit),
    crawlEntireDomain: bool(body, 'crawlEntireDomain', bool(body, 'allowBackwardLinks', false)),
    allowSubdomains: bool(body, 'allowSubdomains', false),
    allowExternalLinks: bool(body, 'allowExternalLinks', false),
    sitemap: sitemapMode(body),
    ignoreQueryParameters: bool(body, 'ignoreQueryParameters', false),
    deduplicateSimilarURLs: bool(body, 'deduplicateSimilarURLs', true),
    ignoreRobotsTxt: bool(body, 'ignoreRobotsTxt', false)
  }
}

/** The rules with their patterns compiled once (per job and process; RE2 objects are not data). */
export interface CompiledRules {
  readonly rules: CrawlRules
  readonly start: URL
  readonly include: readonly RegExp[]
  readonly exclude: readonly RegExp[]
}

export function compileRules (rules: CrawlRules): CompiledRules {
  return {
    rules,
    start: new URL(rules.start),
    include: rules.includePaths.map((p, i) => compilePattern(p, `includePaths[${i}]`)),
    exclude: rules.excludePaths.map((p, i) => compilePattern(p, `excludePaths[${i}]`))
  }
}
