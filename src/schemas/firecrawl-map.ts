// The request schema of the Firecrawl-compatible map (docs/firecrawl.md#map): our own, written from what the route
// does. Fastify checks bodies against it (src/firecrawl/map.ts) and /openapi.json shows the same
// (src/docs/firecrawl-openapi.ts).
import { DEFAULT_MAP_LIMIT, MAX_MAP_LIMIT } from '../crawl/discover.ts'

/** POST /v1|v2/map. Unknown keys (`origin`, `integration`, …) are ignored. */
export const MAP_BODY_SCHEMA = {
  type: 'object',
  required: ['url'],
  properties: {
    url: { type: 'string', minLength: 1, maxLength: 8192, description: 'The start URL: its links and its site\'s sitemaps are listed.' },
    search: { type: 'string', maxLength: 1000, description: 'Keep only URLs that contain every word (case-insensitive, URL-decoded).' },
    sitemap: { type: 'string', enum: ['include', 'skip', 'only'], description: 'v2: the sitemaps with the page\'s links (default), not at all, or alone.' },
    ignoreSitemap: { type: 'boolean', description: 'v1: `true` is `sitemap: skip`.' },
    sitemapOnly: { type: 'boolean', description: 'v1: `true` is `sitemap: only`.' },
    includeSubdomains: { type: 'boolean', default: true },
    ignoreQueryParameters: { type: 'boolean', default: true },
    limit: { type: 'integer', minimum: 1, maximum: MAX_MAP_LIMIT, default: DEFAULT_MAP_LIMIT },
    timeout: { type: 'integer', minimum: 1, description: 'ms; at most 60 s or MAX_TIMEOUT, whichever is longer.' }
  }
} as const
