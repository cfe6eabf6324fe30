// `data` rules (docs/api.md §3.3) as one component: built once with the guarded probe, run once per computation on
// the document parsed for it (document.ts). Media-typed values are checked like the metadata's image and logo
// candidates: resolved against the page, probed once per URL under the request's signal (so within its deadline
// and through the address guard), or, with `ping.<kind>=false`, returned unchecked as `{url, type}`.
import type { Logger } from 'pino'
import type { Probe } from '../net/types.ts'
import type { PingOptions, Rule } from '../schemas/options.ts'
import type { Evaluated } from '../browser/producers/index.ts'
import { probeMediaObject, resolveMediaUrl, toUncheckedMediaObject, type MediaKind, type MediaObject } from '../media/objects.ts'
import type { TargetDocument } from './document.ts'
import { runRules } from './rules.ts'

export { parseTarget, parsedHtmlOf, type TargetDocument } from './document.ts'
export { toMarkdown } from './markdown.ts'

/** Distinct media URLs probed for the rules of one request; further candidates count as failing. */
export const MAX_RULE_PROBES = 64

export interface RuleInput {
  data: Readonly<Record<string, readonly Rule[]>>
  document: TargetDocument
  evaluated: Readonly<Record<string, Evaluated>> | undefined
  ping: Readonly<PingOptions>
  /** The request's deadline; every probe gets it. */
  signal: AbortSignal
}

export interface RuleRunner {
  run: (input: RuleInput) => Promise<Record<string, unknown>>
}

/** `maxBytes`: the most text the rules of one request may read (MAX_RESPONSE_BYTES, rules.ts). */
export function createRuleRunner ({ probe, log, maxBytes }: { probe: Probe, log?: Logger, maxBytes: number }): RuleRunner {
  async function run (input: RuleInput): Promise<Record<string, unknown>> {
    const { document, ping, signal } = input
    const checks = new Map<string, Promise<MediaObject | null>>()
    let probes = 0
    const media = async (value: string, kind: MediaKind): Promise<MediaObject | null> => {
      const url = resolveMediaUrl(value, document.url, kind)
      if (url === null) return null
      if (!ping[kind]) return toUncheckedMediaObject(url, kind)
      const key = `${kind} ${url}`
      const known = checks.get(key)
      if (known !== undefined) return await known
      if (!/^data:/i.test(url) && ++probes > MAX_RULE_PROBES) {
        log?.debug({ url, kind }, 'rule media candidate skipped: probe budget spent')
        return null
      }
      const pending = probeMediaObject(url, kind, { probe, signal, ...(log === undefined ? {} : { log }) })
      checks.set(key, pending)
      return await pending
    }
    return await runRules(input.data, { document, evaluated: input.evaluated, signal, maxBytes, types: { url: document.url, media } })
  }
  return { run }
}
