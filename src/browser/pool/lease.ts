// A lease: one context + page, kept job after job and reset in between, instead of paying for a new renderer per
// job (measured in bench/pool-strategies.ts). The reset (after the job, before anyone else gets the lease)
// navigates to about:blank, clears window.name, cookies, permissions, the HTTP cache, the history, and every
// storage kind (local/session storage, IndexedDB, Cache Storage, ...) of every origin the job touched; closes
// extra pages; removes the job's listeners and routes (the request interception stays as the job set it: Lease.intercept). What a
// reset cannot undo starts over (lease-state.ts's Taint): a job that changed the context gets it closed, one that changed the page in lasting ways a new page.
//
// A context's emulation profile (viewport, scale, mobile, touch, user agent, JS, locale) is fixed at creation
// (emulation.ts), so a lease serves one profile; `LeaseProfile` carries what the reset needs of it.
import type { BrowserContext, CDPSession, Page } from 'playwright-core'
import { createEgressProxy } from '../egress-proxy.ts'
import type { EgressProxy, EgressProxyOptions } from '../egress-proxy.ts'
import { PageCdpSession } from '../page/cdp-session.ts'
import { contextOptionsFor, profileKey } from '../emulation.ts'
import type { Emulation } from '../emulation.ts'
import { restoreListeners, snapshotListeners } from './instrument.ts'
import type { ListenerSnapshot } from './instrument.ts'
import type { JobRecord } from './jobs.ts'
import { cleanTaint, nextLeaseState, pageReplaced } from './lease-state.ts'
import type { LeaseState } from './lease-state.ts'
import { authenticateEgress, guardContext, guardPage, interceptAllRequests, interceptRequests, interceptSchemesOnly } from './page-guards.ts'
import type { GuardedLease } from './page-guards.ts'
import type { Generation } from './supervisor.ts'
import { isTimedOut, within } from '../../util/abort.ts'
import type { PoolCounters } from './types.ts'

/** Playwright's own defaults, restored after a job that changed them. */
const PLAYWRIGHT_DEFAULT_TIMEOUT_MS = 30_000

/** The part of an emulation a context is created with, as the lease keeps it. */
export interface LeaseProfile {
  /** profileKey(): leases of equal keys are interchangeable. */
  key: string
  /** The profile's viewport, set back after a job resized the page. */
  viewport: { width: number, height: number }
  javaScriptEnabled: boolean
}

export function profileOf (emulation: Emulation): LeaseProfile {
  return {
    key: profileKey(emulation),
    viewport: { width: emulation.viewport.width, height: emulation.viewport.height },
    javaScriptEnabled: emulation.javaScriptEnabled
  }
}

export interface LeaseDeps {
  proxyOptions: EgressProxyOptions
  counters: PoolCounters
  closeTimeoutMs: number
  resetTimeoutMs: number
}

function noop (): void {}

export class Lease implements GuardedLease {
  readonly gen: Generation
  readonly profile: LeaseProfile
  readonly proxy: EgressProxy
  readonly context: BrowserContext
  readonly #deps: LeaseDeps
  page: Page | undefined = undefined
  /** The pool's own CDP session on the page: request interception and the reset's clearing. */
  session: CDPSession | undefined = undefined
  /**
   * The page's session for captures, handed to jobs (JobInfo): opened on a job's first capture and kept with its
   * device metrics for the page's life, so later jobs of the profile reuse both. It goes with the page.
   */
  captureSession: PageCdpSession | undefined = undefined
  mainFrameId: string | undefined = undefined
  /**
   * pageEmulationKey() of what the page is known to be emulating, with no media type (the last job applied it and
   * did not emulate a media type); undefined when unknown. A job with the same key skips applying it again.
   */
  pageEmulation: string | undefined = undefined
  openingPage = false
  readonly origins = new Set<string>()
  readonly taint = cleanTaint()
  /** The job using the lease, while there is one. */
  job: JobRecord | undefined = undefined
  /** Jobs served. */
  jobs = 0
  #state: LeaseState = 'busy'
  /** Whether the page's session intercepts every request (Lease.intercept), not only the refused schemes. */
  #interceptingAll = false
  #pageListeners: ListenerSnapshot | undefined = undefined
  #contextListeners: ListenerSnapshot = new Map()

  private constructor (gen: Generation, profile: LeaseProfile, proxy: EgressProxy, context: BrowserContext, deps: LeaseDeps) {
    this.gen = gen
    this.profile = profile
    this.proxy = proxy
    this.context = context
    this.#deps = deps
  }

  /** A new context (behind its own egress proxy) and page on `gen`, guarded, busy for the job that asked. */
  static async open (gen: Generation, emulation: Emulation, profile: LeaseProfile, deps: LeaseDeps): Promise<Lease> {
    const proxy = await createEgressProxy(deps.proxyOptions)
    let context: BrowserContext
    try {
      context = await gen.browser.newContext({
        ...contextOptionsFor(emulation),
        acceptDownloads: false,
        serviceWorkers: 'block',
        // Without the credential: the pool's session gives it once (authenticateEgress), Playwright never sees it.
        proxy: { server: proxy.server, bypass: '<-loopback>' }
      })
    } catch (err) {
      await proxy.close()
      throw err
    }
    deps.counters.contexts += 1
    const lease = new Lease(gen, profile, proxy, context, deps)
    proxy.onRefusal((refusal) => { lease.job?.refusals.push(refusal) })
    try {
      guardContext(context, lease)
      await lease.#openPage()
      if (lease.session === undefined) throw new Error('no CDP session')
      await authenticateEgress(lease.session, proxy)
      lease.#contextListeners = snapshotListeners(context)
      return lease
    } catch (err) {
      lease.close()
      throw err
    }
  }

  get state (): LeaseState { return this.#state }

  pageClosed (page: Page): void {
    if (this.page === page) this.page = undefined
  }

  /** An idle lease goes back to work. */
  take (): void { this.#state = nextLeaseState(this.#state, 'take') }

  /** `job` starts on the lease, its upstream connections going through `proxy` or (undefined) directly. */
  begin (job: JobRecord, proxy: string | undefined): void {
    this.jobs += 1
    this.proxy.newJob(proxy)
    this.job = job
  }

  /**
   * Every request intercepted (a job that forwards origin-scoped headers or filters requests), or only the refused
   * schemes. Kept from job to job and sent only when it changes: a run of `adblock` jobs (the default) sends nothing.
   * Between jobs no request is paused for anything (no job: each is continued as it is).
   */
  async intercept (all: boolean): Promise<void> {
    if (this.session === undefined || all === this.#interceptingAll) return
    await (all ? interceptAllRequests(this.session) : interceptSchemesOnly(this.session))
    this.#interceptingAll = all
  }

  /**
   * The job let go of the lease: from now on the page's events belong to no job, and none of its requests still in
   * flight (a keepalive fetch, a beacon sent as the reset unloads the page) reaches anything (the proxy lets nothing
   * through until the next job begins).
   */
  end (): void {
    this.job = undefined
    this.proxy.endJob()
  }

  /**
   * Makes a used lease as good as new: the page goes to about:blank (stopping its scripts), then every kind of
   * state the job could have left is cleared. Throws when it cannot be sure; the lease must then be closed.
   */
  async reset (): Promise<void> {
    this.#state = nextLeaseState(this.#state, 'release')
    const { context } = this
    const { resetTimeoutMs } = this.#deps
    for (const page of context.pages()) {
      if (page !== this.page) await page.close().catch(noop)
    }
    restoreListeners(context, this.#contextListeners)
    let page = this.page
    if (page !== undefined && (this.taint.page || page.isClosed())) {
      await page.close().catch(noop)
      page = undefined
    }
    if (page === undefined) {
      this.page = undefined
      await this.#openPage()
      page = this.page as Page | undefined
      if (page === undefined) throw new Error('no page after reopening')
    } else {
      if (this.#pageListeners !== undefined) restoreListeners(page, this.#pageListeners)
      // Only a job that routed requests pays for the round trip.
      if (this.taint.routes) await page.unrouteAll({ behavior: 'ignoreErrors' })
      this.taint.routes = false
      if (this.session === undefined) throw new Error('no CDP session')
      await this.#blank(this.session, resetTimeoutMs)
    }
    const session = this.session
    if (session === undefined) throw new Error('no CDP session')
    const origins = [...this.origins]
    this.origins.clear()
    const { taint } = this
    await Promise.all([
      context.clearCookies(),
      context.clearPermissions(),
      session.send('Network.clearBrowserCache'),
      session.send('Page.resetNavigationHistory'),
      ...origins.map((origin) => session.send('Storage.clearDataForOrigin', { origin, storageTypes: 'all' })),
      taint.viewport ? page.setViewportSize(this.profile.viewport) : undefined,
      taint.timeouts ? page.setDefaultTimeout(PLAYWRIGHT_DEFAULT_TIMEOUT_MS) : undefined,
      taint.timeouts ? page.setDefaultNavigationTimeout(PLAYWRIGHT_DEFAULT_TIMEOUT_MS) : undefined
    ])
    taint.viewport = false
    taint.timeouts = false
  }

  /**
   * Takes the page to about:blank through the pool's own session, then checks in the page that its top document is
   * about:blank (the job's document and its scripts are gone) and clears window.name, which belongs to the tab and
   * survives a same-site round trip (without JavaScript, which every job of this context lacks, no page can have set
   * it). Playwright's goto would also wait for the blank page's load event, and its evaluate for a new execution
   * context: 10-20% slower in interleaved runs (docs/benchmarks.md). A failed navigation commits Chromium's error page
   * a moment later, which can replace this one: the check then fails and the navigation is tried again.
   */
  async #blank (session: CDPSession, timeoutMs: number): Promise<void> {
    const expression = this.profile.javaScriptEnabled ? '(() => { window.name = ""; return location.href })()' : 'location.href'
    let href: unknown
    for (let attempt = 1; attempt <= 3; attempt++) {
      const navigated = await within(session.send('Page.navigate', { url: 'about:blank' }), timeoutMs)
      if (isTimedOut(navigated)) throw new Error('about:blank did not commit in time')
      for (let look = 0; look < 3; look++) {
        href = (await session.send('Runtime.evaluate', { expression, returnByValue: true })).result.value
        if (href === 'about:blank') return
        await new Promise(resolve => setTimeout(resolve, 20))
      }
    }
    throw new Error(`the page stayed at ${String(href)}`)
  }

  /** A reset lease waits in the idle list. */
  park (): void { this.#state = nextLeaseState(this.#state, 'ready') }

  /** Closes the context and then the proxy, in the background: nobody waits for it. */
  close (): void {
    if (!this.#markClosed()) return
    void within(this.context.close().catch(noop), this.#deps.closeTimeoutMs).finally(() => this.proxy.close())
  }

  /** Closes the context and then the proxy, for a caller that must not go on before the proxy is down. */
  async closeNow (): Promise<void> {
    if (!this.#markClosed()) return
    await within(this.context.close().catch(noop), this.#deps.closeTimeoutMs)
    await this.proxy.close()
  }

  /** False when the lease was closed already (closing is idempotent). */
  #markClosed (): boolean {
    if (this.#state === 'closed') return false
    this.#state = nextLeaseState(this.#state, 'close')
    return true
  }

  async #openPage (): Promise<void> {
    this.openingPage = true
    let page: Page
    try {
      page = await this.context.newPage()
    } finally {
      this.openingPage = false
    }
    this.#deps.counters.pages += 1
    this.page = page
    this.captureSession = new PageCdpSession(page)
    this.pageEmulation = undefined
    // A new page has a new session: nothing of the old one's interception applies to it.
    pageReplaced(this.taint)
    this.#interceptingAll = false
    guardPage(page, this)
    const session = await this.context.newCDPSession(page)
    this.session = session
    const tree = await session.send('Page.getFrameTree')
    this.mainFrameId = tree.frameTree.frame.id
    await interceptRequests(session, this)
    this.#pageListeners = snapshotListeners(page)
  }
}
