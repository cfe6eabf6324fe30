// /openapi.json (docs/api.md §12.2): an OpenAPI 3.1 description of GET /, each query parameter under the
// name a client sends with its JSON Schema (type, enum, bounds, default), user-named positions as
// `data.<field>.selector` with the pattern of the names they stand for (`x-name-pattern`), the pro-only
// ones marked with their free-listener code (`x-pro`), and the error codes of §11 with their statuses.
import { ERROR_CATALOG, ERROR_CODES } from '../errors.ts'
import { PARAMETER_ROWS } from './parameters.ts'
import type { ParameterRow } from './parameters.ts'

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
  return {
    openapi: '3.1.0',
    info: {
      title: 'pagecast',
      version: '1',
      description: 'Page metadata, screenshots and PDFs, speaking the Microlink API. Names are camelCase or snake_case in every dot segment; a value starting with `{` or `[` on an object- or array-typed parameter is JSON.'
    },
    components: {
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'Needed on the pro listener; refused (EPRO) on the free one.' }
      }
    },
    paths: {
      '/': {
        get: {
          summary: 'Extract data from a page',
          security: [{}, { apiKey: [] }],
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
          responses: Object.fromEntries([
            ['200', { description: 'Success: `{status: "success", data, statusCode, headers, redirects}`' }],
            ...statuses.map((status) => [String(status), {
              description: ERROR_CODES.filter((code) => ERROR_CATALOG[code].status === status).join(', ')
            }])
          ])
        }
      }
    }
  }
}
