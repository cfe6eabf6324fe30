// The service's side of the Lighthouse worker (worker.ts): started on first use, kept warm between runs (Lighthouse's
// modules take a while to load) and ended after a minute without one. A run the deadline cuts short ends the
// browser first (its process group, found by the run's marker), then the thread, whose Lighthouse is left mid-run;
// the next run starts a new one. The thread gets the child environment as its `process.env`, like the browser.
import { Worker } from 'node:worker_threads'
import { AppError } from '../../errors.ts'
import { abortError } from '../../util/abort.ts'
import { killLighthouseBrowser } from './chromium.ts'
import type { RunReply, RunRequest } from './worker.ts'

const IDLE_MS = 60_000

export class WorkerHost {
  readonly #env: Readonly<Record<string, string>>
  #worker: Worker | undefined
  #idle: NodeJS.Timeout | undefined

  constructor (env: Readonly<Record<string, string>>) {
    this.#env = env
  }

  /** Runs one request in the worker (one at a time: the caller holds the mutex). */
  async run (request: RunRequest, signal: AbortSignal): Promise<RunReply> {
    if (signal.aborted) throw abortError(signal)
    clearTimeout(this.#idle)
    const worker = this.#worker ?? this.#start()
    try {
      return await new Promise<RunReply>((resolve, reject) => {
        const cleanup = (): void => {
          worker.off('message', onMessage)
          worker.off('error', onError)
          worker.off('exit', onExit)
          signal.removeEventListener('abort', onAbort)
        }
        const onMessage = (reply: RunReply): void => { cleanup(); resolve(reply) }
        const onError = (err: Error): void => { cleanup(); this.#forget(worker); reject(err) }
        const onExit = (code: number): void => { cleanup(); this.#forget(worker); reject(new Error(`the Lighthouse worker exited (${code})`)) }
        const onAbort = (): void => {
          cleanup()
          this.#forget(worker)
          reject(abortError(signal))
        }
        worker.on('message', onMessage)
        worker.on('error', onError)
        worker.on('exit', onExit)
        signal.addEventListener('abort', onAbort, { once: true })
        worker.postMessage(request)
      })
    } catch (err) {
      // The browser goes before the answer: nothing of the run may outlive it. Then the thread.
      await killLighthouseBrowser(request.launch.marker)
      await worker.terminate().catch(() => 0)
      throw err
    } finally {
      if (this.#worker !== undefined) {
        this.#idle = setTimeout(() => { void this.close() }, IDLE_MS)
        this.#idle.unref()
      }
    }
  }

  async close (): Promise<void> {
    clearTimeout(this.#idle)
    const worker = this.#worker
    this.#worker = undefined
    await worker?.terminate().catch(() => 0)
  }

  #start (): Worker {
    const worker = new Worker(new URL('./worker.ts', import.meta.url), { env: { ...this.#env } })
    worker.unref()
    // Errors outside a run (none expected) only end the thread; the next run starts another.
    worker.on('error', () => { this.#forget(worker) })
    this.#worker = worker
    return worker
  }

  #forget (worker: Worker): void {
    if (this.#worker === worker) this.#worker = undefined
  }
}

/** A refusal of Lighthouse's own config check: the request's settings (400). */
export function configError (message: string): AppError {
  return new AppError('EINVALQUERY', { data: { 'insights.lighthouse': `Lighthouse refused its settings: ${message}` } })
}
