// What the pool records about the job running on a lease, and how its answer is decided. The egress proxy and
// the page guards fill the record; nothing here touches a browser.
//
// Refusal attribution: every context has its own egress proxy, so each refusal belongs to the one job using it.
// A refusal fails the job only when it hit the job's own main-frame navigation (any redirect hop, meta refresh
// or script navigation); refused sub-requests just fail inside the page.
import type { Adblocker } from '../../adblock/index.ts'
import type { EgressRefusal } from '../egress-proxy.ts'
import { egressKey } from '../egress-proxy.ts'
import { refusalError, toBrowserError } from '../errors.ts'
import { abortError } from '../../util/abort.ts'

export interface JobRecord {
  refusals: EgressRefusal[]
  /** URLs of main-frame navigation requests (every hop), without their hash. */
  navigations: string[]
  /** Main-frame navigation requests that failed or got the proxy's answer instead of the target's. */
  failedNavigations: string[]
  /** Origin-scoped forwarded headers (lower-case names); empty when none. */
  scopedHeaders: Record<string, string>
  /** The origin of the job's first main-frame document request, once seen (the origin the headers go to). */
  targetOrigin: string | undefined
  /** Aborts when the caller's signal does, when the browser or page dies, or when the pool closes. */
  controller: AbortController
  /** The filter engine when the job has `adblock` on; undefined when it is off. */
  adblock: Adblocker | undefined
  /** Sub-requests the filters blocked or answered with a neutered resource. */
  blocked: number
}

export function createJobRecord (
  scopedHeaders: Record<string, string>, controller: AbortController, adblock: Adblocker | undefined = undefined
): JobRecord {
  return { refusals: [], navigations: [], failedNavigations: [], scopedHeaders, targetOrigin: undefined, controller, adblock, blocked: 0 }
}

export function withoutHash (url: string): string {
  const hash = url.indexOf('#')
  return hash === -1 ? url : url.slice(0, hash)
}

/** The refusal of this job's main-frame navigation, if one was refused. */
export function refusedNavigation (job: JobRecord): EgressRefusal | undefined {
  for (const refusal of job.refusals) {
    const key = refusal.channel === 'scheme' ? undefined : `${refusal.host}:${refusal.port}`
    for (const url of job.navigations) {
      const sameUrl = withoutHash(refusal.url) === url
      const sameTunnel = refusal.channel === 'tunnel' && key !== undefined && egressKey(url) === key
      if (!sameUrl && !sameTunnel) continue
      // A block is a property of the address; "unreachable" counts only when this navigation itself failed.
      if (refusal.kind === 'blocked' || job.failedNavigations.includes(url)) return refusal
    }
  }
  return undefined
}

export type Outcome<T> = { ok: true, value: T } | { ok: false, error: unknown }

/** How the job ended: its own value or error, or the abort reason as soon as `signal` aborts. Never rejects. */
export function outcomeOf<T> (job: Promise<T>, signal: AbortSignal): Promise<Outcome<T>> {
  return new Promise<Outcome<T>>((resolve) => {
    const onAbort = (): void => { resolve({ ok: false, error: signal.reason }) }
    signal.addEventListener('abort', onAbort, { once: true })
    if (signal.aborted) onAbort()
    job.then(
      (value) => { signal.removeEventListener('abort', onAbort); resolve({ ok: true, value }) },
      (error: unknown) => { signal.removeEventListener('abort', onAbort); resolve({ ok: false, error }) }
    )
  })
}

/**
 * The caller's answer: a refused main navigation is EFORBIDDENURL / EINVALURL whatever the job returned; else the
 * job's value; else the abort's error when the job was aborted; else its own error, mapped to a public code.
 */
export function resultOf<T> (job: JobRecord, outcome: Outcome<T>): T {
  const refused = refusedNavigation(job)
  if (refused !== undefined) throw refusalError(refused)
  if (outcome.ok) return outcome.value
  if (job.controller.signal.aborted) throw abortError(job.controller.signal)
  throw toBrowserError(outcome.error, 'job')
}
