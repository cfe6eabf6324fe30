// The oEmbed provider registry (docs/api.md §3.4): the providers.json of oembed.com, bundled through the
// `oembed-providers` npm package (published from the registry's own repository, MIT), read from disk once per
// context and never downloaded at run time. A page URL is matched against each endpoint's URL schemes; the first
// provider in the file's order whose scheme matches gives the endpoint.
import { createRequire } from 'node:module'

/** One provider of the registry, as providers.json writes it. */
export interface OembedProvider {
  provider_name: string
  provider_url?: string
  endpoints: Array<{
    /** URL schemes with `*` wildcards; absent when the provider is found by discovery only. */
    schemes?: string[]
    /** The endpoint; `{format}` stands for `json` or `xml` where the provider puts the format in the path. */
    url: string
    discovery?: boolean
    formats?: string[]
  }>
}

export interface RegistryMatch {
  provider: string
  /** The endpoint URL as the registry writes it, `{format}` included where the provider has it. */
  endpoint: string
}

export interface OembedRegistry {
  /** The endpoint for a page URL, or null when no provider claims it. */
  match (pageUrl: string): RegistryMatch | null
  readonly size: number
}

interface CompiledScheme {
  pattern: RegExp
  provider: string
  endpoint: string
}

/** The registry shipped with the service (node_modules/oembed-providers/providers.json), read when called. */
export function bundledProviders (): readonly OembedProvider[] {
  const require = createRequire(import.meta.url)
  const providers: unknown = require('oembed-providers/providers.json')
  return Array.isArray(providers) ? providers as OembedProvider[] : []
}

function escapeRegExp (text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}

/**
 * A scheme as a regular expression over a URL without its scheme. `*` in the host stands for a run of host
 * characters (so `https://*.youtube.com/*` cannot match `https://evil.test/.youtube.com/`), anywhere after it for
 * anything. `http` and `https` are matched alike: most schemes were written for `http` and the sites moved to
 * `https` since. Other schemes (`spotify:*`) name no web page and are left out.
 */
export function compileScheme (scheme: string): RegExp | null {
  const match = /^https?:\/\/([^/?#]*)(.*)$/i.exec(scheme.trim())
  if (match === null) return null
  const host = (match[1] ?? '').toLowerCase()
  const rest = match[2] ?? ''
  if (host === '') return null
  const hostPattern = host.split('*').map(escapeRegExp).join('[a-z0-9.-]*')
  // A scheme with a bare host (`https://example.com`) matches the site's root with or without its slash.
  const restPattern = rest === '' ? '/?' : rest.split('*').map(escapeRegExp).join('.*')
  return new RegExp(`^${hostPattern}${restPattern}$`)
}

export function createRegistry (providers: readonly OembedProvider[]): OembedRegistry {
  const compiled: CompiledScheme[] = []
  for (const provider of providers) {
    if (typeof provider !== 'object' || provider === null || !Array.isArray(provider.endpoints)) continue
    for (const endpoint of provider.endpoints) {
      if (typeof endpoint?.url !== 'string' || !Array.isArray(endpoint.schemes)) continue
      const url = endpoint.url.trim()
      if (!/^https?:\/\//i.test(url)) continue
      for (const scheme of endpoint.schemes) {
        const pattern = typeof scheme === 'string' ? compileScheme(scheme) : null
        if (pattern !== null) compiled.push({ pattern, provider: String(provider.provider_name), endpoint: url })
      }
    }
  }
  return {
    size: compiled.length,
    match (pageUrl) {
      let url: URL
      try {
        url = new URL(pageUrl)
      } catch {
        return null
      }
      if (url.protocol !== 'http:' && url.protocol !== 'https:') return null
      // Matched on host, port, path and query, without the scheme and the fragment.
      const subject = `${url.host}${url.pathname}${url.search}`
      const found = compiled.find((entry) => entry.pattern.test(subject))
      return found === undefined ? null : { provider: found.provider, endpoint: found.endpoint }
    }
  }
}
