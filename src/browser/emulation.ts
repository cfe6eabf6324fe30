// What a page looks like to the site (docs/api.md §3.5), and how it is applied.
//
// The pool reuses a context + page from job to job and resets it in between (see pool/lease.ts). Emulation is split in
// two by what Playwright can change on a live page:
//  - the context profile: viewport (and screen), deviceScaleFactor, isMobile, hasTouch, user agent, JavaScript,
//    locale. These are Playwright context options, applied by Playwright to every frame, out-of-process iframe
//    and worker. A job only ever gets a context of its own profile (a reset one, or a new one), so nothing of the
//    kind carries over from one job to the next.
//  - per-job settings on the reused page: media type, colour scheme and reduced motion (page.emulateMedia), and
//    the forwarded headers. Every job sets all of them.
//
// Forwarded headers (docs/api.md §3.5 `headers`, §13 decision 13): `user-agent` replaces the device's user agent (so it
// is part of the profile, and navigator.userAgent agrees); `accept-language` goes to every request
// (page.setExtraHTTPHeaders); every other header goes only to requests for the target's origin, which is the
// origin of the job's first main-frame document request. Those are set by a CDP Fetch handler on the page
// (pool/page-guards.ts) that sees every request, each redirect hop included, and rewrites its whole header list: forwarded
// names are removed from every request outside the target's origin and added to those inside it. (Playwright's
// route.continue/fallback was measured to let a header added to the first hop reach a cross-origin redirect
// target; the Fetch handler does not.)
import type { BrowserContextOptions, Page } from 'playwright-core'

/**
 * The schema's ColorScheme (schemas/options.ts COLOR_SCHEMES). Not imported from there while schemas/ imports
 * browser/devices.ts (a folder cycle); test/unit/emulation-keys.test.ts holds the two equal at compile time.
 */
export type ColorScheme = 'light' | 'dark' | 'no-preference'

export interface Emulation {
  viewport: { width: number, height: number }
  deviceScaleFactor: number
  isMobile: boolean
  hasTouch: boolean
  userAgent: string
  javaScriptEnabled: boolean
  colorScheme: ColorScheme
  reducedMotion: boolean
  /** Forwarded headers (already validated by the query layer); names in any case. */
  extraHTTPHeaders: Record<string, string>
  locale?: string
}

/**
 * An emulation as a job asks for it: without a user agent, the pool's default is sent, the desktop user agent of
 * the Chromium it runs (browser/devices.ts desktopUserAgent), filled in by the pool (withDefaultUserAgent).
 */
export type JobEmulation = Omit<Emulation, 'userAgent'> & { userAgent?: string | undefined }

/** The job's emulation with the pool's default user agent where it names none. */
export function withDefaultUserAgent (emulation: JobEmulation, defaultUserAgent: string): Emulation {
  return emulation.userAgent === undefined ? { ...emulation, userAgent: defaultUserAgent } : emulation as Emulation
}

/** Request headers never forwarded: framing, connection management and the proxy's. */
const DROPPED_HEADERS: ReadonlySet<string> = new Set([
  'host', 'content-length', 'connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'proxy-authenticate',
  'te', 'trailer', 'transfer-encoding', 'upgrade', 'expect'
])

/** Headers sent to every origin (docs/api.md §3.5); everything else only to the target's origin. */
export const GLOBAL_HEADERS: ReadonlySet<string> = new Set(['user-agent', 'accept-language'])

export interface ForwardedHeaders {
  /** An explicit `user-agent` header: it overrides the device's. */
  userAgent?: string
  /** `accept-language`, sent everywhere. */
  acceptLanguage?: string
  /** Lower-case name -> value, for the target's origin only. */
  originScoped: Record<string, string>
}

export function splitForwardedHeaders (headers: Record<string, string>): ForwardedHeaders {
  const out: ForwardedHeaders = { originScoped: {} }
  const scoped: Array<[string, string]> = []
  for (const [rawName, value] of Object.entries(headers)) {
    const name = rawName.trim().toLowerCase()
    if (name === '' || DROPPED_HEADERS.has(name) || name.startsWith('proxy-')) continue
    if (name === 'user-agent') out.userAgent = value
    else if (name === 'accept-language') out.acceptLanguage = value
    else scoped.push([name, value])
  }
  out.originScoped = Object.fromEntries(scoped)
  return out
}

/** The user agent a job's pages send: an explicit forwarded `user-agent` beats the device's. */
export function effectiveUserAgent (emulation: Emulation): string {
  return splitForwardedHeaders(emulation.extraHTTPHeaders).userAgent ?? emulation.userAgent
}

/**
 * A context's key, made of every field of its options (nested objects too, in any order), so a setting added to
 * contextOptionsFor is part of the key without being named twice: contexts of different settings are never shared.
 */
export function contextKeyOf (options: BrowserContextOptions): string {
  return JSON.stringify(options, (_name, value: unknown) =>
    typeof value === 'object' && value !== null && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0))
      : value)
}

/** The part of an Emulation that lives in the context: equal keys may share a context, different ones may not. */
export function profileKey (emulation: Emulation): string {
  return contextKeyOf(contextOptionsFor(emulation))
}

/** Playwright context options for an Emulation's profile (the pool adds proxy, downloads and service workers). */
export function contextOptionsFor (emulation: Emulation): BrowserContextOptions {
  const viewport = { width: emulation.viewport.width, height: emulation.viewport.height }
  return {
    viewport,
    screen: viewport,
    deviceScaleFactor: emulation.deviceScaleFactor,
    isMobile: emulation.isMobile,
    hasTouch: emulation.hasTouch,
    userAgent: effectiveUserAgent(emulation),
    javaScriptEnabled: emulation.javaScriptEnabled,
    ...(emulation.locale === undefined ? {} : { locale: emulation.locale }),
    // Per job, on the page (applyPageEmulation); the context itself stays neutral.
    colorScheme: null,
    reducedMotion: null
  }
}

/**
 * Sets the per-job part of an Emulation on a (reused) page. Every setting is set, media type included, so nothing a
 * previous job set (through its Emulation or by calling emulateMedia/setExtraHTTPHeaders itself) stays.
 */
/** The part of an Emulation applyPageEmulation sets on the page: equal keys set the same state. */
export function pageEmulationKey (emulation: Emulation): string {
  return JSON.stringify([emulation.colorScheme, emulation.reducedMotion, splitForwardedHeaders(emulation.extraHTTPHeaders).acceptLanguage ?? null])
}

export async function applyPageEmulation (page: Page, emulation: Emulation): Promise<void> {
  const { acceptLanguage } = splitForwardedHeaders(emulation.extraHTTPHeaders)
  await Promise.all([
    page.emulateMedia({
      media: null,
      // `no-preference` is no longer a state browsers report: it means "no emulation" (the browser's own default).
      colorScheme: emulation.colorScheme === 'no-preference' ? null : emulation.colorScheme,
      reducedMotion: emulation.reducedMotion ? 'reduce' : null,
      forcedColors: null,
      contrast: null
    }),
    page.setExtraHTTPHeaders(acceptLanguage === undefined ? {} : { 'accept-language': acceptLanguage })
  ])
}

export interface HeaderEntry {
  name: string
  value: string
}

/**
 * The full header list for one request when origin-scoped headers are forwarded: the request's own headers
 * without any forwarded name (one may have been carried over a redirect), plus the forwarded ones when the
 * request goes to the target's origin.
 */
export function headersForRequest (
  requestHeaders: Record<string, string>,
  requestUrl: string,
  targetOrigin: string | undefined,
  originScoped: Record<string, string>
): HeaderEntry[] {
  const forwarded = new Set(Object.keys(originScoped))
  const out: HeaderEntry[] = []
  for (const [name, value] of Object.entries(requestHeaders)) {
    if (!forwarded.has(name.toLowerCase())) out.push({ name, value })
  }
  let origin: string | undefined
  try { origin = new URL(requestUrl).origin } catch {}
  if (targetOrigin !== undefined && origin === targetOrigin) {
    for (const [name, value] of Object.entries(originScoped)) out.push({ name, value })
  }
  return out
}
