// The Firecrawl-compatible routes in /openapi.json (docs/firecrawl.md): our own schemas, written from what the routes
// do (the request schema is the one Fastify checks bodies with, schemas/firecrawl.ts). The job routes:
// firecrawl-jobs-openapi.ts.
import { API_VERSIONS, SCRAPE_BODY_SCHEMA } from '../schemas/firecrawl.ts'
import { MAP_BODY_SCHEMA } from '../schemas/firecrawl-map.ts'

const stringList = { type: 'array', items: { type: 'string' } }

/** A scraped page, as scrape answers it and a job's `data` lists it. */
export const DOCUMENT_SCHEMA = {
  type: 'object',
  description: 'One scraped page. Only the formats asked for are present; `metadata` always is.',
  properties: {
    markdown: { type: 'string' },
    html: { type: 'string', description: 'The cleaned HTML: main content when `onlyMainContent` (default true).' },
    rawHtml: { type: 'string', description: 'The page\'s serialized DOM (after rendering when the browser loaded it).' },
    links: stringList,
    images: stringList,
    screenshot: { type: 'string', description: 'The stored screenshot\'s URL.' },
    actions: {
      type: 'object',
      properties: {
        screenshots: stringList,
        scrapes: { type: 'array', items: { type: 'object', properties: { url: { type: 'string' }, html: { type: 'string' } } } },
        javascriptReturns: { type: 'array', items: { type: 'object', properties: { type: { type: 'string' }, value: {} } } },
        pdfs: stringList
      }
    },
    warning: { type: 'string' },
    metadata: {
      type: 'object',
      required: ['sourceURL', 'url', 'statusCode', 'cacheState', 'cachedAt'],
      properties: {
        title: { type: 'string' },
        description: { type: 'string' },
        language: { type: 'string' },
        sourceURL: { type: 'string', description: 'The URL as requested.' },
        url: { type: 'string', description: 'The page\'s URL.' },
        statusCode: { type: 'integer' },
        contentType: { type: 'string' },
        favicon: { type: 'string' },
        cacheState: { type: 'string', enum: ['hit', 'miss'] },
        cachedAt: { type: 'string', format: 'date-time' }
      },
      additionalProperties: { description: 'Every `<meta name|property>` of the page by its name (a list when repeated); `og:*` also in camelCase.' }
    }
  }
}

const ERROR_SCHEMA = {
  type: 'object',
  required: ['success', 'error'],
  properties: {
    success: { const: false },
    error: { type: 'string' },
    code: { type: 'string', description: 'The error code of our catalog (docs/api.md §11, EFORMAT for formats that need a language model).' },
    details: { type: 'object' }
  }
}

export const json = (schema: unknown): Record<string, unknown> => ({ content: { 'application/json': { schema } } })

export const ERRORS = {
  400: { description: 'A bad body, URL or option, a refused address, a format that needs a language model', ...json(ERROR_SCHEMA) },
  401: { description: 'Pro listener: no key or an unknown one: `{success: false, error: "Unauthorized"}`', ...json(ERROR_SCHEMA) },
  402: { description: 'An option the plan does not allow (pro-only options on the free listener)', ...json(ERROR_SCHEMA) },
  408: { description: 'The scrape did not finish within its timeout', ...json(ERROR_SCHEMA) },
  429: { description: 'The free quota or the plan\'s limit is spent (`Retry-After`)', ...json(ERROR_SCHEMA) },
  500: { description: 'A failure of the service (no details)', ...json(ERROR_SCHEMA) }
}

/** The answer to a job id that is not the caller's (another caller's, or expired). */
export const NOT_FOUND = { description: 'No job of the caller\'s has this id (another caller\'s, or expired): `{success: false, error: "Job not found.", code: "ENOTFOUND"}`', ...json(ERROR_SCHEMA) }

export const SECURITY = [{}, { bearer: [] }, { apiKey: [] }]

/** The security scheme of the Bearer key (the pro listener). */
export const FIRECRAWL_SECURITY_SCHEMES = {
  bearer: { type: 'http', scheme: 'bearer', description: 'Firecrawl routes: the pro listener\'s key (x-api-key also works); the free listener needs none.' }
}

export function firecrawlPaths (): Record<string, unknown> {
  const paths: Record<string, unknown> = {}
  for (const version of API_VERSIONS) {
    paths[`/${version}/scrape`] = {
      post: {
        operationId: `firecrawlScrape${version.toUpperCase()}`,
        summary: `Firecrawl ${version} scrape: one page as a Document`,
        description: 'Also served under `//' + version + '/scrape`. Keys clients add (`origin`, `integration`) are ignored. See docs/firecrawl.md.',
        security: SECURITY,
        requestBody: { required: true, ...json(SCRAPE_BODY_SCHEMA) },
        responses: { 200: { description: '`{success: true, data: Document}`', ...json({ type: 'object', properties: { success: { const: true }, data: DOCUMENT_SCHEMA } }) }, ...ERRORS }
      }
    }
    const mapLinks = version === 'v1' ? stringList : { type: 'array', items: { type: 'object', required: ['url'], properties: { url: { type: 'string' } } } }
    paths[`/${version}/map`] = {
      post: {
        operationId: `firecrawlMap${version.toUpperCase()}`,
        summary: `Firecrawl ${version} map: a site's URLs from its start page's links and its sitemaps`,
        description: 'Also served under `//' + version + '/map`. robots.txt is obeyed for `pagecast`; other sites are not listed. See docs/firecrawl.md#map.',
        security: SECURITY,
        requestBody: { required: true, ...json(MAP_BODY_SCHEMA) },
        responses: { 200: { description: `\`{success: true, links}\`: ${version === 'v1' ? 'URLs' : '`{url}` objects'}`, ...json({ type: 'object', properties: { success: { const: true }, links: mapLinks } }) }, ...ERRORS }
      }
    }
    const usage = version === 'v1'
      ? { remaining_credits: { type: 'integer' }, plan_credits: { type: ['integer', 'null'] } }
      : { remainingCredits: { type: 'integer' }, planCredits: { type: ['integer', 'null'] }, billingPeriodStart: { type: 'null' }, billingPeriodEnd: { type: 'null' } }
    paths[`/${version}/team/credit-usage`] = {
      get: {
        operationId: `firecrawlCreditUsage${version.toUpperCase()}`,
        summary: 'The day\'s remaining requests of the caller\'s plan (a credit is one page)',
        security: SECURITY,
        responses: { 200: { description: 'The plan\'s credits', ...json({ type: 'object', properties: { success: { const: true }, data: { type: 'object', properties: usage } } }) }, 401: ERRORS[401] }
      }
    }
  }
  paths['/v2/concurrency-check'] = {
    get: {
      operationId: 'firecrawlConcurrencyCheck',
      summary: 'Scrapes of the caller under way here, and how many the plan allows at once',
      security: SECURITY,
      responses: { 200: { description: 'Concurrency', ...json({ type: 'object', properties: { success: { const: true }, concurrency: { type: 'integer' }, maxConcurrency: { type: 'integer' } } }) }, 401: ERRORS[401] }
    }
  }
  return paths
}
