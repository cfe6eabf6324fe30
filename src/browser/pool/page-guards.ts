// Page hardening: what the pool installs on each context and page it opens, so that a job cannot hang, leak into
// the next job, or reach what it must not. Dialogs are dismissed, popups closed, crashes fail the job, main-frame
// navigations are recorded for refusal attribution (jobs.ts), and calls whose effect outlives a reset taint the
// lease (lease-state.ts) so it replaces the page or context afterwards.
//
// Egress: every context sends everything through its own egress proxy (egress-proxy.ts), which refuses what the
// address guard does not allow. On top of that a CDP Fetch handler per page fails non-web schemes (file:,
// filesystem:) and, when a job forwards origin-scoped headers, sets them on requests for the target's origin only;
// when a job has `adblock` on, it fails the sub-requests the filters block (or answers them with the filter's
// neutered resource); the job's own navigations are limited to http(s), data: and about:blank.
//
// State a reset cannot clear: Chromium's HTTP auth cache (credentials a job used are sent again, unasked, to later
// jobs; CDP cannot empty it) and the client hints an origin opted into (Accept-CH, kept per origin). A job that used
// credentials (user:password in a URL, an Authorization header), met a 401/407 challenge, or got an opt-in taints
// the context, which is then closed rather than reset.
import type { BrowserContext, CDPSession, Dialog, Frame, Page, Request, Response } from 'playwright-core'
import type { EgressRefusal } from '../egress-proxy.ts'
import { EGRESS_MARKER_HEADER } from '../egress-proxy.ts'
import { headersForRequest } from '../emulation.ts'
import { pageCrashed, refusalError } from '../errors.ts'
import { shadowMethods } from './instrument.ts'
import type { JobRecord } from './jobs.ts'
import { withoutHash } from './jobs.ts'
import type { Taint } from './lease-state.ts'

/** Fetch patterns always on: schemes no page may load (Chromium itself refuses the rest from web content). */
const SCHEME_PATTERNS = [{ urlPattern: 'file:*' }, { urlPattern: 'filesystem:*' }]
/** Fetch patterns while origin-scoped headers are forwarded or ads blocked: every request, redirect hops included. */
const ALL_PATTERNS = [{ urlPattern: '*', requestStage: 'Request' as const }]
const WEB_SCHEMES: ReadonlySet<string> = new Set(['http:', 'https:', 'ws:', 'wss:', 'data:', 'blob:'])
/** Schemes a job may navigate the page to (about: only as about:blank). */
const NAVIGABLE_SCHEMES: ReadonlySet<string> = new Set(['http:', 'https:', 'data:'])

// Methods whose effect outlives a page reset: calling one makes the pool replace the page (or the context).
const PAGE_TAINTING = ['addInitScript', 'exposeBinding', 'exposeFunction', 'routeWebSocket', 'routeFromHAR', 'addLocatorHandler']
const CONTEXT_TAINTING = [
  'addInitScript', 'exposeBinding', 'exposeFunction', 'route', 'routeWebSocket', 'routeFromHAR', 'setExtraHTTPHeaders',
  'setGeolocation', 'setOffline', 'setHTTPCredentials', 'setDefaultTimeout', 'setDefaultNavigationTimeout'
]
const CLOCK_TAINTING = ['install', 'fastForward', 'pauseAt', 'resume', 'runFor', 'setFixedTime', 'setSystemTime']

/** What the guards read and mark on the lease they protect. */
export interface GuardedLease {
  readonly page: Page | undefined
  readonly job: JobRecord | undefined
  readonly mainFrameId: string | undefined
  /** Set while the pool itself opens a page, so the popup closer leaves it alone. */
  readonly openingPage: boolean
  /** Origins the context sent requests to since its last reset (their storage is cleared). */
  readonly origins: Set<string>
  readonly taint: Taint
  /** `page` closed: the lease forgets it if it is still its page. */
  pageClosed (page: Page): void
}

function noop (): void {}

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

function isMainNavigation (lease: GuardedLease, request: Request): boolean {
  if (!request.isNavigationRequest()) return false
  let frame: Frame
  try { frame = request.frame() } catch { return false }
  return lease.page !== undefined && frame === lease.page.mainFrame()
}

/** Whether a request carries credentials: user:password in its URL (a navigation, an XHR's), or an Authorization header. */
export function carriesCredentials (url: string, headers: Readonly<Record<string, string>>): boolean {
  if (headers.authorization !== undefined || headers['proxy-authorization'] !== undefined) return true
  if (!url.includes('@')) return false
  try {
    const parsed = new URL(url)
    return parsed.username !== '' || parsed.password !== ''
  } catch {
    return false
  }
}

/** Whether a response leaves the context something a reset cannot clear: an auth challenge, a client-hint opt-in. */
export function leavesContextState (status: number, headers: Readonly<Record<string, string>>): boolean {
  return status === 401 || status === 407 || headers['accept-ch'] !== undefined || headers['critical-ch'] !== undefined
}

/** Closes popups and pages a job opens, records the origins it reaches, and marks lasting context changes. */
export function guardContext (context: BrowserContext, lease: GuardedLease): void {
  context.on('page', (page: Page) => {
    if (lease.openingPage || page === lease.page) return
    page.close().catch(noop)
  })
  context.on('request', (request: Request) => {
    const url = request.url()
    const origin = originOf(url)
    if (origin !== undefined) lease.origins.add(origin)
    if (carriesCredentials(url, request.headers())) lease.taint.context = true
  })
  context.on('response', (response: Response) => {
    if (leavesContextState(response.status(), response.headers())) lease.taint.context = true
  })
  shadowMethods(context, CONTEXT_TAINTING, () => { lease.taint.context = true })
  shadowMethods(context.clock, CLOCK_TAINTING, () => { lease.taint.context = true })
  shadowMethods(context.tracing, ['start', 'startChunk'], () => { lease.taint.context = true })
}

/** Dialogs, crashes, main-frame navigations, lasting page changes, and the schemes a job may navigate to. */
export function guardPage (page: Page, lease: GuardedLease): void {
  page.on('dialog', (dialog: Dialog) => {
    // Leaving must win over a beforeunload handler; every other dialog is dismissed.
    const settle = dialog.type() === 'beforeunload' ? dialog.accept() : dialog.dismiss()
    settle.catch(noop)
  })
  page.on('crash', () => {
    lease.job?.controller.abort(pageCrashed('job', new Error('the page crashed')))
    lease.taint.page = true
  })
  page.on('close', () => { lease.pageClosed(page) })
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
  shadowMethods(page, PAGE_TAINTING, () => { lease.taint.page = true })
  shadowMethods(page.keyboard, ['down'], () => { lease.taint.page = true })
  shadowMethods(page.mouse, ['down'], () => { lease.taint.page = true })
  shadowMethods(page.coverage, ['startJSCoverage', 'startCSSCoverage'], () => { lease.taint.page = true })
  shadowMethods(page, ['setViewportSize'], () => { lease.taint.viewport = true })
  shadowMethods(page, ['setDefaultTimeout', 'setDefaultNavigationTimeout'], () => { lease.taint.timeouts = true })
  shadowMethods(page, ['route'], () => { lease.taint.routes = true })

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
        lease.job?.refusals.push(refusal)
        lease.job?.navigations.push(url)
        lease.job?.failedNavigations.push(url)
        throw refusalError(refusal)
      }
      return await goto(url, gotoOptions)
    }
  })
}

interface PausedRequest {
  requestId: string
  request: { url: string, headers: Record<string, string> }
  frameId: string
  resourceType: string
}

/** The Fetch handler on the pool's CDP session of a page; interception starts with SCHEME_PATTERNS. */
export async function interceptRequests (session: CDPSession, lease: GuardedLease): Promise<void> {
  session.on('Fetch.requestPaused', (event) => { onRequestPaused(lease, session, event) })
  await interceptSchemesOnly(session)
}

/** Intercepts every request too, while a job forwards origin-scoped headers or blocks ads. */
export async function interceptAllRequests (session: CDPSession): Promise<void> {
  await session.send('Fetch.enable', { patterns: [...SCHEME_PATTERNS, ...ALL_PATTERNS] })
}

/** Back to intercepting the refused schemes only. */
export async function interceptSchemesOnly (session: CDPSession): Promise<void> {
  await session.send('Fetch.enable', { patterns: SCHEME_PATTERNS })
}

/**
 * Teaches a new context its egress proxy's credential (egress-proxy.ts): one request to the proxy's own address,
 * the only one intercepted meanwhile, whose 407 challenge this session answers. Chromium keeps the credential for
 * the proxy and sends it with every later request and tunnel of the context (no page can read it; Playwright's
 * own proxy credentials would intercept every request and turn the HTTP cache off). Throws when the proxy did not
 * take it. Interception is then as interceptRequests() left it.
 */
export async function authenticateEgress (session: CDPSession, proxy: { server: string, credentials: { username: string, password: string } | undefined }): Promise<void> {
  const { credentials } = proxy
  if (credentials === undefined) return
  const probe = `${proxy.server}/`
  const onAuth = (event: { requestId: string, authChallenge: { source?: 'Server' | 'Proxy' } }): void => {
    const authChallengeResponse = event.authChallenge.source === 'Proxy'
      ? { response: 'ProvideCredentials' as const, ...credentials }
      : { response: 'CancelAuth' as const }
    session.send('Fetch.continueWithAuth', { requestId: event.requestId, authChallengeResponse }).catch(noop)
  }
  session.on('Fetch.authRequired', onAuth)
  try {
    await session.send('Fetch.enable', { handleAuthRequests: true, patterns: [...SCHEME_PATTERNS, { urlPattern: probe, requestStage: 'Request' }] })
    const { result } = await session.send('Runtime.evaluate', {
      expression: `fetch(${JSON.stringify(probe)}, { cache: 'no-store', mode: 'no-cors' }).then(() => true, () => false)`,
      awaitPromise: true,
      returnByValue: true
    })
    if (result.value !== true) throw new Error('the egress proxy did not take the browser\'s credential')
  } finally {
    session.off('Fetch.authRequired', onAuth)
  }
  await interceptSchemesOnly(session)
}

function onRequestPaused (lease: GuardedLease, session: CDPSession, event: PausedRequest): void {
  const { requestId, request } = event
  const scheme = schemeOf(request.url)
  const job = lease.job
  if (scheme === undefined || !WEB_SCHEMES.has(scheme)) {
    job?.refusals.push({ kind: 'blocked', channel: 'scheme', url: request.url, host: '', port: 0, reason: `a ${scheme ?? 'malformed'} URL` })
    session.send('Fetch.failRequest', { requestId, errorReason: 'BlockedByClient' }).catch(noop)
    return
  }
  if (job === undefined) {
    session.send('Fetch.continueRequest', { requestId }).catch(noop)
    return
  }
  const mainDocument = event.resourceType === 'Document' && event.frameId === lease.mainFrameId
  if (job.targetOrigin === undefined && mainDocument) job.targetOrigin = originOf(request.url)
  // The job's own page is never filtered; everything it loads is.
  if (job.adblock !== undefined && !mainDocument && blockRequest(job, session, event)) return
  if (Object.keys(job.scopedHeaders).length === 0) {
    session.send('Fetch.continueRequest', { requestId }).catch(noop)
    return
  }
  const headers = headersForRequest(request.headers, request.url, job.targetOrigin, job.scopedHeaders)
  session.send('Fetch.continueRequest', { requestId, headers }).catch(noop)
}

/** Fails or answers a request the job's filters match; false when they let it through. */
function blockRequest (job: JobRecord, session: CDPSession, event: PausedRequest): boolean {
  const adblock = job.adblock
  if (adblock === undefined) return false
  const { requestId, request } = event
  const type = event.resourceType === 'Document' ? 'sub_frame' : event.resourceType.toLowerCase()
  const sourceUrl = request.headers.Referer ?? request.headers.referer ?? job.navigations.at(-1) ?? request.url
  const verdict = adblock.match({ url: request.url, sourceUrl, type })
  if (verdict.action === 'allow') return false
  job.blocked += 1
  if (verdict.action === 'redirect') {
    session.send('Fetch.fulfillRequest', {
      requestId,
      responseCode: 200,
      responseHeaders: [{ name: 'content-type', value: verdict.contentType }, { name: 'access-control-allow-origin', value: '*' }],
      body: verdict.body.toString('base64')
    }).catch(noop)
  } else {
    session.send('Fetch.failRequest', { requestId, errorReason: 'BlockedByClient' }).catch(noop)
  }
  return true
}
