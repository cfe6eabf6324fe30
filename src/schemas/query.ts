// parseQuery: a raw query string into one typed, normalized ExtractOptions, following the check order
// of docs/api.md §1.4 for its part:
//   (4) parsing of the raw query          -> EINVALQUERY (EINVALDATA for bad JSON under `data`)
//   (5) plan gates on the free listener   -> ETTL, ESTTL, ECACHEKEY, EHEADERS, EPROXY, EFILENAME
//   (6) value validation                  -> EINVALURL, EINVALTTL, ..., EINVALQUERY for the rest
// It throws nothing but AppError. The literal address checks of §10 (EFORBIDDENURL) need the server's
// ALLOW_PRIVATE_HOSTS and are left to the caller, on `url` and `proxy`, before the cache lookup.
// Every step is driven by the parameter table (parameters.ts): the grammar's root shape, the gates, and
// one reader per option, run in table order.
import type { ExtractOptions } from './options.ts'
import { readTree } from './grammar.ts'
import type { Node } from './grammar.ts'
import { fail } from './messages.ts'
import { rootKid } from './readers.ts'
import { apiHeaders } from './read-emulation.ts'
import { KNOWN_ROOT, OPTION_NAMES, PLAN_GATES, ROOT_SHAPE, specOf } from './derived.ts'
import type { ParseContext } from './param-types.ts'

export type { ParseContext }

function checkPlanGates (root: Node, ctx: ParseContext): void {
  if (ctx.plan !== 'free') return
  for (const { name, gate } of PLAN_GATES) {
    if (gate.requestHeaderPrefix !== undefined) {
      const fromHeader = apiHeaders(ctx.headers)[0]
      if (fromHeader !== undefined) {
        fail(gate.code, `${gate.requestHeaderPrefix}${fromHeader[0]}`, 'Forwarding headers with `x-api-header-*` needs the pro plan.')
      }
    }
    if (rootKid(root, name) !== undefined) fail(gate.code, name, `The \`${name}\` parameter needs the pro plan.`)
  }
}

/**
 * Parses and validates a raw query string (without or with its leading `?`) into ExtractOptions,
 * following docs/api.md §1.4 steps 4-6. Throws only AppError.
 */
export function parseQuery (rawQuery: string, ctx: ParseContext): ExtractOptions {
  // (4) parsing
  const root = readTree(rawQuery, ROOT_SHAPE)
  // (5) plan gates
  checkPlanGates(root, ctx)
  // (6) values, in table order: a reader may use the options read before it (`viewport` the device, ...).
  const done: Partial<Record<keyof ExtractOptions, unknown>> = {}
  for (const name of OPTION_NAMES) {
    const spec = specOf(name)
    const node = spec.query === false ? undefined : rootKid(root, name)
    const value = spec.read(node, { ctx, root, done: done as Partial<ExtractOptions>, knownRoot: KNOWN_ROOT, name })
    // Optional members are left out, never set to undefined.
    if (value !== undefined) done[name] = value
  }
  return done as ExtractOptions
}
