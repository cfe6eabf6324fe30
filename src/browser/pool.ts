// The supervised browser (ARCHITECTURE.md, the gotenberg/browserless habits): the only place that launches or
// connects to Chromium. One browser; `concurrency` jobs at once; a bounded FIFO queue (beyond it EBUSY at once);
// relaunch after a crash or disconnect and after `maxJobsPerBrowser` jobs (the old browser finishes its running
// jobs first); close() drains, then closes, then kills whatever of the browser is left.
//
// Isolation at the speed of a reused page (measured in bench/pool-strategies.ts): a context + page ("lease") is
// reused job after job and reset in between, instead of paying for a new renderer process per job. The reset
// (after the job, before anyone else gets the lease) navigates to about:blank, clears window.name, cookies,
// permissions, the HTTP cache, the history, and every storage kind (local/session storage, IndexedDB, Cache
// Storage, ...) of every origin the job touched; closes extra pages; removes the job's listeners and routes. What
// a reset cannot undo starts over: a job that changed the context (init scripts, bindings, context routes, clock,
// geolocation, offline, credentials, ...) gets its context closed; one that changed the page in lasting ways gets
// a new page. A context's emulation profile (viewport, scale, mobile, touch, user agent, JS, locale) is fixed at
// creation (emulation.ts), so idle leases are kept per profile (up to `maxIdleContexts`, least recently used
// closed first) and a job takes one of its own profile or gets a new one. Contexts are also renewed every
// `maxJobsPerContext` jobs to bound anything a reset might miss.
//
// Egress: every context sends everything through its own egress proxy (egress-proxy.ts), loopback included, so
// each refusal belongs to the one job using that context; the browser-level proxy setting points at one more
// proxy, so nothing can leave unchecked. A CDP Fetch handler per page fails non-web schemes (file:, filesystem:)
// and, when a job forwards origin-scoped headers, sets them on requests for the target's origin only; the job's
// own navigations are limited to http(s), data: and about:blank. The job learns of a refused main navigation
// through `info.refusedNavigation()`, and the pool turns one into EFORBIDDENURL / EINVALURL whatever the job
// returned.
import { randomUUID } from 'node:crypto'
import { chromium } from 'playwright-core'
import type { Browser, BrowserContext, CDPSession, Dialog, Frame, Page, Request, Response } from 'playwright-core'
import { AppError, isAppError } from '../errors.ts'
import type { AddressGuard } from '../net/guard.ts'
import { chromiumArgs, findChromium, findPidByMarker, killProcessGroup, processGroupMembers, processStartTime } from './chromium.ts'
import { EGRESS_MARKER_HEADER, createEgressProxy, egressKey } from './egress-proxy.ts'
import type { EgressProxy, EgressRefusal } from './egress-proxy.ts'
import { applyPageEmulation, contextOptionsFor, headersForRequest, profileKey, splitForwardedHeaders } from './emulation.ts'
import type { Emulation } from './emulation.ts'
import { BrowserError, refusalError, toBrowserError } from './errors.ts'

export interface BrowserPoolOptions {
  /** CHROMIUM_PATH; else the first of chromium, chromium-browser, google-chrome on PATH. */
  chromiumPath?: string | undefined
  /** The PATH to search (`:`-separated); default: the process's own, via the shell. */
  searchPath?: string | undefined
  /** BROWSER_WS_ENDPOINT: connect to a remote Playwright browser server instead of launching. */
  wsEndpoint?: string | undefined
  /** BROWSER_CONCURRENCY: jobs at once. */
  concurrency: number
  /** BROWSER_QUEUE_LIMIT: jobs that may wait for a page; beyond, EBUSY. */
  queueLimit: number
  /** Jobs per browser before it is replaced (the running ones finish first). Default 1000. */
  maxJobsPerBrowser?: number
  /** Jobs per context before it is replaced. Default 100. */
  maxJobsPerContext?: number
  /** Reset contexts kept for later jobs, across profiles (each keeps a renderer). Default `concurrency + 2`. */
  maxIdleContexts?: number
  /** Launch or connect deadline. Default 30 s. */
  launchTimeoutMs?: number
  /** How long browser.close() may take before the process group is killed. Default 5 s. */
  closeTimeoutMs?: number
  /** How long a job may take to settle after its signal aborted, and a reset may take. Default 5 s. */
  resetTimeoutMs?: number
  /** How long close() lets running jobs finish before aborting them. Default 30 s. */
  drainTimeoutMs?: number
  /**
   * Where the egress proxies listen, and the host the browser is told. Defaults to 127.0.0.1 for both; a remote
   * browser (wsEndpoint) must be able to reach that host.
   */
  egress?: { listenHost?: string, advertisedHost?: string }
  /** More Chromium switches (never `--disable-features`: Playwright's own would be lost). */
  extraArgs?: readonly string[]
}

export interface BrowserPoolLog {
  debug (obj: object, msg: string): void
  info (obj: object, msg: string): void
  warn (obj: object, msg: string): void
  error (obj: object, msg: string): void
}

export interface BrowserPoolDeps {
  guard: AddressGuard
  log?: BrowserPoolLog
}

export interface JobInfo {
  /** Aborts when the caller's signal does, when the browser or page dies, or when the pool closes. */
  signal: AbortSignal
  /** Requests the egress layer refused during this job (sub-requests included: those just fail in the page). */
  refusals (): readonly EgressRefusal[]
  /** The refusal of this job's main-frame navigation (any redirect hop, meta refresh or script navigation). */
  refusedNavigation (): EgressRefusal | undefined
}

export type BrowserJob<T> = (page: Page, info: JobInfo) => Promise<T>

export interface RunOptions {
  signal: AbortSignal
  emulation: Emulation
}

export interface BrowserPoolStats {
  /** Jobs running (a job's reset included). */
  active: number
  queued: number
  /** Browsers launched (or connected) so far. */
  launches: number
  /** Jobs started so far. */
  jobs: number
  /** Contexts created so far (a job that reuses one creates none). */
  contexts: number
  /** Pages created so far. */
  pages: number
}

export interface BrowserPool {
  run<T> (job: BrowserJob<T>, options: RunOptions): Promise<T>
  /** True while a browser is connected and the pool is open. */
  health (): boolean
  stats (): BrowserPoolStats
  /** The browser's version, e.g. `156.0.8078.79` (of the first browser until a relaunch says otherwise). */
  chromiumVersion (): string
  /** The pid of the launched browser (undefined for a remote one or while down). */
  browserPid (): number | undefined
  /** Rejects queued jobs (EBUSY), lets running ones finish, closes the browser; kills it if that hangs. */
  close (): Promise<void>
}

const DEFAULTS = {
  maxJobsPerBrowser: 1000,
  maxJobsPerContext: 100,
  launchTimeoutMs: 30_000,
  closeTimeoutMs: 5_000,
  resetTimeoutMs: 5_000,
  drainTimeoutMs: 30_000
}
/** Playwright's own defaults, restored after a job that changed them. */
const PLAYWRIGHT_DEFAULT_TIMEOUT_MS = 30_000
/** Fetch patterns always on: schemes no page may load (Chromium itself refuses the rest from web content). */
const SCHEME_PATTERNS = [{ urlPattern: 'file:*' }, { urlPattern: 'filesystem:*' }]
/** Fetch patterns while origin-scoped headers are forwarded: every request, redirect hops included. */
const ALL_PATTERNS = [{ urlPattern: '*', requestStage: 'Request' as const }]
const WEB_SCHEMES: ReadonlySet<string> = new Set(['http:', 'https:', 'ws:', 'wss:', 'data:', 'blob:'])
/** Schemes a job may navigate the page to (about: only as about:blank). */
const NAVIGABLE_SCHEMES: ReadonlySet<string> = new Set(['http:', 'https:', 'data:'])
const RELAUNCH_BACKOFF_MS = [0, 250, 1000, 2000, 5000]

// Methods whose effect outlives a page reset: calling one makes the pool replace the page (or the context).
const PAGE_TAINTING = ['addInitScript', 'exposeBinding', 'exposeFunction', 'routeWebSocket', 'routeFromHAR', 'addLocatorHandler']
const CONTEXT_TAINTING = [
  'addInitScript', 'exposeBinding', 'exposeFunction', 'route', 'routeWebSocket', 'routeFromHAR', 'setExtraHTTPHeaders',
  'setGeolocation', 'setOffline', 'setHTTPCredentials', 'setDefaultTimeout', 'setDefaultNavigationTimeout'
]
const CLOCK_TAINTING = ['install', 'fastForward', 'pauseAt', 'resume', 'runFor', 'setFixedTime', 'setSystemTime']

function noop (): void {}

type Outcome<T> = { ok: true, value: T } | { ok: false, error: unknown }

interface ListenerIntrospection {
  eventNames (): Array<string | symbol>
  listeners (event: string | symbol): Array<(...args: unknown[]) => unknown>
  off (event: string | symbol, listener: (...args: unknown[]) => unknown): unknown
}

type ListenerSnapshot = Map<string | symbol, Set<unknown>>

function snapshotListeners (emitter: object): ListenerSnapshot {
  const target = emitter as unknown as ListenerIntrospection
  const snapshot: ListenerSnapshot = new Map()
  for (const name of target.eventNames()) snapshot.set(name, new Set(target.listeners(name)))
  return snapshot
}

/** Removes every listener that was not there when the snapshot was taken. */
function restoreListeners (emitter: object, snapshot: ListenerSnapshot): void {
  const target = emitter as unknown as ListenerIntrospection
  for (const name of target.eventNames()) {
    const keep = snapshot.get(name)
    for (const listener of target.listeners(name)) {
      if (keep === undefined || !keep.has(listener)) target.off(name, listener)
    }
  }
}

/** Wraps methods of one object (not its class) so that calling them first runs `onCall`. */
function shadowMethods (target: object, names: readonly string[], onCall: (name: string) => void): void {
  const record = target as Record<string, unknown>
  for (const name of names) {
    const original = record[name]
    if (typeof original !== 'function') continue
    Object.defineProperty(target, name, {
      configurable: true,
      writable: true,
      value: (...args: unknown[]): unknown => {
        onCall(name)
        return (original as (...a: unknown[]) => unknown).apply(target, args)
      }
    })
  }
}

function schemeOf (url: string): string | undefined {
  try { return new URL(url).protocol } catch { return undefined }
}

function originOf (url: string): string | undefined {
  try {
    const origin = new URL(url).origin
    return origin === 'null' ? undefined : origin
  } catch {
    return undefined
  }
}

function withoutHash (url: string): string {
  const hash = url.indexOf('#')
  return hash === -1 ? url : url.slice(0, hash)
}

function abortErrorOf (signal: AbortSignal): AppError {
  const reason: unknown = signal.reason
  return isAppError(reason) ? reason : new AppError('ETIMEOUT', { cause: reason })
}

function sleep (ms: number): Promise<void> {
  return new Promise((resolve) => { setTimeout(resolve, ms).unref() })
}

/** Resolves with the promise's value, or with `fallback` after `ms` (the promise goes on unobserved). */
async function within<T> (promise: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([promise, new Promise<T>((resolve) => { timer = setTimeout(() => { resolve(fallback) }, ms) })])
  } finally {
    clearTimeout(timer)
  }
}

function busyError (detail: string): AppError {
  return new AppError('EBUSY', { headers: { 'retry-after': '5' }, data: { browser: detail } })
}

interface Generation {
  id: number
  browser: Browser
  pid: number | undefined
  pidStartTime: number | undefined
  version: string
  /** Jobs dispatched to it. */
  jobs: number
  /** Jobs on it not yet released: it may not close before they are. */
  running: number
  state: 'up' | 'retiring' | 'dead'
  closed: Promise<void> | undefined
}

interface JobState {
  refusals: EgressRefusal[]
  /** URLs of main-frame navigation requests (every hop). */
  navigations: string[]
  /** Main-frame navigation requests that failed or got the proxy's answer instead of the target's. */
  failedNavigations: string[]
  /** Origin-scoped forwarded headers (lower-case names); empty when none. */
  scopedHeaders: Record<string, string>
  targetOrigin: string | undefined
  controller: AbortController
}

interface Lease {
  gen: Generation
  key: string
  proxy: EgressProxy
  context: BrowserContext
  page: Page | undefined
  session: CDPSession | undefined
  mainFrameId: string | undefined
  pageListeners: ListenerSnapshot | undefined
  contextListeners: ListenerSnapshot
  jobs: number
  contextTainted: boolean
  pageTainted: boolean
  viewportChanged: boolean
  pageTimeoutsChanged: boolean
  headersIntercepted: boolean
  /** Set while the pool itself opens a page, so the popup closer leaves it alone. */
  openingPage: boolean
  origins: Set<string>
  javaScriptEnabled: boolean
  job: JobState | undefined
}

interface Waiting {
  start: () => void
  reject: (err: unknown) => void
  cleanup: () => void
}

export async function createBrowserPool (options: BrowserPoolOptions, deps: BrowserPoolDeps): Promise<BrowserPool> {
  const { guard, log } = deps
  const concurrency = Math.max(1, Math.floor(options.concurrency))
  const queueLimit = Math.max(0, Math.floor(options.queueLimit))
  const maxJobsPerBrowser = options.maxJobsPerBrowser ?? DEFAULTS.maxJobsPerBrowser
  const maxJobsPerContext = options.maxJobsPerContext ?? DEFAULTS.maxJobsPerContext
  const launchTimeoutMs = options.launchTimeoutMs ?? DEFAULTS.launchTimeoutMs
  const closeTimeoutMs = options.closeTimeoutMs ?? DEFAULTS.closeTimeoutMs
  const resetTimeoutMs = options.resetTimeoutMs ?? DEFAULTS.resetTimeoutMs
  const drainTimeoutMs = options.drainTimeoutMs ?? DEFAULTS.drainTimeoutMs
  const remote = options.wsEndpoint !== undefined && options.wsEndpoint !== ''
  const executablePath = remote ? undefined : findChromium({ chromiumPath: options.chromiumPath, searchPath: options.searchPath })
  const poolId = randomUUID()
  const proxyOptions = {
    guard,
    ...(log === undefined ? {} : { log }),
    ...(options.egress?.listenHost === undefined ? {} : { listenHost: options.egress.listenHost }),
    ...(options.egress?.advertisedHost === undefined ? {} : { advertisedHost: options.egress.advertisedHost })
  }

  const maxIdleContexts = Math.max(0, Math.floor(options.maxIdleContexts ?? concurrency + 2))
  // The browser-level proxy: catches anything not created in one of our contexts. Its refusals belong to no job.
  const defaultProxy = await createEgressProxy(proxyOptions)

  const queue: Waiting[] = []
  const generations = new Set<Generation>()
  const running = new Set<Promise<void>>()
  let current: Generation | undefined
  let launching: Promise<void> | undefined
  let launchFailures = 0
  let generationCount = 0
  let version = ''
  let closing = false
  const counters = { launches: 0, jobs: 0, contexts: 0, pages: 0 }
  /** Jobs started and not yet released (reset included). */
  let active = 0
  /** Leases in use by a job. */
  const busy = new Set<Lease>()
  /** Reset leases waiting for a job, least recently used first. */
  const idle: Lease[] = []
  /** Woken whenever a job is released (close() waits on it). */
  const releaseWaiters = new Set<() => void>()

  function waitForRelease (ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => { clearTimeout(timer); releaseWaiters.delete(done); resolve() }
      const timer = setTimeout(done, ms)
      releaseWaiters.add(done)
    })
  }

  // ------------------------------------------------------------ browser generations

  async function startBrowser (): Promise<Generation> {
    const id = ++generationCount
    const marker = `--pagecast-browser=${poolId}-${id}`
    let browser: Browser
    if (remote) {
      browser = await chromium.connect(options.wsEndpoint as string, { timeout: launchTimeoutMs })
    } else {
      browser = await chromium.launch({
        executablePath,
        args: chromiumArgs({ proxyHost: '127.0.0.1', extra: [...(options.extraArgs ?? []), marker] }),
        proxy: { server: defaultProxy.server, bypass: '<-loopback>' },
        timeout: launchTimeoutMs,
        handleSIGINT: false,
        handleSIGTERM: false,
        handleSIGHUP: false
      })
    }
    const pid = remote ? undefined : findPidByMarker(marker)
    const gen: Generation = {
      id,
      browser,
      pid,
      pidStartTime: pid === undefined ? undefined : processStartTime(pid),
      version: browser.version(),
      jobs: 0,
      running: 0,
      state: 'up',
      closed: undefined
    }
    browser.on('disconnected', () => { onDisconnected(gen) })
    counters.launches += 1
    return gen
  }

  function ensureBrowser (): void {
    if (closing || launching !== undefined || current !== undefined) return
    const attempt = launchFailures
    launching = (async () => {
      await sleep(RELAUNCH_BACKOFF_MS[Math.min(attempt, RELAUNCH_BACKOFF_MS.length - 1)] ?? 0)
      if (closing) return
      try {
        const gen = await startBrowser()
        if (closing) {
          generations.add(gen)
          await closeGeneration(gen)
          return
        }
        generations.add(gen)
        current = gen
        version = gen.version
        launchFailures = 0
        log?.info({ generation: gen.id, pid: gen.pid, version: gen.version }, 'browser up')
      } catch (err) {
        launchFailures += 1
        log?.error({ err, attempt: launchFailures }, 'browser launch failed')
        // Whoever waits now would wait for a browser that may not come: tell them, and try again for later ones.
        const failure = toBrowserError(err, 'launch')
        for (const waiting of queue.splice(0)) { waiting.cleanup(); waiting.reject(failure) }
      }
    })().finally(() => {
      launching = undefined
      if (!closing && current === undefined && (queue.length > 0 || launchFailures === 0)) ensureBrowser()
      pump()
    })
  }

  function onDisconnected (gen: Generation): void {
    if (gen.state === 'dead') return
    const planned = gen.closed !== undefined
    gen.state = 'dead'
    if (current === gen) current = undefined
    if (!planned) log?.warn({ generation: gen.id, pid: gen.pid }, 'browser disconnected')
    // Running jobs on it fail now (their pages are gone), with a code that says a retry may work.
    for (const lease of busy) {
      if (lease.gen === gen) lease.job?.controller.abort(new BrowserError('EFATAL', 'job', true, { cause: new Error('the browser disconnected') }))
    }
    dropIdle((lease) => lease.gen === gen)
    // Children of a killed browser may linger: the group goes.
    if (gen.pid !== undefined) killProcessGroup(gen.pid, gen.pidStartTime)
    if (!planned) {
      gen.closed = Promise.resolve()
      generations.delete(gen)
    }
    if (!closing) ensureBrowser()
  }

  async function closeGeneration (gen: Generation): Promise<void> {
    if (gen.closed !== undefined) return await gen.closed
    gen.closed = (async () => {
      const closed = await within(gen.browser.close().then(() => true, () => false), closeTimeoutMs, false)
      if (!closed) log?.warn({ generation: gen.id, pid: gen.pid }, 'browser close timed out; killing it')
      if (gen.pid !== undefined) {
        // Children exit shortly after the browser; whatever has not is killed.
        for (let i = 0; i < 20 && processGroupMembers(gen.pid).length > 0; i++) await sleep(50)
        killProcessGroup(gen.pid, gen.pidStartTime)
      }
      gen.state = 'dead'
      generations.delete(gen)
    })()
    return await gen.closed
  }

  /** Closes a retiring generation once none of its leases is in use. */
  function closeRetired (): void {
    for (const gen of generations) {
      if (gen.state !== 'retiring' || gen.closed !== undefined) continue
      if (gen.running > 0 || idle.some((lease) => lease.gen === gen)) continue
      void closeGeneration(gen)
    }
  }

  function retire (gen: Generation): void {
    if (gen.state !== 'up') return
    gen.state = 'retiring'
    if (current === gen) current = undefined
    log?.info({ generation: gen.id, jobs: gen.jobs }, 'browser retiring')
    dropIdle((lease) => lease.gen === gen)
    closeRetired()
    ensureBrowser()
  }

  // ------------------------------------------------------------ contexts and pages

  function isMainNavigation (lease: Lease, request: Request): boolean {
    if (!request.isNavigationRequest()) return false
    let frame: Frame
    try { frame = request.frame() } catch { return false }
    return lease.page !== undefined && frame === lease.page.mainFrame()
  }

  function recordRefusal (lease: Lease, refusal: EgressRefusal): void {
    lease.job?.refusals.push(refusal)
  }

  async function openPage (lease: Lease): Promise<void> {
    lease.openingPage = true
    let page: Page
    try {
      page = await lease.context.newPage()
    } finally {
      lease.openingPage = false
    }
    counters.pages += 1
    lease.page = page
    lease.pageTainted = false
    lease.viewportChanged = false
    lease.pageTimeoutsChanged = false
    lease.headersIntercepted = false

    page.on('dialog', (dialog: Dialog) => {
      // Leaving must win over a beforeunload handler; every other dialog is dismissed.
      const settle = dialog.type() === 'beforeunload' ? dialog.accept() : dialog.dismiss()
      settle.catch(noop)
    })
    page.on('crash', () => {
      lease.job?.controller.abort(new BrowserError('EFATAL', 'job', true, { cause: new Error('the page crashed') }))
      lease.pageTainted = true
    })
    page.on('close', () => { if (lease.page === page) lease.page = undefined })
    page.on('request', (request: Request) => {
      if (lease.job !== undefined && isMainNavigation(lease, request)) lease.job.navigations.push(withoutHash(request.url()))
    })
    page.on('requestfailed', (request: Request) => {
      if (lease.job !== undefined && isMainNavigation(lease, request)) lease.job.failedNavigations.push(withoutHash(request.url()))
    })
    page.on('response', (response: Response) => {
      const job = lease.job
      if (job === undefined) return
      const request = response.request()
      if (!isMainNavigation(lease, request)) return
      const marker = response.headers()[EGRESS_MARKER_HEADER]
      if (marker !== undefined) job.failedNavigations.push(withoutHash(request.url()))
    })

    // Lasting page-level changes a reset cannot see: calling one of these replaces the page afterwards.
    shadowMethods(page, PAGE_TAINTING, () => { lease.pageTainted = true })
    shadowMethods(page.keyboard, ['down'], () => { lease.pageTainted = true })
    shadowMethods(page.mouse, ['down'], () => { lease.pageTainted = true })
    shadowMethods(page.coverage, ['startJSCoverage', 'startCSSCoverage'], () => { lease.pageTainted = true })
    shadowMethods(page, ['setViewportSize'], () => { lease.viewportChanged = true })
    shadowMethods(page, ['setDefaultTimeout', 'setDefaultNavigationTimeout'], () => { lease.pageTimeoutsChanged = true })

    // Navigations the job asks for: only http(s), data: and about:blank (Chromium would open file:, chrome: and
    // view-source: for a browser-initiated navigation; web content cannot navigate there itself).
    const mainFrame = page.mainFrame()
    const goto = mainFrame.goto.bind(mainFrame)
    Object.defineProperty(mainFrame, 'goto', {
      configurable: true,
      writable: true,
      value: async (url: string, gotoOptions?: Parameters<Frame['goto']>[1]) => {
        const scheme = schemeOf(url)
        if (scheme !== undefined && !NAVIGABLE_SCHEMES.has(scheme) && url !== 'about:blank') {
          const refusal: EgressRefusal = { kind: 'blocked', channel: 'scheme', url, host: '', port: 0, reason: `navigation to a ${scheme} URL` }
          recordRefusal(lease, refusal)
          lease.job?.navigations.push(url)
          lease.job?.failedNavigations.push(url)
          throw refusalError(refusal)
        }
        return await goto(url, gotoOptions)
      }
    })

    const session = await lease.context.newCDPSession(page)
    lease.session = session
    const tree = await session.send('Page.getFrameTree')
    lease.mainFrameId = tree.frameTree.frame.id
    session.on('Fetch.requestPaused', (event) => { onRequestPaused(lease, session, event) })
    await session.send('Fetch.enable', { patterns: SCHEME_PATTERNS })
    lease.pageListeners = snapshotListeners(page)
  }

  function onRequestPaused (lease: Lease, session: CDPSession, event: { requestId: string, request: { url: string, headers: Record<string, string> }, frameId: string, resourceType: string }): void {
    const { requestId, request } = event
    const scheme = schemeOf(request.url)
    const job = lease.job
    if (scheme === undefined || !WEB_SCHEMES.has(scheme)) {
      if (job !== undefined) recordRefusal(lease, { kind: 'blocked', channel: 'scheme', url: request.url, host: '', port: 0, reason: `a ${scheme ?? 'malformed'} URL` })
      session.send('Fetch.failRequest', { requestId, errorReason: 'BlockedByClient' }).catch(noop)
      return
    }
    if (job === undefined || Object.keys(job.scopedHeaders).length === 0) {
      session.send('Fetch.continueRequest', { requestId }).catch(noop)
      return
    }
    if (job.targetOrigin === undefined && event.resourceType === 'Document' && event.frameId === lease.mainFrameId) {
      job.targetOrigin = originOf(request.url)
    }
    const headers = headersForRequest(request.headers, request.url, job.targetOrigin, job.scopedHeaders)
    session.send('Fetch.continueRequest', { requestId, headers }).catch(noop)
  }

  async function openLease (gen: Generation, emulation: Emulation, key: string): Promise<Lease> {
    const proxy = await createEgressProxy(proxyOptions)
    let context: BrowserContext
    try {
      context = await gen.browser.newContext({
        ...contextOptionsFor(emulation),
        acceptDownloads: false,
        serviceWorkers: 'block',
        proxy: { server: proxy.server, bypass: '<-loopback>' }
      })
    } catch (err) {
      await proxy.close()
      throw err
    }
    counters.contexts += 1
    const lease: Lease = {
      gen,
      key,
      proxy,
      context,
      page: undefined,
      session: undefined,
      mainFrameId: undefined,
      pageListeners: undefined,
      contextListeners: new Map(),
      jobs: 0,
      contextTainted: false,
      pageTainted: false,
      viewportChanged: false,
      pageTimeoutsChanged: false,
      headersIntercepted: false,
      openingPage: false,
      origins: new Set(),
      javaScriptEnabled: emulation.javaScriptEnabled,
      job: undefined
    }
    proxy.onRefusal((refusal) => { lease.job?.refusals.push(refusal) })
    try {
      // Popups, and pages a job opens, are closed as they appear.
      context.on('page', (page: Page) => {
        if (lease.openingPage || page === lease.page) return
        page.close().catch(noop)
      })
      context.on('request', (request: Request) => {
        const origin = originOf(request.url())
        if (origin !== undefined) lease.origins.add(origin)
      })
      shadowMethods(context, CONTEXT_TAINTING, () => { lease.contextTainted = true })
      shadowMethods(context.clock, CLOCK_TAINTING, () => { lease.contextTainted = true })
      shadowMethods(context.tracing, ['start', 'startChunk'], () => { lease.contextTainted = true })
      await openPage(lease)
      lease.contextListeners = snapshotListeners(context)
      return lease
    } catch (err) {
      closeLease(lease)
      throw err
    }
  }

  /** Closes a lease's context and proxy (in the background: nobody waits for it). */
  function closeLease (lease: Lease): void {
    void within(lease.context.close().catch(noop), closeTimeoutMs, undefined).finally(() => lease.proxy.close())
  }

  function dropIdle (which: (lease: Lease) => boolean): void {
    for (let i = idle.length - 1; i >= 0; i--) {
      const lease = idle[i] as Lease
      if (!which(lease)) continue
      idle.splice(i, 1)
      closeLease(lease)
    }
  }

  /** The most recently used idle lease with this profile on this browser, taken out of the idle list. */
  function takeIdle (key: string, gen: Generation): Lease | undefined {
    for (let i = idle.length - 1; i >= 0; i--) {
      const lease = idle[i] as Lease
      if (lease.key === key && lease.gen === gen && lease.page !== undefined) {
        idle.splice(i, 1)
        return lease
      }
    }
    return undefined
  }

  /**
   * Makes a used lease as good as new, or drops it: the page goes to about:blank (stopping its scripts), then
   * every kind of state the job could have left is cleared. Throws when it cannot be sure.
   */
  async function resetLease (lease: Lease): Promise<void> {
    const { context } = lease
    for (const page of context.pages()) {
      if (page !== lease.page) await page.close().catch(noop)
    }
    restoreListeners(context, lease.contextListeners)
    let page = lease.page
    if (page !== undefined && (lease.pageTainted || page.isClosed())) {
      await page.close().catch(noop)
      page = undefined
    }
    if (page === undefined) {
      lease.page = undefined
      await openPage(lease)
      page = lease.page as Page | undefined
      if (page === undefined) throw new Error('no page after reopening')
    } else {
      if (lease.pageListeners !== undefined) restoreListeners(page, lease.pageListeners)
      await page.unrouteAll({ behavior: 'ignoreErrors' })
      // A failed navigation commits Chromium's error page a moment later, which can interrupt this one: try again.
      for (let attempt = 1; ; attempt++) {
        try {
          await page.goto('about:blank', { timeout: resetTimeoutMs })
        } catch (err) {
          if (!/interrupted by another navigation/i.test(err instanceof Error ? err.message : '')) throw err
          await page.waitForLoadState('load', { timeout: resetTimeoutMs }).catch(noop)
        }
        if (page.url() === 'about:blank') break
        if (attempt >= 3) throw new Error(`the page stayed at ${page.url()}`)
      }
      // window.name belongs to the tab, not the document: it survives a same-site round trip. (Without
      // JavaScript, which every job of this context lacks, no page can have set it.)
      if (lease.javaScriptEnabled) await page.evaluate('window.name = ""')
    }
    const session = lease.session
    if (session === undefined) throw new Error('no CDP session')
    const origins = [...lease.origins]
    lease.origins.clear()
    await Promise.all([
      context.clearCookies(),
      context.clearPermissions(),
      session.send('Network.clearBrowserCache'),
      session.send('Page.resetNavigationHistory'),
      ...origins.map((origin) => session.send('Storage.clearDataForOrigin', { origin, storageTypes: 'all' })),
      lease.headersIntercepted ? session.send('Fetch.enable', { patterns: SCHEME_PATTERNS }) : undefined,
      lease.viewportChanged ? page.setViewportSize(viewportOf(lease)) : undefined,
      lease.pageTimeoutsChanged ? page.setDefaultTimeout(PLAYWRIGHT_DEFAULT_TIMEOUT_MS) : undefined,
      lease.pageTimeoutsChanged ? page.setDefaultNavigationTimeout(PLAYWRIGHT_DEFAULT_TIMEOUT_MS) : undefined
    ])
    lease.headersIntercepted = false
    lease.viewportChanged = false
    lease.pageTimeoutsChanged = false
  }

  function viewportOf (lease: Lease): { width: number, height: number } {
    const [width, height] = JSON.parse(lease.key) as [number, number]
    return { width, height }
  }

  // ------------------------------------------------------------ jobs

  function refusedNavigation (job: JobState): EgressRefusal | undefined {
    for (const refusal of job.refusals) {
      const key = refusal.channel === 'scheme' ? undefined : `${refusal.host}:${refusal.port}`
      for (const url of job.navigations) {
        const sameUrl = withoutHash(refusal.url) === url
        const sameTunnel = refusal.channel === 'tunnel' && key !== undefined && egressKey(url) === key
        if (!sameUrl && !sameTunnel) continue
        // A block is a property of the address; "unreachable" counts only when this navigation itself failed.
        if (refusal.kind === 'blocked' || job.failedNavigations.includes(url)) return refusal
      }
    }
    return undefined
  }

  function pump (): void {
    while (queue.length > 0 && active < concurrency) {
      if (current === undefined || current.state !== 'up') {
        ensureBrowser()
        return
      }
      const head = queue.shift()
      if (head === undefined) return
      head.cleanup()
      head.start()
    }
  }

  async function execute<T> (gen: Generation, job: BrowserJob<T>, run: RunOptions, key: string): Promise<T> {
    counters.jobs += 1
    gen.jobs += 1
    gen.running += 1
    if (gen.jobs >= maxJobsPerBrowser) retire(gen)
    const controller = new AbortController()
    const onCallerAbort = (): void => { controller.abort(run.signal.reason) }
    run.signal.addEventListener('abort', onCallerAbort, { once: true })
    if (run.signal.aborted) onCallerAbort()
    let jobPromise: Promise<T> | undefined
    let lease: Lease | undefined
    const state: JobState = {
      refusals: [],
      navigations: [],
      failedNavigations: [],
      scopedHeaders: splitForwardedHeaders(run.emulation.extraHTTPHeaders).originScoped,
      targetOrigin: undefined,
      controller
    }
    try {
      if (controller.signal.aborted) throw abortErrorOf(controller.signal)
      // A reset context of this profile on this browser, else a new one.
      lease = takeIdle(key, gen)
      if (lease === undefined) {
        try {
          lease = await openLease(gen, run.emulation, key)
        } catch (err) {
          throw toBrowserError(err, 'context')
        }
      }
      busy.add(lease)
      const page = lease.page
      if (page === undefined) throw new BrowserError('EFATAL', 'context', true, { cause: new Error('no page') })
      lease.jobs += 1
      lease.proxy.newJob()
      lease.job = state
      // Abort closes the page: every pending Playwright call on it rejects at once.
      const onAbort = (): void => {
        const target = lease?.page
        if (target !== undefined) target.close().catch(noop)
      }
      controller.signal.addEventListener('abort', onAbort, { once: true })
      try {
        await applyPageEmulation(page, run.emulation)
        if (Object.keys(state.scopedHeaders).length > 0 && lease.session !== undefined) {
          lease.headersIntercepted = true
          await lease.session.send('Fetch.enable', { patterns: [...SCHEME_PATTERNS, ...ALL_PATTERNS] })
        }
      } catch (err) {
        if (controller.signal.aborted) throw abortErrorOf(controller.signal)
        throw toBrowserError(err, 'context')
      }
      if (controller.signal.aborted) throw abortErrorOf(controller.signal)

      const info: JobInfo = {
        signal: controller.signal,
        refusals: () => state.refusals,
        refusedNavigation: () => refusedNavigation(state)
      }
      jobPromise = (async () => await job(page, info))()
      const outcome = await new Promise<Outcome<T>>((resolve) => {
        const onSettleAbort = (): void => { resolve({ ok: false, error: controller.signal.reason }) }
        controller.signal.addEventListener('abort', onSettleAbort, { once: true })
        if (controller.signal.aborted) onSettleAbort()
        jobPromise?.then(
          (value) => { controller.signal.removeEventListener('abort', onSettleAbort); resolve({ ok: true, value }) },
          (error: unknown) => { controller.signal.removeEventListener('abort', onSettleAbort); resolve({ ok: false, error }) }
        )
      })
      const refused = refusedNavigation(state)
      if (refused !== undefined) throw refusalError(refused)
      if (outcome.ok) return outcome.value
      if (controller.signal.aborted) throw abortErrorOf(controller.signal)
      throw toBrowserError(outcome.error, 'job')
    } finally {
      run.signal.removeEventListener('abort', onCallerAbort)
      // The job is released after it has settled and its lease is reset; the caller does not wait for that.
      const settled = jobPromise
      const used = lease
      const done = (async () => {
        if (settled !== undefined) {
          const finished = await within(settled.then(() => true, () => true), resetTimeoutMs, false)
          // A job that ignores its signal may still hold the page: its context must not serve anyone else.
          if (!finished && used !== undefined) used.contextTainted = true
        }
        if (used !== undefined) used.job = undefined
        await release(used, gen)
      })()
      running.add(done)
      void done.finally(() => { running.delete(done) })
      // Jobs the abort did not stop keep running detached; the pool has moved on.
      void jobPromise?.catch(noop)
    }
  }

  async function release (lease: Lease | undefined, gen: Generation): Promise<void> {
    try {
      if (lease !== undefined) {
        const keep = !closing && maxIdleContexts > 0 && lease.gen.state === 'up' && !lease.contextTainted && lease.jobs < maxJobsPerContext
        const ok = keep && await within(resetLease(lease).then(() => true, (err: unknown) => {
          log?.debug({ err }, 'page reset failed; closing the context')
          return false
        }), resetTimeoutMs * 2, false)
        busy.delete(lease)
        // The generation may have died or retired while the reset ran.
        if (ok && !closing && lease.gen.state === 'up') {
          idle.push(lease)
          while (idle.length > maxIdleContexts) closeLease(idle.shift() as Lease)
        } else if (closing) {
          // close() must not return before the proxy is down.
          await within(lease.context.close().catch(noop), closeTimeoutMs, undefined)
          await lease.proxy.close()
        } else {
          closeLease(lease)
        }
      }
    } finally {
      active -= 1
      gen.running -= 1
      for (const wake of [...releaseWaiters]) wake()
      closeRetired()
      pump()
    }
  }

  function run<T> (job: BrowserJob<T>, runOptions: RunOptions): Promise<T> {
    const { signal } = runOptions
    if (closing) return Promise.reject(busyError('The browser is shutting down.'))
    if (signal.aborted) return Promise.reject(abortErrorOf(signal))
    const key = profileKey(runOptions.emulation)
    return new Promise<T>((resolve, reject) => {
      const start = (): void => {
        const gen = current
        if (gen === undefined) { reject(new BrowserError('EFATAL', 'job', true, { cause: new Error('no browser') })); return }
        active += 1
        execute(gen, job, runOptions, key).then(resolve, reject)
      }
      // Room on a live browser and nobody ahead: start now.
      if (queue.length === 0 && current?.state === 'up' && active < concurrency) {
        start()
        return
      }
      if (queue.length >= queueLimit) {
        reject(busyError(`The browser queue is full (${queueLimit} waiting).`))
        return
      }
      const onAbort = (): void => {
        const index = queue.indexOf(waiting)
        if (index !== -1) queue.splice(index, 1)
        reject(abortErrorOf(signal))
      }
      const waiting: Waiting = {
        start,
        reject,
        cleanup: () => { signal.removeEventListener('abort', onAbort) }
      }
      signal.addEventListener('abort', onAbort, { once: true })
      queue.push(waiting)
      ensureBrowser()
    })
  }

  // ------------------------------------------------------------ lifecycle

  try {
    const first = await startBrowser()
    generations.add(first)
    current = first
    version = first.version
    log?.info({ generation: first.id, pid: first.pid, version: first.version, remote }, 'browser up')
  } catch (err) {
    await defaultProxy.close()
    throw toBrowserError(err, 'launch')
  }

  let closed: Promise<void> | undefined

  async function close (): Promise<void> {
    closed ??= (async () => {
      closing = true
      for (const waiting of queue.splice(0)) { waiting.cleanup(); waiting.reject(busyError('The browser is shutting down.')) }
      // Running jobs finish (each within its own deadline); they are then released without a reset. Jobs still
      // running after drainTimeoutMs are aborted.
      const drainDeadline = Date.now() + drainTimeoutMs
      while (running.size > 0 || active > 0) {
        const left = drainDeadline - Date.now()
        if (left <= 0) {
          for (const lease of busy) lease.job?.controller.abort(busyError('The browser is shutting down.'))
        }
        await Promise.race([waitForRelease(left > 0 ? left : 250), ...running])
      }
      if (launching !== undefined) await launching
      const leases = idle.splice(0)
      current = undefined
      await Promise.allSettled(leases.map(async (lease) => {
        await within(lease.context.close().catch(noop), closeTimeoutMs, undefined)
        await lease.proxy.close()
      }))
      await Promise.allSettled([...generations].map(async (gen) => { await closeGeneration(gen) }))
      await defaultProxy.close()
    })()
    return await closed
  }

  return {
    run,
    health: () => !closing && current !== undefined && current.state === 'up' && current.browser.isConnected(),
    stats: () => ({
      active,
      queued: queue.length,
      launches: counters.launches,
      jobs: counters.jobs,
      contexts: counters.contexts,
      pages: counters.pages
    }),
    chromiumVersion: () => version,
    browserPid: () => current?.pid,
    close
  }
}
