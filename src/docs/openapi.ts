// /openapi.json (docs/api.md §12.2): an OpenAPI 3.1 description of GET /, each query parameter under the
// name a client sends with its JSON Schema (type, enum, bounds, default), user-named positions as
// `data.<field>.selector` with the pattern of the names they stand for (`x-name-pattern`), the pro-only
// ones marked with their free-listener code (`x-pro`), and the error codes of §11 with their statuses. Each operation
// has an operationId; the server is the listener that served the document. Checked with redocly's recommended rules.
// The Firecrawl-compatible routes follow (firecrawl-openapi.ts, firecrawl-jobs-openapi.ts).
import { ERROR_CATALOG, ERROR_CODES } from '../errors.ts'
import { PARAMETER_ROWS } from './parameters.ts'
import type { ParameterRow } from './parameters.ts'
import { CONTENT_ACCEPTED, CONTENT_PARAMETERS } from '../schemas/content-query.ts'
import { FIRECRAWL_SECURITY_SCHEMES, firecrawlPaths } from './firecrawl-openapi.ts'
import { firecrawlJobPaths } from './firecrawl-jobs-openapi.ts'

/** No key (free), a key, or a signed link (pro): the routes a signed link may call. */
const SIGNABLE = [{}, { apiKey: [] }, { signedLink: [] }]

const CONTENT_TYPES = { markdown: 'text/markdown', text: 'text/plain', html: 'text/html' } as const

/** The content endpoints (docs/api.md §14): query form with GET /'s accepted parameters and their own, and path form. */
function contentPaths (errors: Record<string, unknown>): Record<string, unknown> {
  const accepted = new Set(CONTENT_ACCEPTED)
  const shared = PARAMETER_ROWS.filter((row) => accepted.has(row.name.split('.')[0] ?? '')).map(parameterOf)
  const own = Object.entries(CONTENT_PARAMETERS).map(([name, description]) => ({
    name, in: 'query', description, schema: name === 'mainContent' ? { type: 'boolean', default: false } : { type: 'string' }
  }))
  const paths: Record<string, unknown> = {}
  for (const [attr, type] of Object.entries(CONTENT_TYPES)) {
    const ok = {
      description: `The page's content as \`${type}; charset=utf-8\`${attr === 'markdown' ? ', with `x-markdown-tokens`' : ''}.`,
      content: { [type]: { schema: { type: 'string' } } }
    }
    const responses = { 200: ok, ...errors }
    paths[`/${attr}`] = { get: { operationId: attr, summary: `The page as ${attr} (query form)`, security: SIGNABLE, parameters: [...shared, ...own], responses } }
    paths[`/${attr}/{target}`] = {
      get: {
        operationId: `${attr}ByPath`,
        summary: `The page as ${attr} (path form)`,
        security: [{}, { apiKey: [] }],
        parameters: [{
          name: 'target', in: 'path', required: true, schema: { type: 'string' },
          description: 'The rest of the path, its query string included, is the target URL; `https://` is assumed without a scheme.'
        }],
        responses
      }
    }
  }
  return paths
}

function parameterOf (row: ParameterRow): Record<string, unknown> {
  const notes = [
    row.pro === undefined ? '' : ` Pro only (${row.pro} on the free listener).`,
    row.browser === undefined ? '' : ` Needs the browser${row.browser === 'yes' ? '' : ` ${row.browser}`}.`
  ].join('')
  return {
    name: row.name,
    in: 'query',
    required: row.name === 'url',
    description: row.description + notes,
    schema: row.schema,
    ...(row.aliasOf === undefined ? {} : { deprecated: true }),
    ...(row.pattern === undefined ? {} : { 'x-name-pattern': row.pattern }),
    ...(row.pro === undefined ? {} : { 'x-pro': row.pro })
  }
}

export function openApiDocument (): object {
  const statuses = [...new Set(ERROR_CODES.map((code) => ERROR_CATALOG[code].status))].sort()
  const errors = Object.fromEntries(statuses.map((status) => [String(status), {
    description: ERROR_CODES.filter((code) => ERROR_CATALOG[code].status === status).join(', ')
  }]))
  return {
    openapi: '3.1.0',
    info: {
      title: 'pagecast',
      version: '1',
      license: { name: 'MIT', identifier: 'MIT' },
      description: 'Page metadata, screenshots and PDFs, speaking the Microlink API (and Firecrawl\'s, under /v1 and /v2). Names are camelCase or snake_case in every dot segment; a value starting with `{` or `[` on an object- or array-typed parameter is JSON.'
    },
    // Relative: the listener that served this document (free or pro, whatever its public address).
    servers: [{ url: '/', description: 'This listener: the one that served this document' }],
    components: {
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'Needed on the pro listener; refused (EPRO) on the free one.' },
        signedLink: {
          type: 'apiKey',
          in: 'query',
          name: 'signature',
          description: 'Pro listener, instead of the key (docs/tenants.md#signed-links): the query ends in `&keyId=<tenant>[&expires=<unix seconds>]&signature=<hex>`, the lower-case hex HMAC-SHA256 of the raw query before `&signature=` under one of the tenant\'s signing secrets; ESIGNATURE (403) when it does not verify.'
        },
        ...FIRECRAWL_SECURITY_SCHEMES
      }
    },
    paths: {
      '/': {
        get: {
          operationId: 'extract',
          summary: 'Extract data from a page',
          security: SIGNABLE,
          parameters: [
            ...PARAMETER_ROWS.map(parameterOf),
            {
              name: 'x-api-header-<name>',
              in: 'header',
              description: 'Sent to the target as `<name>`, like `headers.<name>`, which it overrides. Pro only (EHEADERS on the free listener).',
              schema: { type: 'string' },
              'x-name-pattern': '^x-api-header-.+$',
              'x-pro': 'EHEADERS'
            }
          ],
          responses: { 200: { description: 'Success: `{status: "success", data, statusCode, headers, redirects}`' }, ...errors }
        }
      },
      ...contentPaths(errors),
      // The Firecrawl-compatible API (docs/firecrawl.md).
      ...firecrawlPaths(),
      ...firecrawlJobPaths()
    }
  }
}
