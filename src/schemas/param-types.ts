// What one entry of the parameter table (parameters.ts) declares: everything the service needs to know
// about a parameter, so that the grammar, the plan gates, the cache key, `needsBrowser`, the option groups,
// /openapi.json, /docs and docs/reference/parameters.md are all derived from the same line.
import type { ErrorCode } from '../errors.ts'
import type { Node, ShapeSpec } from './grammar.ts'
import type { ExtractOptions } from './options.ts'
import type { ParamDoc } from './param-doc.ts'
import type { Plan } from '../config.ts'

export interface ParseContext {
  plan: Plan
  /** The request's headers (Node's IncomingHttpHeaders or any record). */
  headers: Record<string, string | string[] | undefined>
  /** MAX_TIMEOUT in ms: the ceiling of `timeout`, and its default. */
  maxTimeout: number
}

/** Who reads an option: the layer that receives it (docs/api.md §3 groups them differently, by topic). */
export const GROUPS = ['target', 'emulation', 'steps', 'outputs', 'cache', 'reply'] as const
export type Group = (typeof GROUPS)[number]

/**
 * How an option joins the cache key (docs/api.md §7): as it is; not at all (it never changes the output);
 * hashed whole (`proxy`) or value by value (`headers`), so no secret sits in the key in clear; only when
 * `function` is set (its named arguments); or only when not an empty list (an option added later, whose default
 * must not change the keys of entries already stored).
 */
export type CacheKeyRule = 'keep' | 'leave-out' | 'hash' | 'hash-values' | 'with-function' | 'unless-empty'

/** What a reader gets besides its own node. */
export interface ReadInput {
  readonly ctx: ParseContext
  /** The whole tree, for the parameters that read a root alias (`stream`, the legacy screenshot/pdf names). */
  readonly root: Node
  /** The options read so far, in table order. */
  readonly done: Readonly<Partial<ExtractOptions>>
  /** Every root name the grammar knows; the others are `function` arguments. */
  readonly knownRoot: ReadonlySet<string>
  /** The option's name (the table key), which is also its name in messages. */
  readonly name: string
}

export interface ParamSpec<K extends keyof ExtractOptions> {
  /** The layer that receives the option. */
  readonly group: Group
  /** `false` for an option that is no query parameter (`args`, built from the unknown ones). */
  readonly query?: false
  /** How its key and sub-keys are read (docs/api.md §2); sub-keys carry their own docs. */
  readonly shape: ShapeSpec
  /** Other root names this parameter reads: an alias (`stream`) or the legacy names of its sub-keys. */
  readonly aliases?: Readonly<Record<string, ShapeSpec>>
  /** Reads and validates the value (errors through messages.ts); undefined leaves the option out. */
  readonly read: (node: Node | undefined, input: ReadInput) => ExtractOptions[K] | undefined
  /** Pro only: the code the free listener answers with; `requestHeaderPrefix` gates request headers too. */
  readonly gate?: { readonly code: ErrorCode, readonly requestHeaderPrefix?: string }
  readonly cacheKey: CacheKeyRule
  /** When the option forces the headless browser (`prerender=auto`, docs/api.md §3.6), and the docs' word for it. */
  readonly browser?: { readonly when: (options: ExtractOptions) => boolean, readonly note?: string }
  /** When the option reads the loaded page's document, so the page is loaded (and parsed) even with `meta=false`. */
  readonly readsPage?: (options: ExtractOptions) => boolean
  readonly doc: ParamDoc
}

/** The table's type: one entry per ExtractOptions member, each reading exactly that member's type. */
export type ParamTable = { readonly [K in keyof ExtractOptions]-?: ParamSpec<K> }
