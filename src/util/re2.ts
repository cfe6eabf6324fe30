// Whether metascraper's URL matching runs on RE2, the linear-time engine. url-regex-safe (through
// @metascraper/helpers) loads the native `re2` addon when it can and otherwise falls back, silently, to
// backtracking RegExp; server.ts says at start which one is in use (docs/operations.md#installing). The
// fingerprint patterns of `insights.technologies` run on it too (src/insights/patterns.ts, loadRe2).
import { createRequire } from 'node:module'

export type Re2Status = { active: true } | { active: false, reason: string }

/** RE2's constructor: a RegExp look-alike that matches in linear time, and throws on lookarounds and backreferences. */
export type Re2Constructor = new (source: string, flags?: string) => RegExp

let loaded: { RE2: Re2Constructor | undefined } | undefined

/** The RE2 class, loaded once (as url-regex-safe loads it); undefined when the addon does not load. */
export function loadRe2 (): Re2Constructor | undefined {
  if (loaded === undefined) {
    try {
      const RE2 = createRequire(import.meta.url)('re2') as unknown
      loaded = { RE2: typeof RE2 === 'function' ? RE2 as Re2Constructor : undefined }
    } catch {
      loaded = { RE2: undefined }
    }
  }
  return loaded.RE2
}

/** Loads `re2` as url-regex-safe does (the same module, resolved from here) and says whether it works. */
export function re2Status (load: (id: string) => unknown = createRequire(import.meta.url)): Re2Status {
  try {
    const RE2 = load('re2')
    if (typeof RE2 !== 'function') return { active: false, reason: 're2 did not export a constructor' }
    return { active: true }
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err)
    return { active: false, reason: message.split('\n')[0] ?? message }
  }
}
