// The /docs page (docs/api.md §11, §12.2): the playground (a form over the parameter rows that runs the
// request on this listener), every parameter, dotted names included, and one anchored section per error
// code (`#einvalurl`, the target of every error's `more` link), from the parameter rows and the error
// catalog the service uses. Nothing on it comes from another origin.
import { createHash } from 'node:crypto'
import type { Plan } from '../config.ts'
import { ERROR_CATALOG, ERROR_CODES } from '../errors.ts'
import { PARAMETER_ROWS } from './parameters.ts'
import { PLAYGROUND_SCRIPT, renderPlayground } from './playground.ts'
import { escapeHtml } from '../util/html.ts'

const STYLE = 'body{font:15px/1.5 system-ui,sans-serif;max-width:1280px;margin:2rem auto;padding:0 1rem}' +
  'table{border-collapse:collapse;width:100%}td,th{border-bottom:1px solid #ddd;padding:.3rem;text-align:left;vertical-align:top}' +
  'code{background:#f4f4f4;padding:0 .2rem}small{color:#666;font-weight:normal}' +
  '.pg{display:grid;grid-template-columns:minmax(0,3fr) minmax(0,2fr);gap:1.5rem;align-items:start}' +
  '.pg aside{position:sticky;top:.5rem;max-height:calc(100vh - 1rem);overflow:auto}' +
  '@media (max-width:800px){.pg{grid-template-columns:1fr}.pg aside{position:static;max-height:none}}' +
  '.bar{display:flex;gap:.5rem;margin-bottom:.8rem}.bar input{flex:1;font-size:16px;padding:.4rem}button{font-size:16px;padding:.4rem 1.4rem}' +
  'fieldset{border:1px solid #ddd;margin:0 0 1rem;padding:.4rem .8rem .6rem}legend{font-weight:600}' +
  '.fields{display:grid;grid-template-columns:repeat(auto-fill,minmax(190px,1fr));gap:.4rem .8rem;margin:.3rem 0}' +
  '.f{display:flex;flex-direction:column;font-size:13px;margin-bottom:.4rem}.f a{color:inherit}' +
  '.f input,.f select{font:inherit;padding:.2rem;min-width:0}.note{font-size:13px;color:#444}summary{cursor:pointer;font-size:13px}' +
  'pre{background:#f6f6f6;padding:.6rem;overflow:auto;white-space:pre-wrap;word-break:break-all;font-size:12px}' +
  '#result img{max-width:100%;border:1px solid #ddd}#result iframe{width:100%;height:70vh;border:1px solid #ddd}'

function cspHash (source: string): string {
  return `'sha256-${createHash('sha256').update(source, 'utf8').digest('base64')}'`
}

/**
 * What the page may load: its own inline script and style (by hash), images, PDFs and answers from its own
 * origin or made into blob: URLs by the script; nothing from elsewhere, and it may not be framed.
 */
export const DOCS_CSP = [
  "default-src 'none'",
  `script-src ${cspHash(PLAYGROUND_SCRIPT)}`,
  `style-src ${cspHash(STYLE)}`,
  "img-src 'self' blob: data:",
  "connect-src 'self'",
  'frame-src blob:',
  'object-src blob:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'"
].join('; ')

/** `code` spans for backticked words, everything else escaped. */
function inline (text: string): string {
  return escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>')
}

export function renderDocs (plan: Plan): string {
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
<style>${STYLE}</style>
</head><body>
<h1>pagecast API <small>${plan} listener</small></h1>
<p><code>GET /?url=&lt;page&gt;</code> returns the page's normalized metadata, and on request a screenshot or PDF. The free
listener needs no key and has a daily quota; the pro listener needs an <code>x-api-key</code> header.
Try it below: the request runs on this listener. <a href="#parameters">Parameters</a> · <a href="#errors">Errors</a> · <a href="/openapi.json">OpenAPI</a></p>
<h2 id="playground">Playground</h2>
${renderPlayground(plan)}
<h2 id="parameters">Parameters</h2>
<p>camelCase and snake_case are equivalent in every dot segment. <code>&lt;field&gt;</code>, <code>&lt;name&gt;</code> and <code>&lt;setting&gt;</code> stand for names you choose.</p>
<table><thead><tr><th>Name</th><th>Type</th><th>Default</th><th>Plan</th><th>Needs browser</th><th>Meaning</th></tr></thead><tbody>
${params}
</tbody></table>
<h2 id="errors">Errors</h2>
<p>Every error is JSON: <code>{"status":"fail"|"error","code","message","more","data","id"}</code>.</p>
${errors}
<script>${PLAYGROUND_SCRIPT}</script>
</body></html>`
}
