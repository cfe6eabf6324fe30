// Browser generations (the gotenberg supervisor habit): launches or connects to Chromium, relaunches after a crash
// or disconnect (with a backoff while launches keep failing, until one succeeds), retires a browser after `maxJobsPerBrowser` jobs
// once its running jobs are done, and closes a browser by killing whatever of its process tree is left, its crash
// handlers included (each launch has a HOME of its own, launch-home.ts, removed with the browser). It knows
// nothing of leases or the queue: what they must do when a browser comes or goes is passed in as hooks.
import { createRequire } from 'node:module'
import { chromium } from 'playwright-core'
import type { Browser } from 'playwright-core'
import { chromiumArgs, findPidByMarker, launchCommand, killProcessGroup, processGroupMembers, processStartTime } from '../chromium.ts'
import { toBrowserError } from '../errors.ts'
import { createLaunchHome } from '../launch-home.ts'
import type { LaunchHome } from '../launch-home.ts'
import { isTimedOut, sleep, within } from '../../util/abort.ts'
import type { BrowserPoolLog, BrowserReadiness, PoolCounters } from './types.ts'

const RELAUNCH_BACKOFF_MS = [0, 250, 1000, 2000, 5000]
/** Launches failed in a row after which the browser counts as unrecoverable (docs/api.md §12.2); retries go on. */
export const UNRECOVERABLE_AFTER_FAILURES = 3

export interface Generation {
  id: number
  browser: Browser
  pid: number | undefined
  pidStartTime: number | undefined
  /** The launched browser's own HOME (none for a remote browser): removed, crash handlers and dumps with it. */
  home: LaunchHome | undefined
  version: string
  /** Jobs dispatched to it. */
  jobs: number
  /** Jobs on it not yet released: it may not close before they are. */
  running: number
  state: 'up' | 'retiring' | 'dead'
  closed: Promise<void> | undefined
}

export interface SupervisorOptions {
  /** A remote Playwright browser server to connect to, instead of launching `executablePath`. */
  wsEndpoint: string | undefined
  executablePath: string | undefined
  extraArgs: readonly string[]
  /** The whole environment of the launched browser (docs/security.md): Playwright would pass the service's own. */
  env: Readonly<Record<string, string>>
  /** The browser-level proxy (catches anything not created in one of the pool's contexts). */
  proxyServer: string
  /** The browser-level proxy's credentials, when it asks for some. */
  proxyCredentials?: { username: string, password: string }
  /** Marks this pool's browsers on their command line, so their pids can be found. */
  poolId: string
  launchTimeoutMs: number
  closeTimeoutMs: number
}

export interface SupervisorHooks {
  /** `gen` disconnected: its running jobs fail, its idle leases go. */
  lost (gen: Generation): void
  /** `gen` retires: its idle leases go. */
  retiring (gen: Generation): void
  /** Whether idle leases of `gen` are left (it may not close while they are). */
  hasIdleLeases (gen: Generation): boolean
  /** Whether jobs wait for a browser. */
  hasWaiting (): boolean
  /** A relaunch failed: whoever waits now is told, with this error. */
  launchFailed (err: unknown): void
  /** A launch attempt ended: queued jobs may start. */
  launchSettled (): void
}

/** The playwright-core this service runs; a browser server must run the same major.minor. */
export const PLAYWRIGHT_VERSION = (createRequire(import.meta.url)('playwright-core/package.json') as { version: string }).version

/**
 * A connection to BROWSER_WS_ENDPOINT that failed, said plainly: a browser server of another Playwright version
 * refuses the connection (major.minor must match), which Playwright reports in a box of ASCII art.
 */
export function remoteError (err: unknown): Error {
  const message = err instanceof Error ? err.message : String(err)
  const server = /server version: v(\d+\.\d+)/.exec(message)?.[1]
  if (/version mismatch/i.test(message)) {
    return new Error(`BROWSER_WS_ENDPOINT runs Playwright ${server === undefined ? 'of another version' : `v${server}`}, and this service runs playwright-core v${PLAYWRIGHT_VERSION}: ` +
      'start the browser server with the same major.minor version (scripts/browser-server.ts does)', { cause: err })
  }
  return new Error(`BROWSER_WS_ENDPOINT could not be reached: ${message.split('\n')[0] ?? ''}`, { cause: err })
}

export class Supervisor {
  readonly #options: SupervisorOptions
  readonly #hooks: SupervisorHooks
  readonly #counters: PoolCounters
  readonly #log: BrowserPoolLog | undefined
  readonly #generations = new Set<Generation>()
  #current: Generation | undefined
  #launching: Promise<void> | undefined
  #launchFailures = 0
  #generationCount = 0
  #version = ''
  #closing = false
  /** Cuts a relaunch's backoff short when the pool closes. */
  readonly #closed = new AbortController()
  /** The marker of a local launch under way (its process may not be up yet): closing kills it rather than wait. */
  #launchMarker: string | undefined

  constructor (options: SupervisorOptions, hooks: SupervisorHooks, counters: PoolCounters, log: BrowserPoolLog | undefined) {
    this.#options = options
    this.#hooks = hooks
    this.#counters = counters
    this.#log = log
  }

  /** The browser new jobs go to, while it is up. */
  get current (): Generation | undefined { return this.#current }

  get closing (): boolean { return this.#closing }

  /** The version of the first browser, until a relaunch says otherwise. */
  get version (): string { return this.#version }

  /** Launches failed in a row (0 once one succeeds). */
  get launchFailures (): number { return this.#launchFailures }

  /** Whether a browser can take a job now. */
  isUp (): boolean { return this.#current !== undefined && this.#current.state === 'up' }

  health (): boolean {
    return !this.#closing && this.isUp() && this.#current?.browser.isConnected() === true
  }

  /** `ok` while a browser is up or coming and no launch has failed since; `failed` after the limit or when closing. */
  readiness (): BrowserReadiness {
    if (this.#closing) return 'failed'
    if (this.health() || this.#launchFailures === 0) return 'ok'
    return this.#launchFailures >= UNRECOVERABLE_AFTER_FAILURES ? 'failed' : 'down'
  }

  /** The first browser; throws when it cannot start. */
  async start (): Promise<void> {
    const first = await this.#launch()
    if (this.#closing) {
      await this.#discard(first)
      throw new Error('the pool closed while its browser started')
    }
    this.#adopt(first)
    this.#log?.info({ generation: first.id, pid: first.pid, version: first.version, remote: this.#remote }, 'browser up')
  }

  /** Gets a browser going unless one is up or coming, after the backoff that earlier failures ask for. */
  ensure (): void {
    if (this.#closing || this.#launching !== undefined || this.#current !== undefined) return
    const attempt = this.#launchFailures
    this.#launching = (async () => {
      await sleep(RELAUNCH_BACKOFF_MS[Math.min(attempt, RELAUNCH_BACKOFF_MS.length - 1)] ?? 0, this.#closed.signal).catch(() => {})
      if (this.#closing) return
      try {
        const gen = await this.#launch()
        if (this.#closing) {
          await this.#discard(gen)
          return
        }
        this.#adopt(gen)
        this.#launchFailures = 0
        this.#log?.info({ generation: gen.id, pid: gen.pid, version: gen.version }, 'browser up')
      } catch (err) {
        // Killed because the pool closes (beginClose): not a failure.
        if (this.#closing) return
        this.#launchFailures += 1
        this.#log?.error({ err, attempt: this.#launchFailures }, 'browser launch failed')
        // Whoever waits now would wait for a browser that may not come: tell them, and try again for later ones.
        this.#hooks.launchFailed(toBrowserError(err, 'launch'))
      }
    })().finally(() => {
      this.#launching = undefined
      // No browser yet: try again, after the backoff, whether or not anyone waits, so an instance whose browser
      // was unrecoverable (and that a load balancer stopped sending requests to) recovers by itself.
      if (!this.#closing && this.#current === undefined) this.ensure()
      this.#hooks.launchSettled()
    })
  }

  /** Counts a job dispatched to `gen`, and retires it once it has had `maxJobs`. */
  dispatch (gen: Generation, maxJobs: number): void {
    gen.jobs += 1
    gen.running += 1
    if (gen.jobs >= maxJobs) this.#retire(gen)
  }

  /** A job on `gen` was released. */
  released (gen: Generation): void {
    gen.running -= 1
    this.closeRetired()
  }

  /** Closes each retiring generation once none of its leases is in use. */
  closeRetired (): void {
    for (const gen of this.#generations) {
      if (gen.state !== 'retiring' || gen.closed !== undefined) continue
      if (gen.running > 0 || this.#hooks.hasIdleLeases(gen)) continue
      void this.closeGeneration(gen)
    }
  }

  async closeGeneration (gen: Generation): Promise<void> {
    if (gen.closed !== undefined) return await gen.closed
    gen.closed = (async () => {
      const closing = await within(gen.browser.close().then(() => true, () => false), this.#options.closeTimeoutMs)
      const closed = !isTimedOut(closing) && closing
      if (!closed) this.#log?.warn({ generation: gen.id, pid: gen.pid }, 'browser close timed out; killing it')
      if (gen.pid !== undefined) {
        // Children exit shortly after the browser; whatever has not is killed.
        for (let i = 0; i < 20 && processGroupMembers(gen.pid).length > 0; i++) await sleep(50)
        killProcessGroup(gen.pid, gen.pidStartTime)
      }
      await gen.home?.remove()
      gen.state = 'dead'
      this.#generations.delete(gen)
    })()
    return await gen.closed
  }

  /** No more launches or relaunches from now on. */
  beginClose (): void {
    if (this.#closing) return
    this.#closing = true
    this.#closed.abort()
    if (this.#launchMarker !== undefined) void this.#stopLaunch(this.#launchMarker)
  }

  /**
   * A launch under way when the pool closes is killed, not waited for: a Chromium slow to start (a loaded machine)
   * would hold SIGTERM past its grace. Its process may not be spawned yet, so the marker is looked for until the
   * launch has settled; Playwright's launch then fails at once.
   */
  async #stopLaunch (marker: string): Promise<void> {
    while (this.#launchMarker === marker) {
      const pid = findPidByMarker(marker)
      if (pid !== undefined) killProcessGroup(pid, processStartTime(pid))
      await sleep(100)
    }
  }

  /** After beginClose(): waits for a launch under way (which closes what it launched); no browser takes jobs now. */
  async stopLaunching (): Promise<void> {
    if (this.#launching !== undefined) await this.#launching
    this.#current = undefined
  }

  /** Closes every browser (after stopLaunching() and the drain). */
  async closeAll (): Promise<void> {
    await Promise.allSettled([...this.#generations].map(async (gen) => { await this.closeGeneration(gen) }))
  }

  /** A browser launched while the pool began to close: closed (listed until then, so closeAll() waits for it). */
  async #discard (gen: Generation): Promise<void> {
    this.#generations.add(gen)
    await this.closeGeneration(gen)
  }

  get #remote (): boolean { return this.#options.wsEndpoint !== undefined }

  #adopt (gen: Generation): void {
    this.#generations.add(gen)
    this.#current = gen
    this.#version = gen.version
  }

  async #launch (): Promise<Generation> {
    const { wsEndpoint, launchTimeoutMs } = this.#options
    const id = ++this.#generationCount
    const marker = `--pagecast-browser=${this.#options.poolId}-${id}`
    let browser: Browser
    let home: LaunchHome | undefined
    if (wsEndpoint !== undefined) {
      browser = await chromium.connect(wsEndpoint, { timeout: launchTimeoutMs }).catch((err: unknown) => { throw remoteError(err) })
    } else {
      home = await createLaunchHome(this.#options.env)
      this.#launchMarker = marker
      try {
        if (this.#closing) throw new Error('the pool closed before its browser started')
        if (this.#options.executablePath === undefined) throw new Error('no Chromium executable')
        browser = await chromium.launch({
          ...launchCommand(this.#options.executablePath, home.env),
          args: chromiumArgs({ proxyHost: '127.0.0.1', extra: [...this.#options.extraArgs, marker] }),
          proxy: { server: this.#options.proxyServer, bypass: '<-loopback>', ...this.#options.proxyCredentials },
          timeout: launchTimeoutMs,
          handleSIGINT: false,
          handleSIGTERM: false,
          handleSIGHUP: false
        })
      } catch (err) {
        // Playwright has killed what it started; the crash handlers it did not know of go with the folder.
        await home.remove()
        throw err
      } finally {
        this.#launchMarker = undefined
      }
    }
    const pid = wsEndpoint !== undefined ? undefined : findPidByMarker(marker)
    const gen: Generation = {
      id,
      browser,
      pid,
      pidStartTime: pid === undefined ? undefined : processStartTime(pid),
      home,
      version: browser.version(),
      jobs: 0,
      running: 0,
      state: 'up',
      closed: undefined
    }
    browser.on('disconnected', () => { this.#onDisconnected(gen) })
    this.#counters.launches += 1
    return gen
  }

  #onDisconnected (gen: Generation): void {
    if (gen.state === 'dead') return
    const planned = gen.closed !== undefined
    gen.state = 'dead'
    if (this.#current === gen) this.#current = undefined
    if (!planned) this.#log?.warn({ generation: gen.id, pid: gen.pid }, 'browser disconnected')
    this.#hooks.lost(gen)
    // Children of a killed browser may linger: the group goes.
    if (gen.pid !== undefined) killProcessGroup(gen.pid, gen.pidStartTime)
    if (!planned) {
      // Its crash handlers and folder go too; closeAll() waits for that (the generation stays listed until then).
      gen.closed = (async () => {
        await gen.home?.remove()
        this.#generations.delete(gen)
      })()
    }
    if (!this.#closing) this.ensure()
  }

  #retire (gen: Generation): void {
    if (gen.state !== 'up') return
    gen.state = 'retiring'
    if (this.#current === gen) this.#current = undefined
    this.#log?.info({ generation: gen.id, jobs: gen.jobs }, 'browser retiring')
    this.#hooks.retiring(gen)
    this.closeRetired()
    this.ensure()
  }
}
