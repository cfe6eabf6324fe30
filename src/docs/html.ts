// The /docs page (docs/api.md §11, §12.2): every parameter, dotted names included, and one anchored
// section per error code (`#einvalurl`, the target of every error's `more` link), from the parameter
// rows and the error catalog the service uses.
import { ERROR_CATALOG, ERROR_CODES } from '../errors.ts'
import { PARAMETER_ROWS } from './parameters.ts'
import { escapeHtml } from '../util/html.ts'

/** `code` spans for backticked words, everything else escaped. */
function inline (text: string): string {
  return escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>')
}

export function renderDocs (): string {
  const params = PARAMETER_ROWS.map(p => `<tr id="param-${escapeHtml(p.name.toLowerCase())}"><td><code>${escapeHtml(p.name)}</code></td><td>${escapeHtml(p.type)}</td>` +
    `<td>${p.default === undefined ? '' : `<code>${escapeHtml(p.default)}</code>`}</td><td>${p.pro === undefined ? 'free' : `pro (${p.pro})`}</td>` +
    `<td>${p.browser === undefined ? '' : inline(p.browser)}</td><td>${inline(p.description)}</td></tr>`).join('\n')
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
<p>camelCase and snake_case are equivalent in every dot segment. <code>&lt;field&gt;</code>, <code>&lt;name&gt;</code> and <code>&lt;setting&gt;</code> stand for names you choose.</p>
<table><thead><tr><th>Name</th><th>Type</th><th>Default</th><th>Plan</th><th>Needs browser</th><th>Meaning</th></tr></thead><tbody>
${params}
</tbody></table>
<h2 id="errors">Errors</h2>
<p>Every error is JSON: <code>{"status":"fail"|"error","code","message","more","data","id"}</code>.</p>
${errors}
</body></html>`
}
