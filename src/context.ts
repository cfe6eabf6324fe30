// The app context: every outside component, built once in dependency order and closed in reverse.
// server.ts is the composition root; tests build their own with real components.
import type { Logger } from 'pino'
import type { Config } from './config.ts'
import { createStore, type Store } from './store/index.ts'
import { createStorage, type Storage } from './storage/index.ts'
import { createCache, type Cache } from './cache/entries.ts'
import { createSingleFlight, type SingleFlight } from './cache/single-flight.ts'
import { createCachingResolver } from './net/resolver.ts'
import { createAddressGuard, type AddressGuard } from './net/guard.ts'
import { createHttpClient } from './net/http-client.ts'
import type { HttpClient, Probe } from './net/types.ts'
import { PROBE_BYTES } from './media/objects.ts'
import { createPageReader, type PageReader } from './reader/index.ts'
import { bundledProviders, createOembed, type OembedClient, type OembedProvider } from './oembed/index.ts'
import { loadTenantDirectory } from './tenants/directory.ts'
import type { TenantDirectory } from './tenants/types.ts'
import { createTenantLimits, type TenantLimits } from './tenants/limits.ts'
import { desktopUserAgent } from './schemas/devices.ts'
import { createBrowserPool, createLazyBrowserPool, type BrowserPoolOptions, type LazyBrowserPool } from './browser/pool/index.ts'
import { createAdblockLoader, type AdblockLoader } from './adblock/index.ts'
import { createLighthouseRunner, type LighthouseRunner } from './browser/lighthouse/index.ts'
import { createMetrics, type ServiceMetrics } from './metrics.ts'
import { serviceVersion } from './version.ts'
import { createPipeline, type Pipeline } from './pipeline/index.ts'
import { createJobs, type Jobs } from './jobs/index.ts'

export interface AppContext {
  config: Readonly<Config>
  log: Logger
  store: Store
  storage: Storage
  cache: Cache
  flights: SingleFlight
  guard: AddressGuard
  http: HttpClient
  /** Reads a loaded page off the event loop: metadata, `data` rules, video/audio, technologies (src/reader/). */
  reader: PageReader
  /** oEmbed discovery and the bundled provider registry (`iframe`, docs/api.md §3.4). */
  oembed: OembedClient
  browser: LazyBrowserPool
  /** `adblock`'s filter engine and consent rules (docs/browser.md#adblock), loaded once, at start or on first use. */
  adblock: AdblockLoader
  /** `insights.lighthouse` (docs/api.md §3.4): one run at a time, each in a slot of `browser`'s queue. */
  lighthouse: LighthouseRunner
  /** Prometheus metrics of this context (its own registry). */
  metrics: ServiceMetrics
  /** The tenants of API_KEYS and KEYS_FILE, kept current (src/tenants/directory.ts). */
  tenants: TenantDirectory
  /** Their plans at request time: counts, concurrency slots, usage (src/tenants/limits.ts). */
  limits: TenantLimits
  /** Batch scrape and crawl jobs (docs/jobs.md): BullMQ on Redis, or in process; the Firecrawl routes start the worker. */
  jobs: Jobs
  /** Background work (stale refreshes) that shutdown waits for. */
  background: Set<Promise<unknown>>
  /** Set while shutting down: /ready answers 503. */
  closing: boolean
  /** GET /'s use case (src/pipeline/), built once from the components above that it names. */
  pipeline: Pipeline
}

export interface ContextOverrides {
  /** Replaces DNS resolution for the address guard (tests make names resolve to loopback). */
  resolve?: (hostname: string) => Promise<Array<{ address: string, family: 4 | 6 }>>
  /** Pool settings beyond the config's (tests lower the jobs per browser, for instance). */
  browser?: Partial<BrowserPoolOptions>
  /** Replaces the bundled oEmbed provider registry (tests add providers on loopback). */
  oembedProviders?: readonly OembedProvider[]
  /** A CA trusted for https `proxy` servers besides the system's (tests run one with a self-signed certificate). */
  proxyCa?: string
  /** The clock of tenants' days and months (tests move it across a month's end). */
  now?: () => number
}

/** The plain fetch presents itself as the desktop browser the default device emulates. */
const FETCH_CHROME_VERSION = '131.0.0.0'

export async function createContext (config: Readonly<Config>, log: Logger, overrides: ContextOverrides = {}): Promise<AppContext> {
  // First: a KEYS_FILE that does not load stops startup before anything is started.
  const tenants = loadTenantDirectory({ apiKeys: config.apiKeys, keysFile: config.keysFile, log })
  const store = createStore({ redis: config.redis, memoryMaxBytes: config.cacheMemoryBytes }, { log })
  const storage = createStorage(config, { log })
  const cache = createCache(store, { maxEntryBytes: config.cacheMaxEntryBytes })
  const flights = createSingleFlight({ store, cache, log })
  const resolve = overrides.resolve ?? createCachingResolver({ servers: config.dns.servers, timeoutMs: config.dns.timeoutMs }).resolve
  const guard = createAddressGuard({ allowPrivateHosts: [...config.allowPrivateHosts], resolve })
  const http = createHttpClient({ guard, userAgent: desktopUserAgent(FETCH_CHROME_VERSION), maxRedirects: config.maxRedirects, log, ...(overrides.proxyCa === undefined ? {} : { proxyCa: overrides.proxyCa }) })
  // MAX_PROBE_BYTES: the media probe's ordinary ranged GET reads this much (the SVG whole-file check keeps its own size).
  const probe: Probe = async (url, options) => await http.probe(url, {
    ...options,
    maxBytes: (options.offset ?? 0) === 0 && (options.maxBytes === undefined || options.maxBytes === PROBE_BYTES) ? config.maxProbeBytes : options.maxBytes
  })
  const reader = createPageReader({ probe, maxHtmlBytes: config.maxHtmlBytes, maxResponseBytes: config.maxResponseBytes, threads: config.readerThreads, env: config.childEnv, log })
  const oembed = createOembed({ http, providers: overrides.oembedProviders ?? bundledProviders(), log })
  const browser = createLazyBrowserPool(async (signal) => await createBrowserPool({
    chromiumPath: config.chromiumPath,
    wsEndpoint: config.browserWsEndpoint,
    egress: config.egress,
    concurrency: config.browserConcurrency,
    queueLimit: config.browserQueueLimit,
    maxJobsPerBrowser: config.browserMaxJobs,
    env: config.childEnv,
    proxyCa: overrides.proxyCa,
    ...overrides.browser
  }, { guard, log, signal }), { log })
  const lighthouse = createLighthouseRunner({
    guard,
    slots: browser,
    env: config.childEnv,
    chromiumPath: config.chromiumPath,
    queueLimit: config.browserQueueLimit,
    log,
    proxyCa: overrides.proxyCa
  })
  const metrics = createMetrics({ browserStats: () => browser.stats(), version: serviceVersion() })
  const limits = createTenantLimits({
    store,
    log,
    failMode: config.quotaFailMode,
    meter: { request: name => { metrics.tenantRequest(name) }, browserSeconds: (name, seconds) => { metrics.tenantBrowserSeconds(name, seconds) } },
    ...(overrides.now === undefined ? {} : { now: overrides.now })
  })
  const adblock = createAdblockLoader()
  const background = new Set<Promise<unknown>>()
  const pipeline = createPipeline({
    cache,
    flights,
    http,
    guard,
    reader,
    browser,
    adblock,
    storage,
    oembed,
    lighthouse,
    metrics,
    limits: { maxHtmlBytes: config.maxHtmlBytes, maxResponseBytes: config.maxResponseBytes, maxRedirects: config.maxRedirects, maxFullPageHeight: config.maxFullPageHeight },
    background
  })
  return {
    config,
    log,
    store,
    storage,
    cache,
    flights,
    guard,
    http,
    reader,
    oembed,
    browser,
    adblock,
    lighthouse,
    metrics,
    tenants,
    limits,
    background,
    closing: false,
    jobs: createJobs({ config, log, guard, storage, store }),
    pipeline
  }
}

export async function closeContext (ctx: AppContext): Promise<void> {
  ctx.closing = true
  ctx.tenants.close()
  await Promise.allSettled([...ctx.background])
  // Pages in flight stop here; on Redis, another instance takes them over (docs/jobs.md).
  await ctx.jobs.close()
  await ctx.browser.close()
  await ctx.lighthouse.close()
  await ctx.reader.close()
  await ctx.http.close()
  await ctx.store.close()
  await ctx.storage.close()
}
