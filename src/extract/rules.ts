// Running `data` rules (docs/api.md §3.3) on the parsed document, in Node, whichever way the page was loaded.
// A field's rules are fallbacks: the first that gives a value that is not a miss after `type` wins, else the field
// is null. A rule reads its match (`selector`: the first selector whose match gives a value; `selectorAll`: every
// match of every selector, in document order, each element once, items that miss dropped), or the whole
// document; `attr` fallbacks are tried in order, and nested rules run per match with selectors relative to it.
// `evaluate` results come from the page (browser/producers/evaluate.ts); a throw there is a miss.
// Size: the text the rules read is counted as it is read; past `maxBytes` (MAX_RESPONSE_BYTES) the run stops with
// 400 ETOOLARGE, so rules such as `selectorAll=*` with `attr=outerHTML` cannot make an answer many times the page.
import { load, type CheerioAPI } from 'cheerio'
import { AppError } from '../errors.ts'
import type { Rule } from '../schemas/options.ts'
import type { Evaluated } from '../browser/producers/index.ts'
import type { TargetDocument } from './document.ts'
import { mainContentHtml } from './main-content.ts'
import { readAttr, type Scope, type Selection } from './read.ts'
import { applyType, isMiss, type TypeContext } from './types.ts'

/** selectorAll items are read this many at a time (media items are probed while others are read). */
const ITEM_CONCURRENCY = 8

export interface RuleRun {
  document: TargetDocument
  types: TypeContext
  /** `evaluate` outcomes by source; absent when the page was not rendered (the rule then misses). */
  evaluated: Readonly<Record<string, Evaluated>> | undefined
  signal: AbortSignal
  /** The most text the rules may read in all (MAX_RESPONSE_BYTES; counted in UTF-16 units, never more than bytes). */
  maxBytes: number
}

interface RunState extends RuleRun {
  /** The main content's document, built on first use. */
  main?: Scope
  /** Text read so far. */
  read: number
}

/** Counts what one `attr` read gave (strings, and the strings of a multiple select's value) against `maxBytes`. */
function count (value: unknown, state: RunState): void {
  if (typeof value === 'string') state.read += value.length
  else if (Array.isArray(value)) for (const item of value) if (typeof item === 'string') state.read += item.length
  if (state.read > state.maxBytes) {
    throw new AppError('ETOOLARGE', { data: { data: `The \`data\` rules read more than MAX_RESPONSE_BYTES (${state.maxBytes} bytes).` } })
  }
}

function mainScope (state: RunState): Scope {
  if (state.main === undefined) {
    const { document } = state
    const html = document.kind === 'html' ? mainContentHtml(document.source, document.url) : document.$('body').html() ?? ''
    const source = `<!doctype html><html><head></head><body>${html}</body></html>`
    let parsed: CheerioAPI | undefined
    state.main = {
      get $ () {
        parsed ??= load(source, { baseURI: document.url })
        return parsed
      },
      source
    }
  }
  return state.main
}

/** Matches of one selector inside the scope; an invalid selector matches nothing. */
function find (scope: Scope, selector: string): Selection | undefined {
  try {
    return (scope.node ?? (scope.$.root() as unknown as Selection)).find(selector)
  } catch {
    return undefined
  }
}

async function readMatch (rule: Rule, scope: Scope, state: RunState): Promise<unknown> {
  if (!Array.isArray(rule.attr)) {
    const nested: Record<string, unknown> = {}
    for (const [name, rules] of Object.entries(rule.attr)) nested[name] = await runField(rules, scope, state)
    return await applyType(nested, rule.type, state.types)
  }
  for (const attr of rule.attr) {
    const read = readAttr(scope, attr, state.document)
    count(read, state)
    const value = await applyType(read, rule.type, state.types)
    if (!isMiss(value)) return value
  }
  return null
}

async function readAll (rule: Rule, selectors: readonly string[], scope: Scope, state: RunState): Promise<unknown[]> {
  let matches: Selection | undefined
  for (const selector of selectors) {
    const found = find(scope, selector)
    // `add` keeps document order and each element once.
    if (found !== undefined) matches = matches === undefined ? found : matches.add(found) as Selection
  }
  const elements = matches?.toArray() ?? []
  const out: unknown[] = []
  for (let i = 0; i < elements.length; i += ITEM_CONCURRENCY) {
    state.signal.throwIfAborted()
    const batch = elements.slice(i, i + ITEM_CONCURRENCY)
    const values = await Promise.all(batch.map(async (element) => await readMatch(rule, { $: scope.$, node: scope.$(element) }, state)))
    for (const value of values) if (!isMiss(value)) out.push(value)
  }
  return out
}

async function runRule (rule: Rule, scope: Scope, state: RunState): Promise<unknown> {
  if (rule.evaluate !== undefined) {
    const outcome = state.evaluated?.[rule.evaluate]
    return outcome?.ok === true ? await applyType(outcome.value, rule.type, state.types) : null
  }
  if (state.document.kind === 'other') return null
  const base = rule.mainContent === true ? mainScope(state) : scope
  if (rule.selectorAll !== undefined) return await readAll(rule, rule.selectorAll, base, state)
  if (rule.selector !== undefined) {
    for (const selector of rule.selector) {
      const match = find(base, selector)?.first()
      if (match === undefined || match.length === 0) continue
      const value = await readMatch(rule, { $: base.$, node: match }, state)
      if (!isMiss(value)) return value
    }
    return null
  }
  return await readMatch(rule, base, state)
}

/** One field: its fallback rules in order; null when every rule misses. */
async function runField (rules: readonly Rule[], scope: Scope, state: RunState): Promise<unknown> {
  for (const rule of rules) {
    state.signal.throwIfAborted()
    const value = await runRule(rule, scope, state)
    if (!isMiss(value)) return value
  }
  return null
}

/** Every field of `data`, in the order they were given. */
export async function runRules (data: Readonly<Record<string, readonly Rule[]>>, run: RuleRun): Promise<Record<string, unknown>> {
  const state: RunState = { ...run, read: 0 }
  const { document } = run
  // The whole document's scope reads `$` only when a rule needs the tree.
  const scope: Scope = {
    get $ () { return document.$ },
    ...(document.kind === 'html' ? { source: document.source } : {})
  }
  const out: Record<string, unknown> = {}
  for (const [field, rules] of Object.entries(data)) out[field] = await runField(rules, scope, state)
  return out
}
