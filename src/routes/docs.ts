// /docs (HTML) and /openapi.json, both built from the error catalog and the parameter list the service uses.
import type { FastifyInstance } from 'fastify'
import { ERROR_CATALOG, ERROR_CODES } from '../errors.ts'
import { PARAMETERS } from '../docs/parameters.ts'

function escapeHtml (text: string): string {
  return text.replace(/[&<>"']/g, c => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c] ?? c))
}

/** `code` spans for backticked words, everything else escaped. */
function inline (text: string): string {
  return escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>')
}

export function renderDocs (): string {
  const params = PARAMETERS.map(p => `<tr id="param-${p.name.toLowerCase()}"><td><code>${p.name}</code></td><td>${p.type}</td>` +
    `<td>${p.default === undefined ? '' : `<code>${escapeHtml(p.default)}</code>`}</td><td>${p.pro === undefined ? 'free' : `pro (${p.pro})`}</td>` +
    `<td>${inline(p.description)}</td></tr>`).join('\n')
  const errors = ERROR_CODES.map(code => {
    const e = ERROR_CATALOG[code]
    return `<section id="${code.toLowerCase()}"><h3>${code} <small>HTTP ${e.status}</small></h3>` +
      `<p>${inline(e.when)}</p><p>Message: ${inline(e.message)}</p></section>`
  }).join('\n')
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>pagecast API</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:960px;margin:2rem auto;padding:0 1rem}table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.3rem;text-align:left;vertical-align:top}code{background:#f4f4f4;padding:0 .2rem}small{color:#666;font-weight:normal}</style>
</head><body>
<h1>pagecast API</h1>
<p><code>GET /?url=&lt;page&gt;</code> returns the page's normalized metadata, and on request a screenshot or PDF. The free
listener needs no key and has a daily quota; the pro listener needs an <code>x-api-key</code> header.</p>
<h2 id="parameters">Parameters</h2>
<table><thead><tr><th>Name</th><th>Type</th><th>Default</th><th>Plan</th><th>Meaning</th></tr></thead><tbody>
${params}
</tbody></table>
<h2 id="errors">Errors</h2>
<p>Every error is JSON: <code>{"status":"fail"|"error","code","message","more","data","id"}</code>.</p>
${errors}
</body></html>`
}

export function openApiDocument (): object {
  return {
    openapi: '3.1.0',
    info: { title: 'pagecast', version: '1' },
    paths: {
      '/': {
        get: {
          summary: 'Extract data from a page',
          parameters: PARAMETERS.map(p => ({
            name: p.name,
            in: 'query',
            required: p.name === 'url',
            description: p.description + (p.pro === undefined ? '' : ` Pro only (${p.pro}).`),
            schema: { type: p.type === 'duration' ? 'string' : p.type, ...(p.default === undefined ? {} : { default: p.default }) }
          })),
          responses: Object.fromEntries([
            ['200', { description: 'Success: `{status: "success", data, statusCode, headers, redirects}`' }],
            ...[...new Set(ERROR_CODES.map(c => ERROR_CATALOG[c].status))].map(status => [String(status), {
              description: ERROR_CODES.filter(c => ERROR_CATALOG[c].status === status).join(', ')
            }])
          ])
        }
      }
    }
  }
}

export async function docsRoutes (app: FastifyInstance): Promise<void> {
  const html = renderDocs()
  const openapi = JSON.stringify(openApiDocument())
  app.get('/docs', async (_request, reply) => await reply.type('text/html; charset=utf-8').send(html))
  app.get('/openapi.json', async (_request, reply) => await reply.type('application/json; charset=utf-8').send(openapi))
}
