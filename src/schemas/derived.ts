// What the service derives from the parameter table (parameters.ts): the grammar's root shape, the plan
// gates, the cache-key rules and what needs the browser. Nothing here names a parameter.
import { ERROR_CODES } from '../errors.ts'
import type { ShapeSpec } from './grammar.ts'
import type { ExtractOptions } from './options.ts'
import { PARAMETERS, REJECTED_ROOT, SIGNED_LINK_ROOT } from './parameters.ts'
import type { CacheKeyRule, ParamSpec, ParamTable } from './param-types.ts'
import { deepFreeze } from '../util/freeze.ts'

export type OptionName = keyof ExtractOptions

const TABLE: ParamTable = PARAMETERS

/** The options in table order, which is the order they are read in (so the first error is always the same). */
export const OPTION_NAMES = Object.keys(PARAMETERS) as OptionName[]

/** The entry of an option, typed for any name. */
export function specOf (name: OptionName): ParamSpec<OptionName> {
  return TABLE[name] as ParamSpec<OptionName>
}

function buildRoot (): ShapeSpec {
  const keys: Record<string, ShapeSpec> = {}
  for (const name of OPTION_NAMES) {
    const spec = specOf(name)
    if (spec.query !== false) keys[name] = spec.shape
  }
  for (const name of OPTION_NAMES) Object.assign(keys, specOf(name).aliases)
  Object.assign(keys, REJECTED_ROOT, SIGNED_LINK_ROOT)
  return { keys }
}

/** The shape of the whole query: every parameter, its aliases, the refused names and a signed link's. */
// The shapes are cyclic (rules nest through `attr`, settings through themselves); deepFreeze walks cycles.
export const ROOT_SHAPE: ShapeSpec = deepFreeze(buildRoot())

/** Every root name the grammar knows; the others are unknown (and `function` arguments). */
export const KNOWN_ROOT: ReadonlySet<string> = new Set(Object.keys(ROOT_SHAPE.keys ?? {}))

/** The pro-only parameters, checked in the order of the error catalog (docs/api.md §11). */
export const PLAN_GATES: ReadonlyArray<{ name: OptionName, gate: NonNullable<ParamSpec<OptionName>['gate']> }> = OPTION_NAMES
  .flatMap((name) => {
    const gate = specOf(name).gate
    return gate === undefined ? [] : [{ name, gate }]
  })
  .sort((a, b) => ERROR_CODES.indexOf(a.gate.code) - ERROR_CODES.indexOf(b.gate.code))

/** How each option joins the cache key; a member the table does not know joins as it is. */
export const CACHE_KEY_RULES: ReadonlyMap<string, CacheKeyRule> = new Map(OPTION_NAMES.map((name) => [name, specOf(name).cacheKey]))

/** The options that read the loaded page's document, each with its test. */
export const PAGE_READERS: ReadonlyArray<{ name: OptionName, when: (options: ExtractOptions) => boolean }> = OPTION_NAMES
  .flatMap((name) => {
    const readsPage = specOf(name).readsPage
    return readsPage === undefined ? [] : [{ name, when: readsPage }]
  })

/** The options that can force the headless browser, each with its test. */
export const BROWSER_NEEDS: ReadonlyArray<{ name: OptionName, when: (options: ExtractOptions) => boolean }> = OPTION_NAMES
  .flatMap((name) => {
    const browser = specOf(name).browser
    return browser === undefined ? [] : [{ name, when: browser.when }]
  })
