// The CDP session a capture runs on, with device metrics equal to the page's: Chromium captures with the emulation of
// the session that asks, so that session is given the page's metrics (read back from the page) and keeps them. The
// session itself is the page's (page/cdp-session.ts), kept by the page's owner; a capture of a page we opened
// ourselves (the overlay stage) uses a forced session of its own. Also the time limit of a capture step.
import type { CDPSession, Page } from 'playwright-core'
import { AppError } from '../../errors.ts'
import { isTimedOut, within } from '../../util/abort.ts'
import type { Budget } from '../page/budget.ts'
import type { DomWindow } from '../page/dom.ts'
import type { DeviceMetrics, Orientation, PageCdpSession } from '../page/cdp-session.ts'

const ORIENTATIONS: Readonly<Record<string, Orientation>> = {
  'portrait-primary': 'portraitPrimary',
  'portrait-secondary': 'portraitSecondary',
  'landscape-primary': 'landscapePrimary',
  'landscape-secondary': 'landscapeSecondary'
}

interface PageState {
  dpr: number
  innerWidth: number
  innerHeight: number
  screenWidth: number
  screenHeight: number
  orientation: string
  angle: number
}

function readState (page: Page): Promise<PageState> {
  return page.evaluate(() => {
    const win = globalThis as unknown as DomWindow
    return {
      dpr: win.devicePixelRatio,
      innerWidth: win.innerWidth,
      innerHeight: win.innerHeight,
      screenWidth: win.screen.width,
      screenHeight: win.screen.height,
      orientation: win.screen.orientation?.type ?? 'landscape-primary',
      angle: win.screen.orientation?.angle ?? 0
    }
  })
}

function sameState (a: PageState, b: PageState): boolean {
  return a.dpr === b.dpr && a.innerWidth === b.innerWidth && a.innerHeight === b.innerHeight &&
    a.screenWidth === b.screenWidth && a.screenHeight === b.screenHeight
}

/**
 * The device metrics the page is emulated with, as Playwright set them: viewport from Playwright, the rest read in
 * the page. `mobile` is not observable from the page; Playwright gives mobile viewports a portrait orientation or a
 * 90° angle and desktop ones landscape at 0°, which tells them apart (checked after applying, see openSession).
 */
function metricsOf (page: Page, state: PageState): DeviceMetrics {
  const viewport = page.viewportSize() ?? { width: state.innerWidth, height: state.innerHeight }
  const type = ORIENTATIONS[state.orientation] ?? 'landscapePrimary'
  return {
    deviceScaleFactor: state.dpr,
    width: viewport.width,
    height: viewport.height,
    screenWidth: state.screenWidth,
    screenHeight: state.screenHeight,
    mobile: type === 'portraitPrimary' || state.angle === 90,
    orientation: { type, angle: state.angle }
  }
}

async function applyMetrics (session: CDPSession, metrics: DeviceMetrics): Promise<void> {
  await session.send('Emulation.setDeviceMetricsOverride', {
    mobile: metrics.mobile,
    width: metrics.width,
    height: metrics.height,
    deviceScaleFactor: metrics.deviceScaleFactor,
    screenWidth: metrics.screenWidth,
    screenHeight: metrics.screenHeight,
    screenOrientation: metrics.orientation,
    dontSetVisibleSize: true
  })
}

export interface CaptureSession {
  session: CDPSession
  metrics: DeviceMetrics
  /** Detaches, and restores the page's own emulation when it must go on being used. */
  close (): Promise<void>
}

function sameMetrics (a: DeviceMetrics, b: DeviceMetrics): boolean {
  return a.deviceScaleFactor === b.deviceScaleFactor && a.width === b.width && a.height === b.height &&
    a.screenWidth === b.screenWidth && a.screenHeight === b.screenHeight && a.orientation.type === b.orientation.type &&
    a.orientation.angle === b.orientation.angle
}

/** A session of our own on `page` (a page we opened) with `forced` metrics, detached on close. */
export async function openForcedSession (page: Page, forced: DeviceMetrics): Promise<CaptureSession> {
  const session = await page.context().newCDPSession(page)
  try {
    await applyMetrics(session, forced)
  } catch (err) {
    await session.detach().catch(() => {})
    throw err
  }
  return { session, metrics: forced, close: async () => { await session.detach().catch(() => {}) } }
}

/**
 * The page's capture session with an emulation equal to the page's. A pooled page keeps one emulation profile for
 * all its jobs, so the metrics are set once and re-set only when the page's change; never detaching also spares
 * restoring Playwright's emulation after each capture (detaching drops it).
 */
export async function openSession (page: Page, cdp: PageCdpSession): Promise<CaptureSession> {
  // A page's scale factor, mobile flag and screen are its context's, fixed for its life; only its viewport can change
  // (setViewportSize, which Playwright knows). So once the session has the metrics of this viewport, they still hold:
  // no round trip to read the page's state again.
  const known = cdp.metrics
  const viewport = page.viewportSize()
  if (known !== undefined && viewport !== null && viewport.width === known.width && viewport.height === known.height) {
    return { session: await cdp.get(), metrics: known, close: async () => {} }
  }
  const before = await readState(page)
  const metrics = metricsOf(page, before)
  const session = await cdp.get()
  if (cdp.metrics !== undefined && sameMetrics(cdp.metrics, metrics)) {
    return { session, metrics: cdp.metrics, close: async () => {} }
  }
  try {
    await applyMetrics(session, metrics)
    if (!sameState(before, await readState(page))) {
      // The mobile guess was wrong: the other value must be the page's.
      metrics.mobile = !metrics.mobile
      await applyMetrics(session, metrics)
    }
  } catch (err) {
    cdp.forget()
    throw err
  }
  cdp.metrics = metrics
  return { session, metrics, close: async () => {} }
}

export function captureTimeout (): AppError {
  return new AppError('EBRWSRTIMEOUT', { data: { screenshot: 'The capture did not finish in time.' } })
}

/** Races a browser step against the time left: EBRWSRTIMEOUT when it does not finish. */
export async function inTime<T> (work: Promise<T>, budget: Budget, onTimeout: () => AppError = captureTimeout): Promise<T> {
  const outcome = await within(work, budget.remaining(), budget.signal)
  if (isTimedOut(outcome)) throw onTimeout()
  return outcome
}
