// One job from its start to its release: a lease of the job's profile (an idle one, else a new one), the job's
// emulation, the job itself raced against its signal, the answer (jobs.ts), then, after the caller has it, the
// release: the lease is reset and parked, or closed, and the slot is given back.
import type { BrowserContext, BrowserContextOptions, Page } from 'playwright-core'
import { applyPageEmulation, pageEmulationKey, splitForwardedHeaders } from '../emulation.ts'
import { BrowserError, toBrowserError } from '../errors.ts'
import type { Drain } from './drain.ts'
import { createJobRecord, outcomeOf, refusedNavigation, resultOf } from './jobs.ts'
import type { JobRecord } from './jobs.ts'
import { Lease } from './lease.ts'
import { authenticateEgress } from './page-guards.ts'
import type { LeaseDeps, LeaseProfile } from './lease.ts'
import { parkAfterReset, worthResetting } from './lease-state.ts'
import type { ReusePolicy } from './lease-state.ts'
import type { Leases } from './leases.ts'
import type { Limiter } from './limiter.ts'
import type { Generation, Supervisor } from './supervisor.ts'
import { abortError, isTimedOut, within } from '../../util/abort.ts'
import type { BrowserJob, BrowserPoolLog, FilledRunOptions, JobInfo, PoolCounters } from './types.ts'

export interface RunnerPolicy extends ReusePolicy {
  maxJobsPerBrowser: number
  /** How long a job may take to settle after its signal aborted; a reset may take twice that. */
  resetTimeoutMs: number
}

export interface RunnerDeps {
  supervisor: Supervisor
  leases: Leases
  limiter: Limiter
  drain: Drain
  counters: PoolCounters
  leaseDeps: LeaseDeps
  policy: RunnerPolicy
  log: BrowserPoolLog | undefined
  /** Starts queued jobs that can start now. */
  pump: () => void
}

function noop (): void {}

export class JobRunner {
  readonly #deps: RunnerDeps

  constructor (deps: RunnerDeps) {
    this.#deps = deps
  }

  /** Runs `job` on `gen`, in a slot the caller has taken; the slot is given back when the job is released. */
  async execute<T> (gen: Generation, job: BrowserJob<T>, run: FilledRunOptions, profile: LeaseProfile): Promise<T> {
    const { supervisor, leases, counters, policy } = this.#deps
    const startedAt = performance.now()
    counters.jobs += 1
    supervisor.dispatch(gen, policy.maxJobsPerBrowser)
    const controller = new AbortController()
    const onCallerAbort = (): void => { controller.abort(run.signal.reason) }
    run.signal.addEventListener('abort', onCallerAbort, { once: true })
    if (run.signal.aborted) onCallerAbort()
    const { signal } = controller
    const record = createJobRecord(splitForwardedHeaders(run.emulation.extraHTTPHeaders).originScoped, controller, run.adblock)
    let jobPromise: Promise<T> | undefined
    /** How the job's own promise ended, once it has (undefined while it runs, or when it never started). */
    let jobEnded: 'fulfilled' | 'rejected' | undefined
    let lease: Lease | undefined
    try {
      if (signal.aborted) throw abortError(signal)
      // A reset context of this profile on this browser, else a new one.
      lease = leases.takeIdle(profile.key, gen)
      if (lease === undefined) {
        try {
          lease = await Lease.open(gen, run.emulation, profile, this.#deps.leaseDeps)
        } catch (err) {
          throw toBrowserError(err, 'context')
        }
      }
      leases.hold(lease)
      const preparedFrom = performance.now()
      if (run.timings !== undefined) run.timings.lease = preparedFrom - startedAt
      const held = lease
      const { page, captureSession } = lease
      if (page === undefined || captureSession === undefined) throw new BrowserError('EFATAL', 'context', true, { cause: new Error('no page') })
      lease.begin(record, run.proxy)
      await this.#prepare(lease, page, run, record)
      if (run.timings !== undefined) run.timings.prepare = performance.now() - preparedFrom

      const info: JobInfo = {
        signal,
        refusals: () => record.refusals,
        refusedNavigation: () => refusedNavigation(record),
        captureSession: () => captureSession,
        blockedRequests: () => record.blocked,
        discardPage: () => { held.taint.page = true },
        proxied: () => held.proxy.stats().jobProxied,
        stageContext: async (options) => await stageContextOf(page, held.proxy, options)
      }
      jobPromise = (async () => await job(page, info))()
      // Noted before the caller can see the outcome: a job that has ended is released at once (below).
      jobPromise.then(() => { jobEnded = 'fulfilled' }, () => { jobEnded = 'rejected' })
      return resultOf(record, await outcomeOf(jobPromise, signal))
    } finally {
      run.signal.removeEventListener('abort', onCallerAbort)
      // The job is released after it has settled and its lease is reset; the caller does not wait for that.
      const settled = jobPromise
      const used = lease
      const done = (async () => {
        // Only a job still running is waited for: one that has ended is answered before its caller goes on, so a
        // request sent right after the answer finds this slot resetting (limiter.ts holds it back for the reset).
        if (settled !== undefined && jobEnded === undefined) {
          const finished = !isTimedOut(await within(settled.then(() => true, () => true), policy.resetTimeoutMs))
          // A job that ignores its signal may still hold the page: its context must not serve anyone else.
          if (!finished && used !== undefined) used.taint.context = true
        }
        used?.end()
        // The job is over: its slot is free once the lease is reset or closed, and a waiter may count on that.
        const answeredAt = performance.now()
        this.#deps.limiter.answered()
        // Only a job that succeeded measures the queue's pace: a crash, a timeout or a hostile page says nothing of
        // how long the next job holds a slot, and one such outlier would refuse requests that could have run.
        // jobEnded is set by then: its handler was attached before the wait's.
        await this.#release(used, gen, startedAt, answeredAt, jobEnded === 'fulfilled')
      })()
      this.#deps.drain.track(done)
      // Jobs the abort did not stop keep running detached; the pool has moved on.
      void jobPromise?.catch(noop)
    }
  }

  /** Makes an abort close the page, then applies the job's own emulation, header forwarding and `adblock`. */
  async #prepare (lease: Lease, page: Page, run: FilledRunOptions, record: JobRecord): Promise<void> {
    const { signal } = record.controller
    // Abort closes the page: every pending Playwright call on it rejects at once.
    const onAbort = (): void => {
      const target = lease.page
      if (target !== undefined) target.close().catch(noop)
    }
    signal.addEventListener('abort', onAbort, { once: true })
    // The page keeps its emulation between jobs: when the last job left exactly this one (and no media type), the
    // round trip is saved. Unknown until this job's is applied.
    const emulationKey = pageEmulationKey(run.emulation)
    const emulated = lease.pageEmulation === emulationKey
    lease.pageEmulation = undefined
    try {
      // Independent commands on the page: sent together, one round trip of waiting instead of three.
      await Promise.all([
        emulated ? undefined : applyPageEmulation(page, run.emulation),
        lease.intercept(Object.keys(record.scopedHeaders).length > 0 || record.adblock !== undefined)
      ])
    } catch (err) {
      if (signal.aborted) throw abortError(signal)
      throw toBrowserError(err, 'context')
    }
    if (signal.aborted) throw abortError(signal)
    // A job that may emulate a media type leaves it to be cleared by the next one.
    if (run.changesMedia === false) lease.pageEmulation = emulationKey
  }

  async #release (lease: Lease | undefined, gen: Generation, startedAt: number, answeredAt: number, measured: boolean): Promise<void> {
    const { supervisor, leases, limiter, drain, policy, log, counters } = this.#deps
    // Only a reset that worked measures the reset time: one that failed or ran out of time was ended by the pool's
    // bound, and one such outlier would make waiters wait for it (or refuse them as late).
    let resetWorked = false
    try {
      if (lease !== undefined) {
        const t = performance.now()
        const keep = worthResetting({
          closing: supervisor.closing,
          generationUp: lease.gen.state === 'up',
          contextTainted: lease.taint.context,
          jobs: lease.jobs
        }, policy)
        const ok = keep && await within(lease.reset().then(() => true, (err: unknown) => {
          log?.debug({ err }, 'page reset failed; closing the context')
          return false
        }), policy.resetTimeoutMs * 2) === true
        resetWorked = ok
        if (keep) {
          counters.resets += 1
          counters.resetSeconds += (performance.now() - t) / 1000
        }
        leases.letGo(lease)
        // The generation may have died or retired while the reset ran, and the job's last events (a response that
        // came in as it ended) may have tainted the context meanwhile.
        if (parkAfterReset(ok && !lease.taint.context, supervisor.closing, lease.gen.state === 'up')) {
          leases.park(lease)
        } else if (supervisor.closing) {
          // close() must not return before the proxy is down.
          await lease.closeNow()
        } else {
          lease.close()
        }
      }
    } finally {
      const now = performance.now()
      limiter.release(measured ? now - startedAt : undefined, resetWorked ? now - answeredAt : NaN)
      supervisor.released(gen)
      drain.wake()
      this.#deps.pump()
    }
  }
}

/**
 * A context beside the job's for one of its stages, behind the job's egress proxy: given its credential once, as the
 * lease gives it to a job's context (authenticateEgress), through a page opened and closed for that.
 */
async function stageContextOf (page: Page, proxy: { server: string, credentials: { username: string, password: string } | undefined }, options: BrowserContextOptions): Promise<BrowserContext> {
  const browser = page.context().browser()
  if (browser === null) throw new BrowserError('EFATAL', 'context', false, { cause: new Error('no browser for a stage context') })
  const context = await browser.newContext({ ...options, javaScriptEnabled: true, proxy: { server: proxy.server, bypass: '<-loopback>' } })
  try {
    const opener = await context.newPage()
    const session = await context.newCDPSession(opener)
    // The opener only asks the proxy for itself: what the handshake pauses goes on (the lease's guards do this for a job).
    session.on('Fetch.requestPaused', (event) => { session.send('Fetch.continueRequest', { requestId: event.requestId }).catch(() => {}) })
    await authenticateEgress(session, proxy)
    await session.detach()
    await opener.close()
    return context
  } catch (err) {
    await context.close().catch(() => {})
    throw err
  }
}
