// One page of a batch scrape or crawl job, on whichever instance the queue gives it to (docs/jobs.md): the job's
// owner becomes the caller again (its free client, or its tenant by name), the page is scraped by scrapeDocument
// (the guard, cache, single flight, browser pool and quota of `GET /`), and a crawl's page offers its links (and, for
// the start page, the site's sitemaps) through the crawl's rules and robots.txt (src/crawl). The engine admits each
// offered URL once per job (src/jobs).
import { setTimeout as sleep } from 'node:timers/promises'
import type { AppContext } from '../context.ts'
import type { Caller, Tenant } from '../tenants/types.ts'
import { isAppError } from '../errors.ts'
import { compileRules, createMemoryFrontier, createRobotsCache, followsLinks, keepFinal, offer, seed, seenKey, type CompiledRules, type FrontierEntry, type FrontierStore, type RobotsCache } from '../crawl/index.ts'
import type { Candidate, JobOwner, JobRecord, PageHandler, PageResult } from '../jobs/index.ts'
import { readScrapeRequest } from './request.ts'
import { scrapeDepsOf, scrapeDocument } from './scrape.ts'
import type { StoredJobRequest } from './jobs-request.ts'

/** Jobs whose compiled rules and robots.txt views this process keeps (least recently used first out). */
const KEPT_JOBS = 64

interface CrawlState { compiled: CompiledRules, robots: RobotsCache }

/** The tenant a pro job runs as: looked up again by name on every page, so a removed tenant's job stops. */
export type TenantByName = (name: string) => Tenant | undefined

export function callerOfOwner (owner: JobOwner, tenantByName: TenantByName): Caller | undefined {
  if (owner.listener === 'free') return { listener: 'free', ...(owner.client === undefined ? {} : { client: owner.client }) }
  const tenant = owner.tenant === undefined ? undefined : tenantByName(owner.tenant)
  return tenant === undefined ? undefined : { listener: 'pro', tenant }
}

export function createPageHandler (ctx: AppContext, tenantByName: TenantByName): PageHandler {
  const deps = scrapeDepsOf(ctx)
  const crawls = new Map<string, CrawlState>()

  function crawlState (job: JobRecord, request: StoredJobRequest): CrawlState | undefined {
    if (request.rules === undefined) return undefined
    let state = crawls.get(job.id)
    if (state === undefined) {
      state = { compiled: compileRules(request.rules), robots: createRobotsCache({ fetch: ctx.http.fetchPage }) }
      if (crawls.size >= KEPT_JOBS) crawls.delete(crawls.keys().next().value ?? '')
    } else {
      crawls.delete(job.id)
    }
    crawls.set(job.id, state)
    return state
  }

  /** The URLs a crawl page offers: its links (below maxDiscoveryDepth) and, on the start page, the sitemaps' URLs. */
  async function discover (state: CrawlState, url: string, depth: number, links: readonly string[], signal: AbortSignal): Promise<Pick<PageResult, 'follow' | 'robotsBlocked'>> {
    const { compiled, robots } = state
    const { rules } = compiled
    // Claims are the engine's (atomic, across instances); here every admitted URL is only collected.
    const collector = createMemoryFrontier()
    const offerDeps = { compiled, robots, store: collector, signal }
    const robotsBlocked: string[] = []
    const entries: FrontierEntry[] = []
    if (depth === 0 && url === rules.start && rules.sitemap !== 'skip') {
      const seeded = await seed({ ...offerDeps, fetch: ctx.http.fetchPage })
      entries.push(...seeded.queued.filter(e => e.url !== rules.start))
      robotsBlocked.push(...seeded.robotsBlocked)
    }
    if (followsLinks(compiled) && (rules.maxDiscoveryDepth === undefined || depth < rules.maxDiscoveryDepth)) {
      const offered = await offer(links, depth + 1, offerDeps)
      entries.push(...offered.queued)
      robotsBlocked.push(...offered.robotsBlocked)
    }
    const follow: Candidate[] = entries.map(e => ({ key: seenKey(e.url, rules), url: e.url, depth: e.depth }))
    return { follow, robotsBlocked }
  }

  /**
   * Whether a crawl page that was redirected stays (keepFinal: the final URL passes the crawl's rules), and the key
   * of its final URL for the engine to claim once per job (src/jobs: claimFinal).
   */
  async function finalOf (state: CrawlState, task: { url: string, depth: number }, finalUrl: string, signal: AbortSignal): Promise<Pick<PageResult, 'finalKey' | 'dropped'>> {
    let finalKey: string | undefined
    // keepFinal marks the final URL's key seen when it differs from the page's: here that key is only noted.
    const noting: FrontierStore = { claim: async () => 'seen', markSeen: async (key) => { finalKey = key; return true } }
    if (!await keepFinal(task, finalUrl, { ...state, store: noting, signal })) return { dropped: true }
    return finalKey === undefined ? {} : { finalKey }
  }

  return async (job, task, signal) => {
    const request = job.request as unknown as StoredJobRequest
    const caller = callerOfOwner(job.owner, tenantByName)
    if (caller === undefined) return { error: { message: 'The tenant that started this job is no longer declared.', code: 'EAUTH' } }
    const state = job.kind === 'crawl' ? crawlState(job, request) : undefined
    // The start URL is the only one not admitted through offer(): robots.txt is asked here.
    if (state !== undefined && task.depth === 0 && task.url === state.compiled.rules.start && !state.compiled.rules.ignoreRobotsTxt) {
      const view = await state.robots.forUrl(task.url, signal)
      if (!view.allows(task.url)) return { error: { message: 'robots.txt disallows this URL for pagecast.' }, robotsBlocked: [task.url] }
    }
    if (request.delay !== undefined) await sleep(request.delay * 1000, undefined, { signal })
    const formats = (request.options.formats as unknown[] | undefined) ?? ['markdown']
    const wantsLinks = formats.includes('links')
    const options = state === undefined || wantsLinks ? request.options : { ...request.options, formats: [...formats, 'links'] }
    let document
    try {
      document = await scrapeDocument(deps, readScrapeRequest({ ...options, url: task.url }, request.version), caller, signal)
    } catch (err) {
      if (signal.aborted) throw err
      return { error: { message: (err as Error).message, ...(isAppError(err) ? { code: err.code } : {}) } }
    }
    if (state === undefined) return { document: { ...document } }
    const final = await finalOf(state, task, document.metadata.url, signal)
    if (final.dropped === true) return final
    const links = document.links ?? []
    if (!wantsLinks) delete document.links
    return { document: { ...document }, ...final, ...await discover(state, task.url, task.depth, links, signal) }
  }
}
