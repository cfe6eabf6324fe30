// Whether metascraper's URL matching runs on RE2, the linear-time engine. url-regex-safe (through
// @metascraper/helpers) loads the native `re2` addon when it can and otherwise falls back, silently, to
// backtracking RegExp; server.ts says at start which one is in use (docs/operations.md#installing).
import { createRequire } from 'node:module'

export type Re2Status = { active: true } | { active: false, reason: string }

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
