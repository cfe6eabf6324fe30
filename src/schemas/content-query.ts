// The content endpoints' queries (docs/api.md §14) as the `GET /` queries they stand for: `/markdown?url=...&...`
// is `GET /?url=...&...&meta=false&data.content.attr=markdown&embed=content`, so both parse, cache and single-flight
// as one. The accepted names come from the parameter table: every root parameter and alias but the ones that shape
// the answer (CONTENT_REFUSED and their aliases), plus the content parameters `mainContent` and `selector`.
import type { ExtractOptions } from './options.ts'
import { PARAMETERS } from './parameters.ts'
import { knownKey, loose } from './grammar.ts'
import { KNOWN_ROOT, ROOT_SHAPE } from './derived.ts'
import { fail } from './messages.ts'
import { toBool } from './readers.ts'

export type ContentAttr = 'markdown' | 'text' | 'html'

/** The parameters the endpoint sets itself (docs/api.md §14). */
export const CONTENT_REFUSED = ['meta', 'data', 'embed', 'filter'] as const satisfies ReadonlyArray<keyof ExtractOptions>

/** Refused root names (the parameters and their aliases), each with the parameter it names. */
const REFUSED_NAMES: ReadonlyMap<string, string> = new Map(CONTENT_REFUSED.flatMap((name) => {
  const aliases = Object.keys((PARAMETERS[name] as { aliases?: Readonly<Record<string, unknown>> }).aliases ?? {})
  return [name, ...aliases].map((alias): [string, string] => [alias, name])
}))

/** The extra parameters of the content endpoints' query form, with their documentation. */
export const CONTENT_PARAMETERS = {
  mainContent: 'boolean, default `false`. Converts only the main content, as the `mainContent` rule key of docs/api.md §3.3 does (Readability; without a main content, the body).',
  selector: 'string. A CSS selector; only its first match is converted. Default: the whole document (`/html`) or its body.'
} as const

/** Root names the query form accepts besides unknown ones (which stay `function` arguments, as on `GET /`). */
export const CONTENT_ACCEPTED: readonly string[] = [
  ...[...KNOWN_ROOT].filter((name) => !REFUSED_NAMES.has(name) && ROOT_SHAPE.keys?.[name]?.rejected !== true),
  ...Object.keys(CONTENT_PARAMETERS)
].sort()

const MAIN_CONTENT = loose('mainContent')
const SELECTOR = loose('selector')

function decode (text: string): string | undefined {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '))
  } catch {
    // Left as written: parsing the whole query reports it (EINVALQUERY).
    return undefined
  }
}

function fixed (attr: ContentAttr): string {
  return `meta=false&data.content.attr=${attr}&embed=content`
}

/** The `GET /` query of a query-form request; EINVALQUERY for a parameter the endpoint sets itself. */
export function contentQuery (rawQuery: string, attr: ContentAttr): string {
  const query = rawQuery.startsWith('?') ? rawQuery.slice(1) : rawQuery
  const kept: string[] = []
  let mainContent = false
  let selector: string | undefined
  for (const pair of query.split('&')) {
    if (pair === '') continue
    const eq = pair.indexOf('=')
    const key = decode(eq === -1 ? pair : pair.slice(0, eq))
    const root = key?.split('.')[0] ?? ''
    const known = knownKey(ROOT_SHAPE, root)?.name
    const refused = known === undefined ? undefined : REFUSED_NAMES.get(known)
    if (refused !== undefined) {
      fail('EINVALQUERY', refused, `The \`${refused}\` parameter is set by the /${attr} endpoint and is not accepted there.`)
    }
    const value = eq === -1 ? '' : decode(pair.slice(eq + 1))
    const own = known === undefined ? [MAIN_CONTENT, SELECTOR].find((name) => name === loose(root)) : undefined
    if (own !== undefined) {
      const name = own === MAIN_CONTENT ? 'mainContent' : 'selector'
      if (key !== root) fail('EINVALQUERY', name, `The \`${name}\` takes a single value, not an object or a list.`)
      if (value === undefined) fail('EINVALQUERY', name, `The \`${name}\` has an invalid percent-escape.`)
    }
    if (own === MAIN_CONTENT) {
      mainContent = toBool(value, 'mainContent', false)
    } else if (own === SELECTOR) {
      if (value === undefined || value.trim() === '') fail('EINVALQUERY', 'selector', 'The `selector` must be a CSS selector.')
      selector = value
    } else {
      kept.push(pair)
    }
  }
  if (mainContent) kept.push('data.content.mainContent=true')
  if (selector !== undefined) kept.push(`data.content.selector.0=${encodeURIComponent(selector)}`)
  kept.push(fixed(attr))
  return kept.join('&')
}

const SCHEME = /^[a-z][a-z\d+.-]*:\/\//i

const ENCODED_SCHEME = /^[a-z][a-z\d+.-]*%3A/i

/**
 * The target of a path-form request from the raw path after the endpoint's slash, its query string included and its
 * encoding kept; without a scheme, `https://` is assumed. A scheme whose slashes a proxy merged (`https:/host`) is
 * mended, and a target sent percent-encoded as a whole (`https%3A%2F%2Fexample.com`) is decoded once.
 */
export function targetOfPath (rest: string): string {
  let target = rest
  if (ENCODED_SCHEME.test(target)) {
    try { target = decodeURIComponent(target) } catch {}
  }
  const mended = target.replace(/^(https?):\/+/i, '$1://')
  return SCHEME.test(mended) ? mended : `https://${mended}`
}

/** The `GET /` query of a path-form request (which takes no other parameters). */
export function contentPathQuery (rest: string, attr: ContentAttr): string {
  return `url=${encodeURIComponent(targetOfPath(rest))}&${fixed(attr)}`
}
