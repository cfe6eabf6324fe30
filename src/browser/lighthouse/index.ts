// `insights.lighthouse` (docs/api.md §3.4): Lighthouse, the npm package, run on the target with a Chromium of its own.
//
// Why a Chromium of its own rather than the pool's: Lighthouse drives a whole browser (it clears the origin's
// storage and cache, emulates a device, throttles, records a trace of every process) and its numbers are only
// meaningful with nothing else in that browser; the pool's browser speaks Playwright over a pipe, and opening a
// DevTools port on it would let any local process drive every job's page. A short-lived browser (about half a
// second to start, against the seconds Lighthouse takes) is isolated, has a fresh profile, dies with the run, and
// is killed outright at the request's deadline.
//
// Each run: waits for its turn (one run at a time per instance, mutex.ts), takes one slot of the browser queue (so
// it counts against BROWSER_CONCURRENCY and gets EBUSY when the queue is full), starts an egress proxy of its own
// behind the address guard (the request's `proxy` chained behind it), and has the Lighthouse worker thread
// (host.ts, worker.ts) check the config, launch the browser (chromium.ts) and run Lighthouse through puppeteer-core.
// At the deadline the browser's process group is killed and the request fails with ETIMEOUT; whatever happens, the
// browser, the proxy and the profile are gone before the run answers. The browser's HOME is a folder of the run's
// own (launch-home.ts), the profile inside it: removed with the run, Chromium's crash handlers and dumps with it.
import { randomUUID } from 'node:crypto'
import { mkdir } from 'node:fs/promises'
import path from 'node:path'
import type { Logger } from 'pino'
import { AppError, isAppError } from '../../errors.ts'
import type { AddressGuard } from '../../net/guard.ts'
import type { LighthouseOptions } from '../../schemas/options.ts'
import { abortError, createDeadline } from '../../util/abort.ts'
import { findChromium } from '../chromium.ts'
import { createEgressProxy } from '../egress-proxy.ts'
import { createLaunchHome } from '../launch-home.ts'
import type { EgressRefusal } from '../egress-proxy.ts'
import type { SlotRunOptions, SlotWork } from '../pool/types.ts'
import { LIGHTHOUSE_MARKER } from './chromium.ts'
import { configError, WorkerHost } from './host.ts'
import { RunMutex } from './mutex.ts'

export { LIGHTHOUSE_MARKER } from './chromium.ts'

/** The browser queue, as far as a Lighthouse run uses it: one slot, no page. */
export interface SlotRunner {
  runSlot<T> (work: SlotWork<T>, options: SlotRunOptions): Promise<T>
}

export interface LighthouseRunnerOptions {
  guard: AddressGuard
  /** Takes the slot of the browser queue each run holds. */
  slots: SlotRunner
  /** The whole environment of the browser and of the worker thread (config.childEnv). */
  env: Readonly<Record<string, string>>
  /** CHROMIUM_PATH; else chromium, chromium-browser or google-chrome on the environment's PATH. */
  chromiumPath?: string | undefined
  /** Runs that may wait for the one under way; beyond, EBUSY. */
  queueLimit: number
  log?: Logger
  /** Extra CA trusted for https proxies (tests with a self-signed proxy). */
  proxyCa?: string | Buffer | undefined
  /** How long a browser may take to close before its process group is killed. Default 5 s. */
  closeTimeoutMs?: number
}

export interface LighthouseRun {
  signal: AbortSignal
  /** Epoch ms by which the run must be over. */
  deadline: number
  /** The request's `proxy` (href with credentials): Lighthouse's requests go through it, behind the egress layer. */
  proxy?: string | undefined
}

export interface LighthouseResult {
  /** The report: the LHR object for `json`, Lighthouse's own report text for `html` and `csv`. */
  report: unknown
  /** Connections that went through the request's proxy (`-proxy` in x-fetch-mode when > 0). */
  proxied: number
  /** Requests the egress layer refused (they failed inside the page; the run went on). */
  refusals: readonly EgressRefusal[]
}

export interface LighthouseRunner {
  run (url: string, options: LighthouseOptions, run: LighthouseRun): Promise<LighthouseResult>
  /** Whether a run is under way, and how many wait. */
  stats (): { running: boolean, waiting: number }
  /** Ends the worker thread (runs still under way are cut short by their slot's signal first). */
  close (): Promise<void>
}

export function createLighthouseRunner (options: LighthouseRunnerOptions): LighthouseRunner {
  const mutex = new RunMutex(options.queueLimit)
  const host = new WorkerHost(options.env)
  const closeTimeoutMs = options.closeTimeoutMs ?? 5_000
  let executablePath: string | undefined

  async function once (url: string, lighthouseOptions: LighthouseOptions, run: LighthouseRun, signal: AbortSignal): Promise<LighthouseResult> {
    executablePath ??= findChromium({ chromiumPath: options.chromiumPath, searchPath: options.env.PATH })
    const proxy = await createEgressProxy({
      guard: options.guard,
      ...(options.log === undefined ? {} : { log: options.log }),
      proxyCa: options.proxyCa
    })
    proxy.newJob(run.proxy)
    const home = await createLaunchHome(options.env)
    try {
      const userDataDir = path.join(home.dir, 'profile')
      await mkdir(userDataDir, { mode: 0o700 })
      const reply = await host.run({
        url,
        options: lighthouseOptions,
        budgetMs: run.deadline - Date.now(),
        launch: {
          executablePath,
          proxyServer: proxy.server,
          env: home.env,
          userDataDir,
          marker: `${LIGHTHOUSE_MARKER}=${randomUUID()}`,
          timeoutMs: run.deadline - Date.now()
        },
        closeTimeoutMs
      }, signal)
      if (reply.ok) return { report: reply.report, proxied: proxy.stats().jobProxied, refusals: [...proxy.refusals()] }
      if (reply.kind === 'config') throw configError(reply.message)
      throw new Error(`Lighthouse failed: ${reply.message}`, { cause: reply.stack })
    } finally {
      await proxy.close()
      await home.remove()
    }
  }

  return {
    async run (url, lighthouseOptions, run) {
      const deadline = createDeadline(run.deadline - Date.now(), () => new AppError('ETIMEOUT'), run.signal)
      const t0 = performance.now()
      try {
        const release = await mutex.acquire(deadline.signal)
        try {
          return await options.slots.runSlot(async (signal) => await once(url, lighthouseOptions, run, signal), { signal: deadline.signal, deadline: run.deadline })
        } finally {
          release()
        }
      } catch (err) {
        if (deadline.signal.aborted) throw abortError(deadline.signal)
        if (isAppError(err)) throw err
        options.log?.error({ err }, 'lighthouse run failed')
        throw new AppError('EFATAL', { cause: err })
      } finally {
        deadline.dispose()
        options.log?.debug({ ms: Math.round(performance.now() - t0) }, 'lighthouse run over')
      }
    },
    stats: () => ({ running: mutex.held, waiting: mutex.waiting }),
    close: async () => { await host.close() }
  }
}
