// What a tenant's plan allows of a parsed request (docs/api.md §16): `deny` (dotted prefixes: `insights` denies
// `insights.lighthouse`, and a given `insights` is refused when any parameter under it is denied) and `maxTtl`.
// Refused with 403 EPLAN, `data` naming the parameter.
import { AppError } from '../errors.ts'
import type { TenantPlan } from './types.ts'

/** The parameter names a raw `GET /` query gives (`headers` for forwarded headers, query or x-api-header-*). */
export function givenParameters (raw: string, headers: Readonly<Record<string, unknown>>): Set<string> {
  const names = new Set<string>()
  for (const name of new URLSearchParams(raw).keys()) names.add(name)
  for (const name in headers) if (name.startsWith('x-api-header-')) { names.add('headers'); break }
  return names
}

function overlaps (given: string, denied: string): boolean {
  return given === denied || given.startsWith(`${denied}.`) || denied.startsWith(`${given}.`)
}

/** Throws EPLAN when the plan denies a given parameter (before the values are checked: any value is refused). */
export function checkDenied (plan: TenantPlan, given: ReadonlySet<string>): void {
  if (plan.deny !== undefined) {
    for (const name of given) {
      const denied = plan.deny.find(d => overlaps(name, d))
      if (denied !== undefined) {
        throw new AppError('EPLAN', { data: { [name]: `The plan does not allow \`${denied}\`.` } })
      }
    }
  }
}

/** Throws EPLAN when `ttl` (in ms, given) is over the plan's maxTtl. */
export function checkMaxTtl (plan: TenantPlan, given: ReadonlySet<string>, ttl: number | undefined): void {
  if (plan.maxTtl !== undefined && given.has('ttl') && ttl !== undefined && ttl > plan.maxTtl) {
    throw new AppError('EPLAN', { data: { ttl: `The plan allows a ttl of at most ${plan.maxTtl} ms.` } })
  }
}
