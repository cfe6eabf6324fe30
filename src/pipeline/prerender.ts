// prerender=auto (docs/api.md §3.6): a plain GET unless something needs the browser, and the browser takes
// over when the GET fails or its HTML looks client-rendered. Pure decisions, no I/O.
import type { ExtractOptions } from '../schemas/options.ts'
import { PAGE_READERS } from '../schemas/derived.ts'
import { groupOptions, type OptionGroups } from '../schemas/option-groups.ts'
import { PAGE_STEPS } from '../browser/steps/index.ts'
import { PRODUCERS } from '../browser/producers/index.ts'
import { ENRICHERS } from './enrichers/index.ts'
import { loadOptionsOf } from './page-options.ts'

/**
 * Whether anything asked for needs a real browser, whatever `prerender` says: said by the units that do the work (a
 * page step's, a producer's or an enricher's `needsBrowser`), not by a second list. The parameter table's `browser`
 * notes, which the docs show, are held against this in test/unit/browser-needs.test.ts.
 */
export function needsBrowser (options: ExtractOptions, groups: OptionGroups = groupOptions(options)): boolean {
  const { outputs } = groups
  if (PRODUCERS.some((producer) => producer.needsBrowser && producer.settings(outputs) !== false)) return true
  if (ENRICHERS.some((enricher) => enricher.needsBrowser?.(outputs) === true)) return true
  const load = loadOptionsOf(groups)
  return PAGE_STEPS.some((step) => step.needsBrowser === true ? step.applies(load) : step.needsBrowser?.(load) === true)
}

/** Whether anything asked for reads the loaded page (the table's `readsPage` tests); if not, nothing is fetched. */
export function readsPage (options: ExtractOptions): boolean {
  return PAGE_READERS.some(({ when }) => when(options))
}

export type LoadMode = 'fetch' | 'prerender' | 'auto'

/** How the page will be loaded first: always the browser, never, or a GET that may hand over. */
export function loadModeOf (options: ExtractOptions, groups: OptionGroups = groupOptions(options)): LoadMode {
  if (options.prerender === true || needsBrowser(options, groups)) return 'prerender'
  if (options.prerender === false) return 'fetch'
  return 'auto'
}

/** Reads at most this much of the HTML for the heuristics: enough for any head and a body's start. */
const SCAN_BYTES = 512 * 1024

/**
 * Whether the HTML looks rendered by JavaScript in the browser: custom elements (hyphenated tags outside
 * svg and math), a body holding scripts but no text, or no <title> and no og:/twitter: tags at all.
 */
export function looksClientRendered (html: string): boolean {
  const doc = html.length > SCAN_BYTES ? html.slice(0, SCAN_BYTES) : html
  const withoutForeign = doc
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/<(svg|math)\b[\s\S]*?<\/\1\s*>/gi, '')
  if (/<[a-z][a-z0-9]*-[a-z0-9-]*(?=[\s/>])/i.test(withoutForeign)) return true

  const hasTitle = /<title\b[^>]*>\s*[^<\s][^<]*<\/title>/i.test(doc)
  const hasSocial = /<meta\b[^>]*\b(property|name)\s*=\s*["']?(og|twitter):/i.test(doc)
  if (!hasTitle && !hasSocial) return true

  const body = /<body\b[^>]*>([\s\S]*)/i.exec(doc)?.[1]
  if (body !== undefined && /<script\b/i.test(body)) {
    const text = body
      .replace(/<(script|style|noscript|template)\b[\s\S]*?<\/\1\s*>/gi, '')
      .replace(/<[^>]*>/g, '')
      .replace(/&nbsp;|\s+/g, '')
    if (text === '') return true
  }
  return false
}
