// Cold requests of one client mostly differ in their `url` alone (`url=<page>&meta=false&...`, the rest the same), and
// the parsed-query memo (index.ts) keys on the whole raw query, so each of them parsed all ~30 options and
// wrote the whole cache key again: a fifth of the fixed cost of a cold request. Here the query is split into its
// `url` and the rest; the rest is parsed once (with a stand-in URL) and kept as a template, and each new URL costs
// the `url` reader and one hash. Only queries whose other keys plainly cannot name `url` take this way (literal
// keys, no escapes, no loose spelling of `url`); anything else, and any error, goes through parseQuery as before, so
// errors and their order (docs/api.md §1.4) are parseQuery's own. No other option reads `url` (the readers take
// their own nodes, and `url` has no alias), which test/unit/query-templates.test.ts holds against parseQuery.
import { randomUUID } from 'node:crypto'
import { LRUCache } from 'lru-cache'
import type { ExtractOptions } from '../schemas/options.ts'
import { parseQuery, type ParseContext } from '../schemas/query.ts'
import { loose, readTree } from '../schemas/grammar.ts'
import { readUrl } from '../schemas/read-loading.ts'
import { rootKid } from '../schemas/readers.ts'
import { apiHeaders } from '../schemas/read-emulation.ts'
import { ROOT_SHAPE, specOf } from '../schemas/derived.ts'
import { keyJsonOf } from '../cache/key.ts'
import { sha256 } from '../util/hash.ts'
import { deepFreeze } from '../util/freeze.ts'
import { MAX_MEMO_QUERY, MEMO_MAX_BYTES, memoSize, type ParsedQuery } from './parsed-query.ts'

/** The stand-in URL of a template: unguessable, so no other option of a query can hold it by chance. */
const STAND_IN = `http://t${randomUUID()}.invalid/`
const STAND_IN_MEMBER = `"url":${JSON.stringify(STAND_IN)}`
/** A key that decodes to itself (no escape, no `+`). */
const LITERAL_KEY = /^[A-Za-z0-9._-]+$/
/** Templates are used only while `url` is read from its own node alone, as now. */
const URL_STANDS_ALONE = specOf('url').aliases === undefined && specOf('url').read === readUrl

interface Template {
  /** The options of the rest with the stand-in URL, deep-frozen. */
  options: Readonly<ExtractOptions>
  /** The canonical key JSON before and after the `url` member. */
  before: string
  after: string
}

/** The `url` pair's raw value and the query without it, or undefined when the query is not plainly of that form. */
export function splitUrl (raw: string): { value: string, rest: string } | undefined {
  const query = raw.startsWith('?') ? raw.slice(1) : raw
  let value: string | undefined
  const rest: string[] = []
  for (const pair of query.split('&')) {
    if (pair === '') continue
    const eq = pair.indexOf('=')
    const key = eq === -1 ? pair : pair.slice(0, eq)
    if (key === 'url') {
      if (value !== undefined || eq === -1) return undefined
      value = pair.slice(eq + 1)
      continue
    }
    if (!LITERAL_KEY.test(key)) return undefined
    const dot = key.indexOf('.')
    if (loose(dot === -1 ? key : key.slice(0, dot)) === 'url') return undefined
    rest.push(pair)
  }
  return value === undefined ? undefined : { value, rest: rest.join('&') }
}

export type QueryTemplates = (raw: string, ctx: ParseContext) => ParsedQuery | undefined

/**
 * The options and cache key of `raw` from the template of its rest, or undefined when it has none (the caller then
 * parses the whole query). Both are what parseQuery and cacheKeyOf give for `raw`; the options are frozen.
 */
export function createQueryTemplates (max = 1000, maxBytes = MEMO_MAX_BYTES): QueryTemplates {
  // false: that rest does not parse (or keys oddly); its queries take parseQuery, which reports why.
  const templates = new LRUCache<string, Template | false>({
    max,
    maxSize: maxBytes,
    sizeCalculation: (template, slot) => template === false ? slot.length + 64 : memoSize(slot, template.options) + template.before.length + template.after.length
  })

  function build (rest: string, ctx: ParseContext): Template | false {
    let options: ExtractOptions
    try {
      options = parseQuery(`${rest}${rest === '' ? '' : '&'}url=${encodeURIComponent(STAND_IN)}`, ctx)
    } catch {
      return false
    }
    if (options.url !== STAND_IN) return false
    const json = keyJsonOf(options)
    const at = json.indexOf(STAND_IN_MEMBER)
    if (at === -1 || json.indexOf(STAND_IN_MEMBER, at + 1) !== -1) return false
    return { options: deepFreeze(options), before: json.slice(0, at), after: json.slice(at + STAND_IN_MEMBER.length) }
  }

  return function templated (raw, ctx) {
    if (!URL_STANDS_ALONE || raw.length > MAX_MEMO_QUERY) return undefined
    const split = splitUrl(raw)
    if (split === undefined) return undefined
    let forwarded = ''
    for (const [name, value] of apiHeaders(ctx.headers)) forwarded += `${name}\u0000${value}\u0000`
    const slot = `${ctx.plan}\u0001${ctx.maxTimeout}\u0001${split.rest}\u0001${forwarded}`
    let template = templates.get(slot)
    if (template === undefined) {
      template = build(split.rest, ctx)
      templates.set(slot, template)
    }
    if (template === false) return undefined
    let url: string
    try {
      url = readUrl(rootKid(readTree(`url=${split.value}`, ROOT_SHAPE), 'url'))
    } catch {
      return undefined
    }
    // The same members in the same order as parseQuery's; every member but `url` is the template's, frozen already.
    const options = Object.freeze({ ...template.options, url })
    return { options, cacheKey: sha256(`${template.before}"url":${JSON.stringify(url)}${template.after}`) }
  }
}
