// Target and loading (docs/api.md §3.1, §3.6): `url`, `prerender`, `proxy`, the waits and the request's
// `timeout` budget.
import { WAIT_UNTIL } from './options.ts'
import type { WaitUntil } from './options.ts'
import type { Node, Prim } from './grammar.ts'
import { fail, invalid, show } from './messages.ts'
import { duration, listItems, scalar, sub } from './readers.ts'
import { PROXY_SHAPE } from './shapes.ts'
import type { ReadInput } from './param-types.ts'

export function readUrl (node: Node | undefined): string {
  const value = scalar(node, 'url', 'EINVALURL')
  const text = typeof value === 'string' ? value.trim() : value
  const hint = 'It needs a protocol (http or https) and a hostname, and must be reachable.'
  if (text === undefined || text === '') fail('EINVALURL', 'url', 'The `url` parameter is required.')
  if (typeof text !== 'string') fail('EINVALURL', 'url', `The URL \`${show(text)}\` is not valid. ${hint}`)
  let url: URL
  try {
    url = new URL(text)
  } catch {
    fail('EINVALURL', 'url', `The URL \`${show(text)}\` is not valid. ${hint}`)
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') {
    fail('EINVALURL', 'url', `The URL \`${show(text)}\` is not valid. ${hint}`)
  }
  return url.href
}

export function readPrerender (node: Node | undefined): boolean | 'auto' {
  const value = scalar(node, 'prerender')
  if (value === undefined) return 'auto'
  if (typeof value === 'string' && value.trim().toLowerCase() === 'auto') return 'auto'
  if (typeof value === 'boolean') return value
  const lower = typeof value === 'string' ? value.trim().toLowerCase() : undefined
  if (lower === '' || lower === 'true') return true
  if (lower === 'false') return false
  invalid('EINVALQUERY', 'prerender', value, 'It must be `true`, `false` or `auto`.')
}

const WAIT_ALIASES: Record<string, WaitUntil> = { networkidle: 'networkidle0' }

export function readWaitUntil (node: Node | undefined): WaitUntil[] {
  const items = listItems(node, 'waitUntil', 'EINVALQUERY')
  const chosen = new Set<WaitUntil>()
  for (const item of items) {
    const lower = typeof item === 'string' ? item.trim().toLowerCase() : undefined
    const value = lower === undefined ? undefined : (WAIT_ALIASES[lower] ?? WAIT_UNTIL.find((candidate) => candidate === lower))
    if (value === undefined) invalid('EINVALQUERY', 'waitUntil', item, `It must be one of: ${WAIT_UNTIL.join(', ')}.`)
    chosen.add(value)
  }
  if (chosen.size === 0) return ['auto']
  if (chosen.has('auto') && chosen.size > 1) {
    fail('EINVALQUERY', 'waitUntil', 'The `waitUntil` value `auto` cannot be combined with other events.')
  }
  return WAIT_UNTIL.filter((event) => chosen.has(event))
}

export function readTimeout (node: Node | undefined, { ctx }: ReadInput): number {
  const value = duration(node, 'timeout')
  if (value === undefined) return ctx.maxTimeout
  if (!(value > 0)) invalid('EINVALQUERY', 'timeout', scalar(node, 'timeout'), 'It must be greater than 0.')
  return Math.min(ctx.maxTimeout, Math.max(1, Math.round(value)))
}

/** ms, at most `timeout` (read before it). */
export function readWaitForTimeout (node: Node | undefined, { ctx, done }: ReadInput): number | undefined {
  const value = duration(node, 'waitForTimeout')
  if (value !== undefined && value < 0) {
    invalid('EINVALQUERY', 'waitForTimeout', scalar(node, 'waitForTimeout'), 'It must not be negative.')
  }
  return value === undefined ? undefined : Math.min(Math.round(value), done.timeout ?? ctx.maxTimeout)
}

export function readProxy (node: Node | undefined): string | undefined {
  if (node === undefined) return undefined
  const urlNode = sub(node, PROXY_SHAPE, 'url')
  let value: Prim | undefined
  if (urlNode !== undefined) value = scalar(urlNode, 'proxy.url', 'EINVALPROXY')
  else if (node.self?.kind === 'value') value = node.self.value
  const hint = 'It must be an http, https or socks5 proxy URL, such as `http://user:pass@proxy.example:8080`.'
  if (typeof value !== 'string' || value.trim() === '') invalid('EINVALPROXY', 'proxy', value ?? '', hint)
  let url: URL
  try {
    url = new URL(value.trim())
  } catch {
    invalid('EINVALPROXY', 'proxy', '(unparseable URL)', hint)
  }
  if (!['http:', 'https:', 'socks5:'].includes(url.protocol) || url.hostname === '') {
    invalid('EINVALPROXY', 'proxy', `${url.protocol}//${url.host}`, hint)
  }
  return url.href
}
