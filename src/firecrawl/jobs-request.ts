// The bodies of POST /v1|v2/batch/scrape and /v1|v2/crawl (docs/jobs.md), read into what a job stores: the scrape
// options every page is scraped with (checked once here through readScrapeRequest, so a bad format or action is a 400
// at creation, not a failure per page), the crawl's rules (src/crawl), the webhook. The bodies' schemas: schemas/firecrawl-jobs.ts.
import { AppError } from '../errors.ts'
import type { Plan } from '../config.ts'
import { DEFAULT_CRAWL_LIMIT, RuleError, rulesFromRequest, seenKey, type CrawlRules } from '../crawl/index.ts'
import { parseWebhook, type Candidate, type WebhookSpec } from '../jobs/index.ts'
import { readScrapeRequest } from './request.ts'
import { SCRAPE_OPTIONS_SCHEMA, type ApiVersion } from '../schemas/firecrawl.ts'

/** What a job keeps of its request (JSON): every page is scraped with `options` and, for a crawl, under `rules`. */
export interface StoredJobRequest {
  version: ApiVersion
  options: Record<string, unknown>
  rules?: CrawlRules
  /** Seconds to wait before each page (the crawl's `delay`). */
  delay?: number
}

export interface JobRequest {
  first: Candidate[]
  limit: number
  /** The body's `maxConcurrency`: pages of the job in flight at most, across instances. */
  maxConcurrency?: number
  stored: StoredJobRequest
  webhook?: WebhookSpec
  invalidURLs?: string[]
}

/** The scrape options of a body: its scrape keys (a batch) or its `scrapeOptions` (a crawl), checked. */
function scrapeOptionsOf (raw: Record<string, unknown>, version: ApiVersion, url: string): Record<string, unknown> {
  const options: Record<string, unknown> = {}
  for (const name of Object.keys(SCRAPE_OPTIONS_SCHEMA.properties)) if (raw[name] !== undefined) options[name] = raw[name]
  readScrapeRequest({ ...options, url }, version)
  return options
}

function isWebUrl (value: string): boolean {
  try {
    const url = new URL(value)
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== ''
  } catch {
    return false
  }
}

export function readBatchRequest (body: Record<string, unknown>, version: ApiVersion): JobRequest {
  const urls = body.urls as string[]
  const invalidURLs = urls.filter(u => !isWebUrl(u))
  if (invalidURLs.length > 0 && body.ignoreInvalidURLs === false) {
    throw new AppError('EINVALURL', { message: `Invalid URLs: ${invalidURLs.slice(0, 5).join(', ')}`, data: { urls: invalidURLs } })
  }
  const valid = urls.filter(isWebUrl)
  if (valid.length === 0) throw new AppError('EINVALURL', { message: 'No valid URL to scrape: URLs must be absolute http or https.', data: { urls: invalidURLs } })
  const webhook = parseWebhook(body.webhook)
  return {
    first: valid.map(url => ({ key: url, url })),
    limit: valid.length,
    ...maxConcurrencyOf(body),
    stored: { version, options: scrapeOptionsOf(body, version, valid[0] ?? '') },
    ...(webhook === undefined ? {} : { webhook }),
    ...(invalidURLs.length === 0 ? {} : { invalidURLs })
  }
}

function maxConcurrencyOf (body: Record<string, unknown>): { maxConcurrency?: number } {
  return typeof body.maxConcurrency === 'number' ? { maxConcurrency: body.maxConcurrency } : {}
}

export function readCrawlRequest (body: Record<string, unknown>, version: ApiVersion, plan: Plan): JobRequest {
  let rules: CrawlRules
  try {
    rules = rulesFromRequest(body, { maxLimit: DEFAULT_CRAWL_LIMIT })
  } catch (err) {
    if (!(err instanceof RuleError)) throw err
    throw new AppError(err.field === 'url' ? 'EINVALURL' : 'EINVALQUERY', { message: err.message, data: { [err.field]: err.message } })
  }
  if (rules.ignoreRobotsTxt && plan !== 'pro') {
    throw new AppError('EROBOTSTXT', { data: { ignoreRobotsTxt: 'pro plan only' } })
  }
  const scrapeOptions = (body.scrapeOptions ?? {}) as Record<string, unknown>
  const webhook = parseWebhook(body.webhook)
  return {
    first: [{ key: seenKey(rules.start, rules), url: rules.start }],
    limit: rules.limit,
    ...maxConcurrencyOf(body),
    stored: {
      version,
      options: scrapeOptionsOf(scrapeOptions, version, rules.start),
      rules,
      ...(typeof body.delay === 'number' && body.delay > 0 ? { delay: body.delay } : {})
    },
    ...(webhook === undefined ? {} : { webhook })
  }
}
