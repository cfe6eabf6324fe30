// The supervised browser (the gotenberg and browserless habits): the only place that launches or
// connects to Chromium. One browser; `concurrency` jobs at once; a bounded FIFO queue (beyond it EBUSY at once);
// relaunch after a crash or disconnect and after `maxJobsPerBrowser` jobs (the old browser finishes its running
// jobs first); close() drains, then closes, then kills whatever of the browser is left.
//
// Each concern has its room: supervisor.ts (browser generations), limiter.ts (slots and queue), lease.ts and
// leases.ts (reused, reset contexts and pages), page-guards.ts (page hardening and egress), jobs.ts (what a job
// did and its answer), runner.ts (one job from start to release), drain.ts (what close() waits for),
// lazy-pool.ts (a pool created on first use). This file wires them together.
import { AsyncResource } from 'node:async_hooks'
import { randomUUID } from 'node:crypto'
import { childEnvironment } from '../../config.ts'
import { AppError } from '../../errors.ts'
import { findChromium } from '../chromium.ts'
import { desktopUserAgent } from '../../schemas/devices.ts'
import { withDefaultUserAgent } from '../emulation.ts'
import { createEgressProxy } from '../egress-proxy.ts'
import { BrowserError, browserShuttingDown, browserUnavailable, toBrowserError } from '../errors.ts'
import { Drain } from './drain.ts'
export { createLazyBrowserPool } from './lazy-pool.ts'
export type { LazyBrowserPool } from './lazy-pool.ts'
import { profileOf } from './lease.ts'
import { Leases } from './leases.ts'
import { Limiter } from './limiter.ts'
import { JobRunner } from './runner.ts'
import { Supervisor } from './supervisor.ts'
import { abortError } from '../../util/abort.ts'
import { zeroCounters, type BrowserJob, type BrowserPool, type BrowserPoolDeps, type BrowserPoolOptions, type PoolCounters, type PoolRunOptions, type SlotRunOptions, type SlotWork } from './types.ts'

export type {
  BrowserJob, BrowserPool, BrowserPoolDeps, BrowserPoolLog, BrowserPoolOptions, BrowserPoolStats, BrowserReadiness, JobInfo,
  PoolRunOptions, SlotWork
} from './types.ts'

const DEFAULTS = {
  maxJobsPerBrowser: 1000,
  maxJobsPerContext: 100,
  launchTimeoutMs: 30_000,
  closeTimeoutMs: 5_000,
  resetTimeoutMs: 5_000,
  drainTimeoutMs: 30_000
}

/** The retry-after of EBROWSER while relaunches fail: they are tried every few seconds (supervisor.ts). */
const RELAUNCH_RETRY_MS = 5_000

function busyError (detail: string, retryAfterMs = 5_000): AppError {
  return new AppError('EBUSY', { headers: { 'retry-after': String(Math.max(1, Math.ceil(retryAfterMs / 1000))) }, data: { browser: detail } })
}

/** The queue's answer to a waiter it did not take: full, or too late to start before the deadline. */
function refusal (limiter: Limiter, admission: 'full' | 'late'): AppError {
  const waitMs = limiter.waitFor(limiter.queued)
  return admission === 'full'
    ? busyError(`The browser queue is full (${limiter.queueLimit} waiting).`, waitMs)
    : lateError(waitMs)
}

function lateError (waitMs: number): AppError {
  return busyError(`The browser could not start this job before its deadline (about ${Math.ceil(waitMs / 1000)} s of jobs are ahead of it).`, waitMs)
}

export async function createBrowserPool (options: BrowserPoolOptions, deps: BrowserPoolDeps): Promise<BrowserPool> {
  const { guard, log } = deps
  const closeTimeoutMs = options.closeTimeoutMs ?? DEFAULTS.closeTimeoutMs
  const resetTimeoutMs = options.resetTimeoutMs ?? DEFAULTS.resetTimeoutMs
  const drainTimeoutMs = options.drainTimeoutMs ?? DEFAULTS.drainTimeoutMs
  const wsEndpoint = options.wsEndpoint !== undefined && options.wsEndpoint !== '' ? options.wsEndpoint : undefined
  // Chromium gets this environment and nothing else of the service's (docs/security.md); no shell looks it up.
  const env = options.env ?? childEnvironment({})
  const executablePath = wsEndpoint !== undefined ? undefined : findChromium({ chromiumPath: options.chromiumPath, searchPath: options.searchPath ?? env.PATH })
  const proxyOptions = {
    guard,
    // Every proxy asks for a credential of its own: on loopback any local process could reach it, and a remote
    // browser reaches it over a network (docs/security.md). Each context's browser learns it once (lease.ts).
    authenticate: true,
    ...(log === undefined ? {} : { log }),
    ...(options.egress?.listenHost === undefined ? {} : { listenHost: options.egress.listenHost }),
    ...(options.egress?.advertisedHost === undefined ? {} : { advertisedHost: options.egress.advertisedHost }),
    proxyCa: options.proxyCa
  }
  const limiter = new Limiter({ concurrency: options.concurrency, queueLimit: options.queueLimit, abortError, lateError, wake: () => { pump() } })
  const maxIdleContexts = Math.max(0, Math.floor(options.maxIdleContexts ?? limiter.concurrency + 2))
  // The browser-level proxy: catches anything not created in one of our contexts. Its refusals belong to no job.
  const defaultProxy = await createEgressProxy(proxyOptions)

  const counters: PoolCounters = zeroCounters()
  const leases = new Leases(maxIdleContexts)
  const drain = new Drain()
  const supervisor = new Supervisor({
    wsEndpoint,
    executablePath,
    extraArgs: options.extraArgs ?? [],
    env,
    proxyServer: defaultProxy.server,
    ...(defaultProxy.credentials === undefined ? {} : { proxyCredentials: defaultProxy.credentials }),
    poolId: randomUUID(),
    launchTimeoutMs: options.launchTimeoutMs ?? DEFAULTS.launchTimeoutMs,
    closeTimeoutMs
  }, {
    lost (gen) {
      // Running jobs on it fail now (their pages are gone), with a code that says a retry may work.
      leases.abortJobs((lease) => lease.gen === gen, () => new BrowserError('EFATAL', 'job', true, { cause: new Error('the browser disconnected') }))
      leases.dropIdle((lease) => lease.gen === gen)
    },
    retiring (gen) { leases.dropIdle((lease) => lease.gen === gen) },
    hasIdleLeases: (gen) => leases.hasIdleOn(gen),
    hasWaiting: () => limiter.queued > 0,
    // Whoever waits is told the browser would not start (EBROWSER), with the next attempt's time as retry-after.
    launchFailed (err) { limiter.flush(browserUnavailable(err, RELAUNCH_RETRY_MS)) },
    launchSettled () { pump() }
  }, counters, log)

  /** Starts queued jobs while there are free slots, or gets a browser going when there is none to run them on. */
  function pump (): void {
    if (!limiter.pump(() => supervisor.isUp())) supervisor.ensure()
  }

  const runner = new JobRunner({
    supervisor,
    leases,
    limiter,
    drain,
    counters,
    leaseDeps: { proxyOptions, counters, closeTimeoutMs, resetTimeoutMs },
    policy: {
      maxJobsPerBrowser: options.maxJobsPerBrowser ?? DEFAULTS.maxJobsPerBrowser,
      maxJobsPerContext: options.maxJobsPerContext ?? DEFAULTS.maxJobsPerContext,
      maxIdleContexts,
      resetTimeoutMs
    },
    log,
    pump
  })

  function run<T> (job: BrowserJob<T>, runOptions: PoolRunOptions): Promise<T> {
    const { signal } = runOptions
    if (supervisor.closing) return Promise.reject(browserShuttingDown())
    if (signal.aborted) return Promise.reject(abortError(signal))
    // The pool's own default user agent: the desktop one of the Chromium it runs now.
    const filled = { ...runOptions, emulation: withDefaultUserAgent(runOptions.emulation, desktopUserAgent(supervisor.version)) }
    const profile = profileOf(filled.emulation)
    const queuedAt = performance.now()
    return new Promise<T>((resolve, reject) => {
      // A queued job starts when another one lets go: it still runs in its own caller's async context.
      const start = AsyncResource.bind((): void => {
        const gen = supervisor.current
        if (gen === undefined) { reject(new BrowserError('EFATAL', 'job', true, { cause: new Error('no browser') })); return }
        limiter.acquire()
        if (runOptions.timings !== undefined) runOptions.timings.queue = performance.now() - queuedAt
        runner.execute(gen, job, filled, profile).then(resolve, reject)
      })
      // Room on a live browser and nobody ahead: start now.
      const admission = limiter.admit({ start, reject }, signal, supervisor.isUp(), runOptions.deadline)
      if (admission === 'full' || admission === 'late') reject(refusal(limiter, admission))
      else if (admission === 'queued') supervisor.ensure()
    })
  }

  /** The early verdict (docs/browser.md#admission): the EBUSY the queue would answer now for this deadline, counted. */
  function admissible (deadline?: number): AppError | undefined {
    if (supervisor.closing) return browserShuttingDown()
    // Relaunches failing: nothing would start before the next one, which may fail too.
    if (!supervisor.isUp() && supervisor.launchFailures > 0) return browserUnavailable(undefined, RELAUNCH_RETRY_MS)
    const admission = limiter.verdict(supervisor.isUp(), deadline)
    return admission === 'full' || admission === 'late' ? refusal(limiter, admission) : undefined
  }

  /** Slot work running now, each with the controller that stops it. */
  const slotWork = new Set<AbortController>()

  function runSlot<T> (work: SlotWork<T>, runOptions: SlotRunOptions): Promise<T> {
    const { signal } = runOptions
    if (supervisor.closing) return Promise.reject(browserShuttingDown())
    if (signal.aborted) return Promise.reject(abortError(signal))
    return new Promise<T>((resolve, reject) => {
      const start = AsyncResource.bind((): void => {
        limiter.acquire()
        const controller = new AbortController()
        const onAbort = (): void => { controller.abort(signal.reason) }
        signal.addEventListener('abort', onAbort, { once: true })
        if (signal.aborted) onAbort()
        slotWork.add(controller)
        const done = (async () => await work(controller.signal))().then(resolve, reject).finally(() => {
          signal.removeEventListener('abort', onAbort)
          slotWork.delete(controller)
          limiter.release()
          drain.wake()
          pump()
        })
        drain.track(done)
      })
      const admission = limiter.admit({ start, reject }, signal, supervisor.isUp(), runOptions.deadline)
      if (admission === 'full' || admission === 'late') reject(refusal(limiter, admission))
      else if (admission === 'queued') supervisor.ensure()
    })
  }

  const stopStarting = (): void => { supervisor.beginClose() }
  deps.signal?.addEventListener('abort', stopStarting, { once: true })
  if (deps.signal?.aborted === true) stopStarting()
  try {
    await supervisor.start()
  } catch (err) {
    await defaultProxy.close()
    throw toBrowserError(err, 'launch')
  } finally {
    deps.signal?.removeEventListener('abort', stopStarting)
  }

  let closed: Promise<void> | undefined

  async function close (): Promise<void> {
    closed ??= (async () => {
      supervisor.beginClose()
      limiter.flush(browserShuttingDown())
      // Running jobs finish (each within its own deadline); they are then released without a reset. Jobs still
      // running after drainTimeoutMs are aborted.
      await drain.settle(() => limiter.active, drainTimeoutMs, () => {
        leases.abortJobs(() => true, browserShuttingDown)
        for (const controller of slotWork) controller.abort(browserShuttingDown())
      })
      await supervisor.stopLaunching()
      const idle = leases.takeAllIdle()
      await Promise.allSettled(idle.map(async (lease) => { await lease.closeNow() }))
      await supervisor.closeAll()
      await defaultProxy.close()
    })()
    return await closed
  }

  return {
    run,
    runSlot,
    admissible,
    health: () => supervisor.health(),
    readiness: () => supervisor.readiness(),
    stats: () => ({ active: limiter.active, queued: limiter.queued, ...counters, refused: { ...limiter.refused }, jobMs: limiter.jobMs, paceMs: limiter.paceMs, resetMs: limiter.resetMs }),
    chromiumVersion: () => supervisor.version,
    browserPid: () => supervisor.current?.pid,
    close
  }
}
