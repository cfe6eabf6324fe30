// `function` (docs/api.md §3.4): the source of a function run in the page, possibly compressed (`lz#`,
// `br#`, `gz#`), checked to parse and never run here; and its named arguments, the query's unknown
// parameters (`args`), read only when `function` is set.
import { createRequire } from 'node:module'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { FUNCTION_TIME_LIMIT_MS, MAX_FREE_FUNCTION_BYTES, MAX_FUNCTION_BYTES } from './options.ts'
import type { ExtractOptions, FunctionArg } from './options.ts'
import { FORBIDDEN_NAMES } from './grammar.ts'
import type { Node } from './grammar.ts'
import { fail, invalid } from './messages.ts'
import { hasKids, scalar, sortedKids, syntaxProblem } from './readers.ts'
import type { ReadInput } from './param-types.ts'

const FUNCTION_START_RE = /^(?:async\s+)?(?:function\b|\(|[A-Za-z_$][\w$]*\s*=>)/

const require = createRequire(import.meta.url)

function fail400 (detail: string): never {
  fail('EINVALFUNCTION', 'function', detail)
}

function decodeFunction (raw: string): string {
  const utf8 = new TextDecoder('utf-8', { fatal: true })
  const prefix = /^(lz|br|gz)#/.exec(raw)?.[1]
  if (prefix === undefined) return raw
  const payload = raw.slice(prefix.length + 1).trim()
  if (prefix === 'lz') {
    let lz: { decompressFromEncodedURIComponent?: (input: string) => string | null } | undefined
    try {
      lz = require('lz-string') as typeof lz
    } catch {
      fail400('The `lz#` prefix is not supported by this server (the lz-string decoder is not installed); use `br#` or `gz#`.')
    }
    const decoded = lz?.decompressFromEncodedURIComponent?.(payload)
    if (typeof decoded !== 'string' || decoded === '') fail400('The `function` has an invalid `lz#` payload.')
    if (Buffer.byteLength(decoded, 'utf8') > MAX_FUNCTION_BYTES) fail400(`The decoded \`function\` is larger than ${MAX_FUNCTION_BYTES / 1024} KiB.`)
    return decoded
  }
  if (!/^[A-Za-z0-9_-]*={0,2}$/.test(payload) || payload === '') fail400(`The \`function\` has an invalid \`${prefix}#\` payload: it must be base64url.`)
  const bytes = Buffer.from(payload, 'base64url')
  let inflated: Buffer
  try {
    inflated = prefix === 'br'
      ? brotliDecompressSync(bytes, { maxOutputLength: MAX_FUNCTION_BYTES + 1 })
      : gunzipSync(bytes, { maxOutputLength: MAX_FUNCTION_BYTES + 1 })
  } catch (err) {
    if (err instanceof RangeError || (err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
      fail400(`The decoded \`function\` is larger than ${MAX_FUNCTION_BYTES / 1024} KiB.`)
    }
    fail400(`The \`function\` has an invalid \`${prefix}#\` payload: it does not decompress.`)
  }
  if (inflated.length > MAX_FUNCTION_BYTES) fail400(`The decoded \`function\` is larger than ${MAX_FUNCTION_BYTES / 1024} KiB.`)
  try {
    return utf8.decode(inflated)
  } catch {
    fail400(`The \`function\` has an invalid \`${prefix}#\` payload: it is not UTF-8 text.`)
  }
}

export function readFunction (node: Node | undefined, { ctx }: ReadInput): ExtractOptions['function'] {
  const value = scalar(node, 'function', 'EINVALFUNCTION')
  if (value === undefined) return undefined
  if (typeof value !== 'string' || value.trim() === '') {
    invalid('EINVALFUNCTION', 'function', value ?? '', 'It must be the source of a JavaScript function.')
  }
  const source = decodeFunction(value.trim())
  if (ctx.plan === 'free' && Buffer.byteLength(source, 'utf8') > MAX_FREE_FUNCTION_BYTES) {
    fail('EINVALFUNCTION', 'function', `On the free plan the \`function\` source is limited to ${MAX_FREE_FUNCTION_BYTES} bytes.`)
  }
  const trimmed = source.trim()
  const problem = syntaxProblem(trimmed)
  if (problem !== undefined) fail('EINVALFUNCTION', 'function', `The \`function\` does not parse as JavaScript: ${problem}.`)
  if (!FUNCTION_START_RE.test(trimmed)) {
    fail('EINVALFUNCTION', 'function', 'The `function` must be the source of a function, such as `({ page }) => page.title()`.')
  }
  return { source: trimmed, timeLimit: FUNCTION_TIME_LIMIT_MS[ctx.plan] }
}

function toArg (node: Node): FunctionArg | undefined {
  if (hasKids(node)) {
    const keys = sortedKids(node).map(([key]) => key).filter((key) => !FORBIDDEN_NAMES.has(key))
    if (keys.length > 0 && keys.every((key) => /^\d+$/.test(key))) {
      keys.sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0))
      const list: FunctionArg[] = []
      for (const key of keys) {
        const kid = node.kids.get(key)
        const arg = kid === undefined ? undefined : toArg(kid)
        if (arg !== undefined) list.push(arg)
      }
      return list
    }
    const object: Record<string, FunctionArg> = {}
    for (const key of keys) {
      const kid = node.kids.get(key)
      const arg = kid === undefined ? undefined : toArg(kid)
      if (arg !== undefined) object[key] = arg
    }
    return object
  }
  const value = node.self?.kind === 'value' ? node.self.value : undefined
  return value === undefined || value === null ? undefined : String(value)
}

/** The unknown parameters, by name as written, when `function` is set (else none: they stay out of the key). */
export function readArgs (_node: Node | undefined, { root, done, knownRoot }: ReadInput): Record<string, FunctionArg> {
  if (done.function === undefined) return {}
  const args: Record<string, FunctionArg> = {}
  for (const [name, node] of sortedKids(root)) {
    if (knownRoot.has(name) || FORBIDDEN_NAMES.has(name)) continue
    const arg = toArg(node)
    if (arg !== undefined) args[name] = arg
  }
  return args
}
