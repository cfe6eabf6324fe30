// The request schema of the Firecrawl-compatible scrape (docs/firecrawl.md): our own, written from what the routes
// do. Fastify checks bodies against SCRAPE_BODY_SCHEMA (src/firecrawl/index.ts) and /openapi.json shows the same
// (src/docs/firecrawl-openapi.ts); src/firecrawl/request.ts reads what a JSON schema cannot say.

export type ApiVersion = 'v1' | 'v2'

export const API_VERSIONS: readonly ApiVersion[] = ['v1', 'v2']

/** Formats pagecast produces. */
export const FORMATS = ['markdown', 'html', 'rawHtml', 'links', 'images', 'screenshot', 'screenshot@fullPage'] as const
export type Format = (typeof FORMATS)[number]

/** Formats that need a language model: refused with EFORMAT, naming the format. */
export const LLM_FORMATS = ['json', 'extract', 'summary', 'changeTracking'] as const

const stringList = { type: 'array', items: { type: 'string' } } as const

/** The scrape options shared by scrape, batch scrape and crawl's `scrapeOptions` (our own schema). */
export const SCRAPE_OPTIONS_SCHEMA = {
  type: 'object',
  properties: {
    formats: {
      type: 'array',
      items: {
        anyOf: [
          { type: 'string', description: `One of ${FORMATS.join(', ')}; ${LLM_FORMATS.join(', ')} are refused.` },
          {
            type: 'object',
            required: ['type'],
            properties: {
              type: { type: 'string' },
              fullPage: { type: 'boolean' },
              quality: { type: 'integer', minimum: 0, maximum: 100 },
              viewport: { type: 'object', properties: { width: { type: 'integer', minimum: 1, maximum: 8192 }, height: { type: 'integer', minimum: 1, maximum: 8192 } } }
            }
          }
        ]
      }
    },
    onlyMainContent: { type: 'boolean', default: true },
    includeTags: stringList,
    excludeTags: stringList,
    headers: { type: 'object', additionalProperties: { type: 'string' } },
    waitFor: { type: 'integer', minimum: 0, default: 0 },
    timeout: { type: 'integer', minimum: 1 },
    mobile: { type: 'boolean', default: false },
    blockAds: { type: 'boolean', default: true },
    actions: { type: 'array', maxItems: 50, items: { type: 'object', required: ['type'], properties: { type: { type: 'string' } } } },
    location: { type: 'object', properties: { country: { type: 'string' }, languages: stringList } },
    maxAge: { type: 'integer', minimum: 0 },
    storeInCache: { type: 'boolean', default: true },
    proxy: { type: 'string' }
  }
} as const

/** POST /v1|v2/scrape. */
export const SCRAPE_BODY_SCHEMA = {
  ...SCRAPE_OPTIONS_SCHEMA,
  required: ['url'],
  properties: { url: { type: 'string', minLength: 1, maxLength: 8192 }, ...SCRAPE_OPTIONS_SCHEMA.properties }
} as const

