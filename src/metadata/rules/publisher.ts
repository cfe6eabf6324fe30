// publisher: after every document source, the registrable domain of the final URL (§9).
import { getDomain } from 'tldts'
import type { RuleBundle } from './types.ts'

/**
 * The registrable domain of a URL's host (`news.example.co.uk` -> `example.co.uk`), using the public suffix
 * list's private section too (`alice.github.io` stays `alice.github.io`). Hosts without one (IP literals,
 * single-label names) give the host itself; an unparseable URL gives null.
 */
export function registrableDomain (url: string): string | null {
  let hostname: string
  try {
    hostname = new URL(url).hostname
  } catch {
    return null
  }
  if (hostname === '') return null
  const bare = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname
  return getDomain(bare, { allowPrivateDomains: true }) ?? bare
}

export function publisherDomainRules (): RuleBundle {
  return {
    publisher: [({ url }) => registrableDomain(url) ?? undefined]
  }
}
