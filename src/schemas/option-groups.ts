// The options grouped by the layer that reads them: the target (where and how the page is loaded, with
// what budget), browser emulation, page steps, outputs, the cache entry and the reply. The membership is
// each parameter's `group` in the table (parameters.ts); the types and key lists below are derived from it,
// so a layer can be handed only its group.
import type { ExtractOptions } from './options.ts'
import { PARAMETERS } from './parameters.ts'
import { GROUPS } from './param-types.ts'
import type { Group } from './param-types.ts'

type Table = typeof PARAMETERS

/** The options of one group, computed from the table's `as const` literal. */
export type KeysOfGroup<G extends Group> = { [K in keyof Table]: Table[K]['group'] extends G ? K : never }[keyof Table]

export type TargetOptions = Pick<ExtractOptions, KeysOfGroup<'target'>>
export type EmulationOptions = Pick<ExtractOptions, KeysOfGroup<'emulation'>>
export type StepOptions = Pick<ExtractOptions, KeysOfGroup<'steps'>>
export type OutputOptions = Pick<ExtractOptions, KeysOfGroup<'outputs'>>
export type CacheOptions = Pick<ExtractOptions, KeysOfGroup<'cache'>>
export type ReplyOptions = Pick<ExtractOptions, KeysOfGroup<'reply'>>

export interface OptionGroups {
  target: Readonly<TargetOptions>
  emulation: Readonly<EmulationOptions>
  steps: Readonly<StepOptions>
  outputs: Readonly<OutputOptions>
  cache: Readonly<CacheOptions>
  reply: Readonly<ReplyOptions>
}

/** The option names of each group, in table order. */
export const GROUP_KEYS: { readonly [G in Group]: ReadonlyArray<KeysOfGroup<G>> } = (() => {
  const out = Object.fromEntries(GROUPS.map((group) => [group, [] as string[]])) as Record<Group, string[]>
  for (const [name, spec] of Object.entries(PARAMETERS)) out[spec.group].push(name)
  for (const group of GROUPS) Object.freeze(out[group])
  return Object.freeze(out) as unknown as { readonly [G in Group]: ReadonlyArray<KeysOfGroup<G>> }
})()

function pick<G extends Group> (options: ExtractOptions, group: G): Readonly<Pick<ExtractOptions, KeysOfGroup<G>>> {
  const out: Partial<Record<keyof ExtractOptions, unknown>> = {}
  // Optional members that are absent stay absent, as in ExtractOptions.
  for (const name of GROUP_KEYS[group]) if (Object.hasOwn(options, name)) out[name] = options[name]
  return Object.freeze(out) as Readonly<Pick<ExtractOptions, KeysOfGroup<G>>>
}

/** The options split by group, each a frozen pick (values are shared, not copied). */
export function groupOptions (options: ExtractOptions): OptionGroups {
  return {
    target: pick(options, 'target'),
    emulation: pick(options, 'emulation'),
    steps: pick(options, 'steps'),
    outputs: pick(options, 'outputs'),
    cache: pick(options, 'cache'),
    reply: pick(options, 'reply')
  }
}
