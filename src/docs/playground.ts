// The playground of /docs (docs/api.md §12.2): a form whose fields are the parameter rows the reference
// is rendered from, the request URL and curl line it makes, and a small inline script that runs it against
// the listener that served the page and shows the answer as JSON, text, an image or a PDF.
import type { Plan } from '../config.ts'
import type { ErrorCode } from '../errors.ts'
import { deviceNames } from '../schemas/devices.ts'
import type { Group } from '../schemas/param-types.ts'
import { escapeHtml } from '../util/html.ts'
import { PARAMETER_ROWS } from './parameters.ts'
import type { ParameterRow } from './parameters.ts'

/** How a field is edited: on/off/default, one of a list, a number, or free text. */
export type FieldKind = 'switch' | 'choice' | 'number' | 'text'

export interface FormField {
  name: string
  parent: string
  group: Group
  kind: FieldKind
  /** The choices of a `choice` field. */
  options?: string[]
  min?: number
  max?: number
  integer?: boolean
  /** Offered while typing a `text` field. */
  suggestions?: string[]
  default?: string
  pro?: ErrorCode
  description: string
}

/** The order the form shows the groups in: what a request makes first, how it is sent last. */
export const FORM_GROUPS: readonly Group[] = ['outputs', 'target', 'emulation', 'steps', 'reply', 'cache']

const GROUP_LEGENDS: Record<Group, string> = {
  outputs: 'What the answer holds',
  target: 'Loading the page',
  emulation: 'The browser the page sees',
  steps: 'Waits and interactions',
  reply: 'The shape of the answer',
  cache: 'Cache'
}

function typesOf (row: ParameterRow): string[] {
  const { type } = row.schema
  return type === undefined ? [] : Array.isArray(type) ? [...type] : [type as string]
}

/** The field a row is edited with, or undefined when it has no value of its own (objects, `any`). */
function kindOf (row: ParameterRow): FieldKind | undefined {
  const types = typesOf(row)
  if (row.schema.enum !== undefined) return 'choice'
  if (types.includes('boolean')) return 'switch'
  if (types.length === 1 && (types[0] === 'integer' || types[0] === 'number')) return 'number'
  if (types.some((t) => t === 'string' || t === 'array' || t === 'number')) return 'text'
  return undefined
}

function suggestionsOf (row: ParameterRow): string[] | undefined {
  if (row.name === 'device') return deviceNames()
  const listed = row.schema.examples ?? row.schema.items?.enum
  return listed === undefined ? undefined : listed.map((value) => String(value))
}

/**
 * A field for every row a client can send as `name=value`: not the aliases (their nested names are here), not
 * the names with a segment the user chooses (`data.<field>.selector`: the form's free-text line takes them).
 */
export function formFields (rows: readonly ParameterRow[] = PARAMETER_ROWS): FormField[] {
  const out: FormField[] = []
  for (const row of rows) {
    if (row.aliasOf !== undefined || row.pattern !== undefined) continue
    const kind = kindOf(row)
    if (kind === undefined) continue
    const field: FormField = { name: row.name, parent: row.parent, group: row.group, kind, description: row.description }
    if (kind === 'choice') field.options = (row.schema.enum ?? []).map((value) => String(value))
    if (kind === 'number') {
      field.integer = typesOf(row)[0] === 'integer'
      if (row.schema.minimum !== undefined) field.min = row.schema.minimum
      if (row.schema.maximum !== undefined) field.max = row.schema.maximum
    }
    const suggestions = kind === 'text' ? suggestionsOf(row) : undefined
    if (suggestions !== undefined) field.suggestions = suggestions
    if (row.default !== undefined) field.default = row.default
    if (row.pro !== undefined) field.pro = row.pro
    out.push(field)
  }
  return out
}

function plain (text: string): string {
  return text.replace(/`/g, '')
}

function control (field: FormField, disabled: boolean): string {
  const name = escapeHtml(field.name)
  const off = disabled ? ' disabled' : ''
  const shown = field.default === undefined ? 'default' : `default: ${field.default}`
  switch (field.kind) {
    case 'switch':
      return `<select name="${name}" data-kind="switch"${off}><option value="">${escapeHtml(shown)}</option>` +
        '<option value="true">true</option><option value="false">false</option></select>'
    case 'choice':
      return `<select name="${name}"${off}><option value="">${escapeHtml(shown)}</option>` +
        (field.options ?? []).map((option) => `<option>${escapeHtml(option)}</option>`).join('') + '</select>'
    case 'number':
      return `<input type="number" name="${name}" step="${field.integer === true ? '1' : 'any'}"` +
        (field.min === undefined ? '' : ` min="${field.min}"`) + (field.max === undefined ? '' : ` max="${field.max}"`) +
        ` placeholder="${escapeHtml(shown)}"${off}>`
    case 'text': {
      const list = field.suggestions === undefined ? '' : ` list="list-${name}"`
      const options = field.suggestions === undefined
        ? ''
        : `<datalist id="list-${name}">${field.suggestions.map((s) => `<option value="${escapeHtml(s)}">`).join('')}</datalist>`
      return `<input name="${name}"${list} placeholder="${escapeHtml(shown)}" autocomplete="off"${off}>${options}`
    }
  }
}

function fieldHtml (field: FormField, plan: Plan): string {
  const disabled = field.pro !== undefined && plan === 'free'
  const tag = field.pro === undefined ? '' : ` <small>pro${disabled ? ' listener only' : ''}</small>`
  return `<label class="f" title="${escapeHtml(plain(field.description))}"><span><a href="#param-${escapeHtml(field.name.toLowerCase())}">` +
    `${escapeHtml(field.name)}</a>${tag}</span>${control(field, disabled)}</label>`
}

/** The form's fields, by group, then by top-level parameter with its sub-keys folded under it. */
function fieldsets (fields: readonly FormField[], plan: Plan): string {
  return FORM_GROUPS.map((group) => {
    const inGroup = fields.filter((f) => f.group === group)
    const parents = [...new Set(inGroup.map((f) => f.parent))]
    const tops = inGroup.filter((f) => f.name === f.parent)
    const folded = parents.map((parent) => {
      const subs = inGroup.filter((f) => f.parent === parent && f.name !== parent)
      if (subs.length === 0) return ''
      return `<details><summary>${escapeHtml(parent)}.*</summary><div class="fields">${subs.map((f) => fieldHtml(f, plan)).join('')}</div></details>`
    }).join('')
    return `<fieldset><legend>${escapeHtml(GROUP_LEGENDS[group])}</legend>` +
      `<div class="fields">${tops.map((f) => fieldHtml(f, plan)).join('')}</div>${folded}</fieldset>`
  }).join('\n')
}

/**
 * A signed link (docs/api.md §16) instead of the key: the tenant's name and one of its signing secrets. The page
 * signs the query itself (WebCrypto HMAC-SHA256, as src/tenants/signed-links.ts verifies it) and sends only the
 * signature: the secret never leaves the page. The fields have no `name`, so the query never holds them.
 */
const SIGNING_FIELDS = '<details id="signing"><summary>Signed link (for an <code>&lt;img&gt;</code> or a link: no key sent)</summary><div class="fields">' +
  '<label class="f">Tenant (<code>keyId</code>)<input id="keyId" autocomplete="off"></label>' +
  '<label class="f">Signing secret (stays in this page)<input id="secret" type="password" autocomplete="off"></label>' +
  '<label class="f">Expires in (seconds; empty: never)<input id="expiresIn" type="number" min="1" step="1"></label>' +
  '</div><p class="note" id="signnote">With a tenant and a secret, the request below is signed here and sent without the key.</p></details>'

/** The playground's form and answer panel for the listener of `plan`. */
export function renderPlayground (plan: Plan): string {
  const fields = formFields().filter((f) => f.name !== 'url')
  const key = plan === 'pro'
    ? '<label class="f key">API key (sent as <code>x-api-key</code>, never shown in the lines below)<input id="key" type="password" autocomplete="off"></label>' +
      SIGNING_FIELDS
    : '<p class="note">This is the free listener: no key, a daily quota per client. Pro-only parameters work on the pro listener.</p>'
  return `<form id="pg" class="pg" novalidate>
<div>
<div class="bar"><input name="url" type="url" required placeholder="https://example.com" aria-label="Page URL" autocomplete="url"><button type="submit">Run</button></div>
${key}
${fieldsets(fields, plan)}
<label class="f">Other parameters, as a query (<code>data.price.selector=.price&amp;function=…</code>)<input id="extra" autocomplete="off"></label>
</div>
<aside>
<h3>Request</h3><pre id="req"></pre>
<h3>curl</h3><pre id="curl"></pre>
<h3>Answer</h3><p id="status">Fill in a URL and press Run.</p><div id="result"></div>
</aside>
</form>`
}

/** The page's only script: builds the query from the form, runs it on this origin, shows the answer. */
export const PLAYGROUND_SCRIPT = `
'use strict'
const $ = (id) => document.getElementById(id)
const form = $('pg'), key = $('key'), extra = $('extra'), result = $('result'), status = $('status')
const enc = (v) => encodeURIComponent(v).replace(/%(2F|3A|2C|40)/g, (m) => decodeURIComponent(m))
let blobUrl = ''
function query () {
  const parts = []
  for (const el of form.querySelectorAll('[name]')) {
    const value = el.value.trim()
    if (el.disabled || value === '') continue
    parts.push(el.dataset.kind === 'switch' && value === 'true' ? el.name : el.name + '=' + enc(value))
  }
  for (const part of extra.value.trim().replace(/^[&?]+/, '').split('&')) {
    if (part === '') continue
    // Free text: each name and value encoded, so a space or a # stays in the query (and the curl line is one
    // argument); what was typed already escaped is decoded first, so it is not escaped twice.
    const at = part.indexOf('=')
    parts.push(at === -1 ? enc(typed(part)) : enc(typed(part.slice(0, at))) + '=' + enc(typed(part.slice(at + 1))))
  }
  return parts.join('&')
}
function typed (text) {
  try { return decodeURIComponent(text) } catch { return text }
}
const keyId = $('keyId'), secret = $('secret'), expiresIn = $('expiresIn'), signnote = $('signnote')
const utf8 = (text) => new TextEncoder().encode(text)
// The query signed as the service checks it: keyId (and expires) appended, then the lower-case hex HMAC-SHA256 of
// all that under the secret. Null when no link is asked for. Only the result leaves this function.
async function signed (q) {
  if (secret === null || secret.value === '' || keyId.value.trim() === '') return null
  if (globalThis.crypto === undefined || crypto.subtle === undefined) throw new Error('signing in the page needs https or localhost')
  let text = q + (q === '' ? '' : '&') + 'keyId=' + encodeURIComponent(keyId.value.trim())
  const seconds = Math.round(Number(expiresIn.value))
  if (expiresIn.value !== '' && seconds > 0) text += '&expires=' + (Math.floor(Date.now() / 1000) + seconds)
  const hmac = await crypto.subtle.importKey('raw', utf8(secret.value), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign'])
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', hmac, utf8(text)))
  return text + '&signature=' + Array.from(mac, (b) => b.toString(16).padStart(2, '0')).join('')
}
let shown = 0
async function update () {
  const turn = ++shown
  const q = query()
  let link = null
  try {
    link = await signed(q)
    if (signnote !== null) signnote.textContent = link === null ? 'With a tenant and a secret, the request below is signed here and sent without the key.' : 'Signed in this page; the secret is not sent.'
  } catch (err) {
    if (signnote !== null) signnote.textContent = 'Not signed: ' + err.message
  }
  const url = location.origin + '/?' + (link ?? q)
  const keyed = link === null && key !== null && key.value !== ''
  if (turn === shown) {
    $('req').textContent = url
    $('curl').textContent = 'curl' + (keyed ? ' -H "x-api-key: $API_KEY"' : '') + " '" + url.replace(/'/g, "'\\\\''") + "'"
  }
  return { url, keyed }
}
function show (el) { result.append(el) }
function pre (text) { const el = document.createElement('pre'); el.textContent = text; return el }
async function run (event) {
  event.preventDefault()
  if (!form.reportValidity()) return
  const { url, keyed } = await update()
  if (blobUrl !== '') { URL.revokeObjectURL(blobUrl); blobUrl = '' }
  result.replaceChildren()
  status.textContent = 'Running…'
  const started = performance.now()
  try {
    const res = await fetch(url, { headers: keyed ? { 'x-api-key': key.value } : {} })
    const type = (res.headers.get('content-type') || '').split(';')[0]
    status.textContent = ['HTTP ' + res.status, type, res.headers.get('x-cache-status'), Math.round(performance.now() - started) + ' ms'].filter(Boolean).join(' · ')
    if (type.endsWith('json')) show(pre(JSON.stringify(await res.json(), null, 2)))
    else if (type.startsWith('text/')) show(pre(await res.text()))
    else {
      blobUrl = URL.createObjectURL(await res.blob())
      const media = type.startsWith('image/') ? new Image() : type === 'application/pdf' ? document.createElement('iframe') : null
      if (media !== null) { media.src = blobUrl; media.title = media.alt = 'The answer'; show(media) }
      const link = document.createElement('a')
      link.href = blobUrl; link.download = ''; link.textContent = 'Save the answer (' + type + ')'
      show(link)
    }
  } catch (err) {
    status.textContent = 'The request failed: ' + err.message
  }
}
form.addEventListener('input', update)
form.addEventListener('change', update)
form.addEventListener('submit', run)
update()
`
