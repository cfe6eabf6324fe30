// Browser and emulation (docs/api.md §3.5, §3.8): the device preset, the viewport merged over it, and the
// forwarded headers (`headers.*` and the `x-api-header-*` request headers, which win).
import { DEFAULT_DEVICE, resolveDevice, suggestDevices } from './devices.ts'
import type { Viewport } from './options.ts'
import type { Node } from './grammar.ts'
import { kebabHeaderName } from './grammar.ts'
import { fail, show } from './messages.ts'
import { bool, checkName, numberIn, objectNode, rootKid, scalar, sortedKids, sub } from './readers.ts'
import type { SubKey } from './readers.ts'
import { VIEWPORT_SHAPE } from './shapes.ts'
import type { ParseContext, ReadInput } from './param-types.ts'

/** Request headers forwarded like `headers.*` (pro only, like them). */
export const API_HEADER_PREFIX = 'x-api-header-'

/** The `x-api-header-*` request headers: names without the prefix, lower-cased; values joined. */
export function apiHeaders (headers: ParseContext['headers']): Array<[string, string]> {
  const out: Array<[string, string]> = []
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase()
    if (!lower.startsWith(API_HEADER_PREFIX) || value === undefined) continue
    out.push([lower.slice(API_HEADER_PREFIX.length), Array.isArray(value) ? value.join(', ') : value])
  }
  return out
}

function devicePreset (node: Node | undefined): { name: string, viewport: Viewport } {
  const value = scalar(node, 'device')
  const name = value === undefined ? DEFAULT_DEVICE : value
  const preset = typeof name === 'string' ? resolveDevice(name) : undefined
  if (preset === undefined) {
    const suggestions = typeof name === 'string' ? suggestDevices(name) : []
    const hint = suggestions.length > 0 ? ` Did you mean ${suggestions.map((s) => `\`${s}\``).join(', ')}?` : ''
    fail('EINVALQUERY', 'device', `The device \`${show(name)}\` is unknown.${hint}`)
  }
  return { name: preset.name, viewport: preset.viewport }
}

export function readDevice (node: Node | undefined): string {
  return devicePreset(node).name
}

/** The device's viewport with the given sub-keys merged over it; the device node is read again (it has passed). */
export function readViewport (node: Node | undefined, { root }: ReadInput): Viewport {
  const base = devicePreset(rootKid(root, 'device')).viewport
  const viewportNode = objectNode(node, 'viewport')
  if (viewportNode === undefined) return { ...base }
  const kid = (name: SubKey<typeof VIEWPORT_SHAPE>): Node | undefined => sub(viewportNode, VIEWPORT_SHAPE, name)
  return {
    width: numberIn(kid('width'), 'viewport.width', 1, 8192, base.width, true),
    height: numberIn(kid('height'), 'viewport.height', 1, 8192, base.height, true),
    deviceScaleFactor: numberIn(kid('deviceScaleFactor'), 'viewport.deviceScaleFactor', 0.1, 4, base.deviceScaleFactor, false),
    isMobile: bool(kid('isMobile'), 'viewport.isMobile', base.isMobile),
    hasTouch: bool(kid('hasTouch'), 'viewport.hasTouch', base.hasTouch),
    isLandscape: bool(kid('isLandscape'), 'viewport.isLandscape', base.isLandscape)
  }
}

const DROPPED_HEADERS = new Set([
  'connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection', 'te', 'trailer',
  'trailers', 'transfer-encoding', 'upgrade', 'host', 'content-length'
])
const HEADER_NAME_RE = /^[!#$%&'*+.^_`|~0-9a-z-]+$/

function headerValue (value: string, param: string): string {
  if (/[\r\n\0]/.test(value) || [...value].some((char) => (char.codePointAt(0) ?? 0) > 0xff)) {
    // Not quoted: a forwarded header's value is a secret (a cookie, a token), and refusals are logged.
    fail('EINVALQUERY', param, `The \`${param}\` value cannot hold line breaks, NUL or characters beyond Latin-1.`)
  }
  return value.trim()
}

export function readHeaders (node: Node | undefined, { ctx }: ReadInput): Record<string, string> {
  const merged = new Map<string, string>()
  const headersNode = objectNode(node, 'headers')
  for (const [name, kid] of sortedKids(headersNode)) {
    const param = `headers.${name}`
    checkName(name, param, 'EINVALQUERY')
    if (!HEADER_NAME_RE.test(name)) fail('EINVALQUERY', param, `The header name \`${show(name)}\` is not valid.`)
    const value = scalar(kid, param)
    if (value === undefined || value === null) continue
    merged.set(name, headerValue(String(value), param))
  }
  for (const [rawName, value] of apiHeaders(ctx.headers)) {
    const name = kebabHeaderName(rawName)
    const param = `${API_HEADER_PREFIX}${rawName}`
    if (name === '') continue
    checkName(name, param, 'EINVALQUERY')
    if (!HEADER_NAME_RE.test(name)) fail('EINVALQUERY', param, `The header name \`${show(name)}\` is not valid.`)
    merged.set(name, headerValue(value, param))
  }
  const out: Record<string, string> = {}
  for (const name of [...merged.keys()].sort()) {
    if (DROPPED_HEADERS.has(name)) continue
    out[name] = merged.get(name) ?? ''
  }
  return out
}
