// The one decision of a crawl: may this URL, found at this depth, be fetched? Pure: the rules are compiled and the
// robots.txt of the URL's origin already read (robots.ts) by the caller.
import { canonicalUrl, relationTo, startDirectory } from './url.ts'
import type { CompiledRules } from './rules.ts'
import type { Admission, RobotsView } from './types.ts'

/**
 * Whether `url` (absolute, or relative to `base`), discovered at `depth` (the start URL and sitemap URLs are 0, a
 * link on a depth-n page is n+1), is admitted by the rules; when it is, the canonical URL to fetch. The checks run
 * in this order and the first failing one is the reason: scheme, site (external, subdomain), directory, depth,
 * excludePaths, includePaths, robots.txt — so a `robots` refusal names a URL the crawl would otherwise have fetched.
 * The start URL itself is bound by robots.txt only. `robots` undefined (or ignoreRobotsTxt) means no robots.txt rule.
 */
export function admit (url: string, depth: number, compiled: CompiledRules, robots?: RobotsView, base?: string): Admission {
  const { rules, start } = compiled
  const canonical = canonicalUrl(url, { ...(base === undefined ? {} : { base }), ignoreQuery: rules.ignoreQueryParameters })
  if (canonical === undefined) return { ok: false, reason: 'invalid' }
  const target = new URL(canonical)
  const isStart = canonical === canonicalUrl(rules.start, { ignoreQuery: rules.ignoreQueryParameters })
  if (!isStart) {
    const relation = relationTo(start, target)
    if (relation === 'external' && !rules.allowExternalLinks) return { ok: false, reason: 'external' }
    if (relation === 'subdomain' && !rules.allowSubdomains && !rules.allowExternalLinks) return { ok: false, reason: 'subdomain' }
    if (relation === 'same' && !rules.crawlEntireDomain && !target.pathname.startsWith(startDirectory(start))) {
      return { ok: false, reason: 'outside' }
    }
    if (rules.maxDiscoveryDepth !== undefined && depth > rules.maxDiscoveryDepth) return { ok: false, reason: 'depth' }
    const subject = rules.regexOnFullURL ? canonical : target.pathname
    if (compiled.exclude.some((re) => re.test(subject))) return { ok: false, reason: 'excluded' }
    if (compiled.include.length > 0 && !compiled.include.some((re) => re.test(subject))) return { ok: false, reason: 'not-included' }
  }
  if (!rules.ignoreRobotsTxt && robots !== undefined && !robots.allows(canonical)) return { ok: false, reason: 'robots' }
  return { ok: true, url: canonical }
}
