// Cache and delivery (docs/api.md §3.1, §3.7): `ttl`, `staleTtl` and `cacheKey`, which shape the cache
// entry; `filename`, `filter`, `embed` and its alias `stream`, which shape the reply.
import { DEFAULT_TTL, MAX_TTL, MIN_TTL } from './options.ts'
import type { ExtractOptions } from './options.ts'
import type { Node, ShapeSpec } from './grammar.ts'
import { invalid } from './messages.ts'
import { parseDuration, rootKid, scalar, str, sub } from './readers.ts'
import { leaf } from './shapes.ts'
import type { ReadInput } from './param-types.ts'

export function readTtl (node: Node | undefined): number {
  const value = scalar(node, 'ttl', 'EINVALTTL')
  if (value === undefined) return DEFAULT_TTL
  const hint = 'It must be a duration between 1 minute and 31 days (or `min`, `max`).'
  const lower = typeof value === 'string' ? value.trim().toLowerCase() : undefined
  if (lower === 'min') return MIN_TTL
  if (lower === 'max') return MAX_TTL
  const parsed = parseDuration(value)
  if (parsed === undefined) invalid('EINVALTTL', 'ttl', value, hint)
  const rounded = Math.round(parsed)
  if (rounded < MIN_TTL || rounded > MAX_TTL) invalid('EINVALTTL', 'ttl', value, hint)
  return rounded
}

/** Read after `ttl`, which it must stay below. */
export function readStaleTtl (node: Node | undefined, { done }: ReadInput): number | false {
  const ttl = done.ttl ?? DEFAULT_TTL
  const value = scalar(node, 'staleTtl', 'EINVALSTTL')
  if (value === undefined) return false
  const hint = 'It must be a boolean or a duration lower than `ttl`.'
  let parsed: number | false
  const lower = typeof value === 'string' ? value.trim().toLowerCase() : value
  if (lower === true || lower === '' || lower === 'true') parsed = 0
  else if (lower === false || lower === 'false') parsed = false
  else {
    const ms = parseDuration(value)
    if (ms === undefined || ms < 0) invalid('EINVALSTTL', 'staleTtl', value, hint)
    parsed = Math.round(ms)
  }
  if (parsed !== false && parsed >= ttl) invalid('EINVALSTTL', 'staleTtl', value, `${hint} The \`ttl\` is ${ttl} ms.`)
  return parsed
}

export function readCacheKey (node: Node | undefined): string | undefined {
  const value = scalar(node, 'cacheKey')
  if (value === undefined || value === null) return undefined
  const text = String(value)
  if ([...text].length > 256) invalid('EINVALQUERY', 'cacheKey', value, 'It must be at most 256 characters.')
  return text === '' ? undefined : text
}

const FILENAME_RE = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}$/

function withExtension (name: string, extensions: readonly string[]): string {
  const lower = name.toLowerCase()
  if (extensions.some((ext) => lower.endsWith(`.${ext}`))) return name
  return `${name}.${extensions[0] ?? ''}`
}

/** Read after `screenshot` and `pdf`: one name per generated file, with its extension. */
export function readFilename (node: Node | undefined, { done }: ReadInput): ExtractOptions['filename'] {
  const { screenshot = false, pdf = false } = done
  const value = scalar(node, 'filename')
  if (value === undefined) return undefined
  const hint = 'It must be 1 to 100 characters of letters, digits, `.`, `_` and `-`, not starting with a dot.'
  if (typeof value !== 'string' || !FILENAME_RE.test(value)) invalid('EINVALQUERY', 'filename', value ?? '', hint)
  const out: NonNullable<ExtractOptions['filename']> = {}
  if (screenshot !== false) {
    const extensions = screenshot.type === 'jpeg' ? ['jpg', 'jpeg'] : [screenshot.type]
    out.screenshot = withExtension(value, extensions)
  }
  if (pdf !== false) out.pdf = withExtension(value, ['pdf'])
  for (const name of [out.screenshot, out.pdf]) {
    if (name !== undefined && name.length > 100) invalid('EINVALQUERY', 'filename', value, `${hint} With its extension it would be longer.`)
  }
  return out.screenshot === undefined && out.pdf === undefined ? undefined : out
}

/** `filter` is ignored with `embed` (or `stream`), but still checked first. */
export function readFilter (node: Node | undefined, { root }: ReadInput): string[] | undefined {
  const value = str(node, 'filter')
  if (value === undefined) return undefined
  const paths = [...new Set(value.split(',').map((path) => path.trim()).filter((path) => path !== ''))].sort()
  if (rootKid(root, 'embed') !== undefined || sub(root, STREAM, 'stream') !== undefined) return undefined
  return paths.length === 0 ? undefined : paths
}

/** `stream`, a root name read by `embed`: mql's `stream=<field>` means `embed=<field>.url`. */
export const STREAM = {
  keys: { stream: leaf('Alias: `stream=<field>` means `embed=<field>.url` (mql sends `stream=screenshot`); `embed` wins.') }
} as const satisfies ShapeSpec

export function readEmbed (node: Node | undefined, { root }: ReadInput): string | undefined {
  const embedValue = str(node, 'embed')
  const streamValue = str(sub(root, STREAM, 'stream'), 'stream')
  const embed = embedValue ?? (streamValue === undefined ? undefined : streamValue.trim() === '' ? '' : `${streamValue.trim()}.url`)
  return embed?.trim()
}
