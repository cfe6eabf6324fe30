// The request schemas of the Firecrawl-compatible job routes (docs/jobs.md): our own, written from what the routes do.
// Fastify checks bodies against them (src/firecrawl/jobs.ts), /openapi.json shows the same
// (src/docs/firecrawl-jobs-openapi.ts), and src/firecrawl/jobs-request.ts reads what a JSON schema cannot say.
import { DEFAULT_CRAWL_LIMIT } from '../crawl/rules.ts'
import { SCRAPE_OPTIONS_SCHEMA } from './firecrawl.ts'

/** URLs a batch may hold. */
export const MAX_BATCH_URLS = 1000

/** The most JSON of documents one GET of a job returns. */
export const JOB_PAGE_BYTES = 10 * 1024 * 1024

const stringList = { type: 'array', items: { type: 'string' } } as const

/** A URL, or `{url, headers, metadata, events}` (src/jobs/webhooks.ts parseWebhook reads the rest). */
const WEBHOOK_SCHEMA = {
  description: 'A URL, or `{url, headers, metadata, events}`: `headers` (strings) sent with each delivery, `metadata` echoed in each body, `events` some of `started`, `page`, `completed`, `failed` (all by default). Signed with the tenant\'s webhook secret (docs/jobs.md#webhooks).',
  anyOf: [{ type: 'string' }, { type: 'object', required: ['url'], properties: { url: { type: 'string' } } }]
} as const

const MAX_CONCURRENCY = { type: 'integer', minimum: 1, description: 'Pages of this job in flight at most, across every instance.' } as const

/** POST /v1|v2/batch/scrape: the URLs and the scrape options every page is scraped with. */
export const BATCH_BODY_SCHEMA = {
  type: 'object',
  required: ['urls'],
  properties: {
    urls: { type: 'array', minItems: 1, maxItems: MAX_BATCH_URLS, items: { type: 'string', maxLength: 8192 } },
    ...SCRAPE_OPTIONS_SCHEMA.properties,
    webhook: WEBHOOK_SCHEMA,
    ignoreInvalidURLs: { type: 'boolean', description: 'Default: entries that are not absolute http(s) URLs are skipped and listed as `invalidURLs`; `false` refuses the request.' },
    maxConcurrency: MAX_CONCURRENCY
  }
} as const

/** POST /v1|v2/crawl: the start URL, the crawl's rules (src/crawl/rules.ts) and `scrapeOptions`. */
export const CRAWL_BODY_SCHEMA = {
  type: 'object',
  required: ['url'],
  properties: {
    url: { type: 'string', minLength: 1, maxLength: 8192 },
    includePaths: { ...stringList, description: 'Regular expressions; a URL\'s path (its full URL with `regexOnFullURL`) must match one.' },
    excludePaths: { ...stringList, description: 'Regular expressions; a URL that matches one is not crawled.' },
    maxDiscoveryDepth: { type: 'integer', minimum: 0 },
    maxDepth: { type: 'integer', minimum: 0 },
    limit: { type: 'integer', minimum: 1, description: `Pages at most (at most ${DEFAULT_CRAWL_LIMIT}, the default).` },
    crawlEntireDomain: { type: 'boolean' },
    allowBackwardLinks: { type: 'boolean' },
    allowSubdomains: { type: 'boolean' },
    allowExternalLinks: { type: 'boolean' },
    sitemap: { type: 'string', enum: ['include', 'skip', 'only'] },
    ignoreSitemap: { type: 'boolean' },
    ignoreQueryParameters: { type: 'boolean' },
    deduplicateSimilarURLs: { type: 'boolean' },
    regexOnFullURL: { type: 'boolean' },
    ignoreRobotsTxt: { type: 'boolean', description: 'Pro plan only (EROBOTSTXT on the free listener).' },
    delay: { type: 'number', minimum: 0, maximum: 60, description: 'Seconds to wait before each page.' },
    maxConcurrency: MAX_CONCURRENCY,
    scrapeOptions: SCRAPE_OPTIONS_SCHEMA,
    webhook: WEBHOOK_SCHEMA
  }
} as const
