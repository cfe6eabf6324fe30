// The Firecrawl-compatible job routes in /openapi.json (docs/jobs.md): batch scrape and crawl, their status pages,
// cancel, errors and the ongoing crawls, written from what src/firecrawl/jobs.ts answers; the request bodies are the
// schemas Fastify checks them with (schemas/firecrawl-jobs.ts).
import { API_VERSIONS } from '../schemas/firecrawl.ts'
import { BATCH_BODY_SCHEMA, CRAWL_BODY_SCHEMA, JOB_PAGE_BYTES } from '../schemas/firecrawl-jobs.ts'
import { DOCUMENT_SCHEMA, ERRORS, NOT_FOUND, SECURITY, json } from './firecrawl-openapi.ts'

const JOB_STATUSES = ['scraping', 'completed', 'failed', 'cancelled']

const STARTED_SCHEMA = {
  type: 'object',
  required: ['success', 'id', 'url'],
  properties: {
    success: { const: true },
    id: { type: 'string', format: 'uuid' },
    url: { type: 'string', description: 'Where to poll the job (GET), on the listener that was called.' },
    invalidURLs: { type: 'array', items: { type: 'string' }, description: 'Batch: the entries skipped because they are not absolute http(s) URLs.' }
  }
}

const STATUS_SCHEMA = {
  type: 'object',
  required: ['success', 'status', 'completed', 'total', 'creditsUsed', 'expiresAt', 'data'],
  properties: {
    success: { const: true },
    status: { type: 'string', enum: JOB_STATUSES, description: '`failed`: no page gave a document.' },
    completed: { type: 'integer', description: 'Documents recorded.' },
    total: { type: 'integer', description: 'URLs admitted.' },
    creditsUsed: { type: 'integer', description: 'Pages recorded: documents and failures.' },
    expiresAt: { type: 'string', format: 'date-time' },
    next: { type: 'string', description: 'This URL with the next `skip`, when more documents are recorded than this answer holds.' },
    data: { type: 'array', items: DOCUMENT_SCHEMA, description: `Documents from \`skip\` on, at most ${JOB_PAGE_BYTES / 1024 / 1024} MiB of JSON (at least one).` },
    error: { type: 'string', description: 'Why the job failed.' }
  }
}

const ERRORS_SCHEMA = {
  type: 'object',
  properties: {
    success: { const: true },
    errors: { type: 'array', items: { type: 'object', required: ['id', 'url', 'error'], properties: { id: { type: 'string' }, url: { type: 'string' }, error: { type: 'string' }, code: { type: 'string' } } } },
    robotsBlocked: { type: 'array', items: { type: 'string' }, description: 'URLs robots.txt kept out of the crawl.' }
  }
}

const ONGOING_SCHEMA = {
  type: 'object',
  properties: {
    success: { const: true },
    crawls: {
      type: 'array',
      items: { type: 'object', properties: { id: { type: 'string' }, teamId: { type: 'string', description: 'The tenant\'s name, `free` on the free listener.' }, url: { type: 'string' }, options: { description: 'The crawl\'s rules as read.' } } }
    }
  }
}

const ID = { name: 'id', in: 'path', required: true, schema: { type: 'string', format: 'uuid' }, description: 'The job\'s id. Either kind\'s path reads either kind of job.' }
const SKIP = { name: 'skip', in: 'query', required: false, schema: { type: 'integer', minimum: 0, default: 0 }, description: 'The index of the first document to return (EINVALQUERY unless a whole number).' }

const KINDS = [
  { path: 'batch/scrape', name: 'BatchScrape', body: BATCH_BODY_SCHEMA, what: 'a batch scrape: each URL scraped with the same options' },
  { path: 'crawl', name: 'Crawl', body: CRAWL_BODY_SCHEMA, what: 'a crawl: the start URL, the links and sitemaps its rules allow, robots.txt obeyed' }
] as const

const ok = (description: string, schema: unknown): Record<string, unknown> => ({ description, ...json(schema) })

export function firecrawlJobPaths (): Record<string, unknown> {
  const paths: Record<string, unknown> = {}
  const mine = { 401: ERRORS[401], 404: NOT_FOUND }
  for (const version of API_VERSIONS) {
    const v = version.toUpperCase()
    for (const { path, name, body, what } of KINDS) {
      const base = `/${version}/${path}`
      paths[base] = {
        post: {
          operationId: `firecrawl${name}Start${v}`,
          summary: `Firecrawl ${version}: start ${what}`,
          description: 'Answers at once; the pages are worked in the background by any instance (docs/jobs.md). Also under `//' + version + '/' + path + '`.',
          security: SECURITY,
          requestBody: { required: true, ...json(body) },
          responses: { 200: ok('The job started', STARTED_SCHEMA), ...ERRORS }
        }
      }
      paths[`${base}/{id}`] = {
        get: {
          operationId: `firecrawl${name}Status${v}`,
          summary: 'The job\'s status and one page of its documents',
          security: SECURITY,
          parameters: [ID, SKIP],
          responses: { 200: ok('Status and documents', STATUS_SCHEMA), 400: ERRORS[400], ...mine }
        },
        delete: {
          operationId: `firecrawl${name}Cancel${v}`,
          summary: 'Cancels the job: no page is recorded after',
          security: SECURITY,
          parameters: [ID],
          responses: { 200: ok('`cancelled`, or the status the job had already ended with', { type: 'object', properties: { success: { const: true }, status: { type: 'string', enum: JOB_STATUSES } } }), ...mine }
        }
      }
      paths[`${base}/{id}/errors`] = {
        get: {
          operationId: `firecrawl${name}Errors${v}`,
          summary: 'The pages that failed and the URLs robots.txt refused',
          security: SECURITY,
          parameters: [ID],
          responses: { 200: ok('Failures', ERRORS_SCHEMA), ...mine }
        }
      }
    }
    // `active` is the name the JS SDK calls.
    for (const name of ['ongoing', 'active']) {
      paths[`/${version}/crawl/${name}`] = {
        get: {
          operationId: `firecrawlCrawl${name === 'ongoing' ? 'Ongoing' : 'Active'}${v}`,
          summary: 'The caller\'s crawls still scraping',
          security: SECURITY,
          responses: { 200: ok('The crawls', ONGOING_SCHEMA), 401: ERRORS[401] }
        }
      }
    }
  }
  return paths
}
