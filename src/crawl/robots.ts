// robots.txt for the user agent `pagecast`, read with robots-parser (a maintained implementation of RFC 9309's
// matching: groups, `*` and `$`, longest match wins, Allow over Disallow on a tie), fetched through the guarded
// client and kept per origin for the life of one cache (one job, or one map request).
import robotsParserModule from 'robots-parser'
import type { CrawlFetch, RobotsView } from './types.ts'

// The package is CommonJS (`module.exports = function`) while its typings declare an ES default export: under
// NodeNext TypeScript types the default import as the module object, Node gives the function itself.
type RobotsParser = typeof robotsParserModule.default
const robotsParser = robotsParserModule as unknown as RobotsParser

/** The product token robots.txt groups are matched against. */
export const ROBOTS_USER_AGENT = 'pagecast'
/** Bytes of robots.txt read (RFC 9309 §2.5: a crawler must parse at least 500 KiB). */
export const ROBOTS_MAX_BYTES = 512 * 1024

/** No rule: every URL allowed (robots.txt missing, 4xx, or ignored). */
export const ALLOW_ALL: RobotsView = Object.freeze({ allows: () => true, sitemaps: Object.freeze([]) as readonly string[], crawlDelay: undefined })
/** Every URL refused: robots.txt unreachable (5xx, network failure), RFC 9309 §2.3.1.4. */
export const DISALLOW_ALL: RobotsView = Object.freeze({ allows: () => false, sitemaps: Object.freeze([]) as readonly string[], crawlDelay: undefined })

/** The view of one robots.txt body served for `robotsUrl`. */
export function parseRobots (robotsUrl: string, text: string): RobotsView {
  const robots = robotsParser(robotsUrl, text)
  const sitemaps = robots.getSitemaps().filter((s) => /^https?:\/\//i.test(s))
  const delay = robots.getCrawlDelay(ROBOTS_USER_AGENT)
  return {
    // robots-parser answers undefined for a URL of another origin; the cache never asks it about one.
    allows: (url) => robots.isAllowed(url, ROBOTS_USER_AGENT) !== false,
    sitemaps,
    crawlDelay: typeof delay === 'number' && Number.isFinite(delay) ? delay : undefined
  }
}

/** What the status of a robots.txt fetch means: read it, no rules, or refuse everything. */
export function robotsOutcome (statusCode: number): 'parse' | 'allow-all' | 'disallow-all' {
  if (statusCode >= 200 && statusCode < 300) return 'parse'
  if (statusCode >= 400 && statusCode < 500) return 'allow-all'
  return 'disallow-all'
}

export interface RobotsCache {
  /** The robots.txt rules of `url`'s origin, fetched once per origin (concurrent callers share the fetch). */
  forUrl (url: string, signal: AbortSignal): Promise<RobotsView>
}

export interface RobotsCacheOptions {
  fetch: CrawlFetch
  /** Called once per origin whose robots.txt could not be read (the job may log it). */
  onFailure?: (origin: string, err: unknown) => void
}

export function createRobotsCache (options: RobotsCacheOptions): RobotsCache {
  const byOrigin = new Map<string, Promise<RobotsView>>()

  async function load (origin: string, signal: AbortSignal): Promise<RobotsView> {
    const robotsUrl = `${origin}/robots.txt`
    try {
      const res = await options.fetch(robotsUrl, { signal, maxBytes: ROBOTS_MAX_BYTES, headers: { accept: 'text/plain,*/*;q=0.5' } })
      const outcome = robotsOutcome(res.statusCode)
      if (outcome === 'parse') return parseRobots(robotsUrl, res.body.toString('utf8'))
      return outcome === 'allow-all' ? ALLOW_ALL : DISALLOW_ALL
    } catch (err) {
      options.onFailure?.(origin, err)
      // The caller's own deadline is not the site's fault: let it through rather than cache a verdict.
      if (signal.aborted) throw err
      // Unreachable (network failure, refused address, timeout of its own): RFC 9309 says assume complete disallow.
      return DISALLOW_ALL
    }
  }

  return {
    forUrl (url, signal) {
      const origin = new URL(url).origin
      let view = byOrigin.get(origin)
      if (view === undefined) {
        view = load(origin, signal)
        byOrigin.set(origin, view)
        // A fetch cut by the caller's signal is not remembered: the next caller tries again.
        view.catch(() => { if (byOrigin.get(origin) === view) byOrigin.delete(origin) })
      }
      return view
    }
  }
}
