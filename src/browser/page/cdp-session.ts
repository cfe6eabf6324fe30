// The CDP session captures run on (producers/capture-session.ts), and pagecast's own expressions are evaluated
// through (evaluate.ts): one per page, for the page's life. Chromium captures with the emulation of the session that
// asks, so this session is given device metrics equal to the page's and keeps them; it is never detached while the
// page serves, since detaching a session drops the page's device emulation and emulated media type altogether.
// Whoever owns the page keeps its session: for pooled pages that is the lease (pool/lease.ts), which hands it to the
// job through JobInfo, so it goes when the page does and nothing caches it by page.
import type { CDPSession, Page } from 'playwright-core'

export type Orientation = 'portraitPrimary' | 'portraitSecondary' | 'landscapePrimary' | 'landscapeSecondary'

/** Emulation.setDeviceMetricsOverride's parameters, as producers/capture-session.ts sets them. */
export interface DeviceMetrics {
  deviceScaleFactor: number
  width: number
  height: number
  screenWidth: number
  screenHeight: number
  mobile: boolean
  orientation: { type: Orientation, angle: number }
}

export class PageCdpSession {
  readonly page: Page
  /** The metrics last applied on the session; undefined until a capture applies them. */
  metrics: DeviceMetrics | undefined = undefined
  /** The session, or its opening (callers that ask at once share one). */
  #session: Promise<CDPSession> | undefined = undefined

  constructor (page: Page) {
    this.page = page
  }

  /** The session, opened on first use. */
  async get (): Promise<CDPSession> {
    if (this.#session === undefined) {
      const opening = this.page.context().newCDPSession(this.page)
      this.#session = opening
      // A failed opening is not kept: the next get() tries again.
      opening.catch(() => { if (this.#session === opening) this.#session = undefined })
    }
    return await this.#session
  }

  /** Detaches the session (its emulation can no longer be trusted); the next get() opens a new one. */
  forget (): void {
    const session = this.#session
    this.#session = undefined
    this.metrics = undefined
    session?.then(async (opened) => { await opened.detach() }).catch(() => {})
  }
}
