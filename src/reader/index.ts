// The page reader: the one component that reads a loaded page (read-page.ts), in a pool of worker threads
// (piscina) so that what a page makes the readers do never runs on the service's event loop. A task lives until the
// request's deadline: when the deadline fires first, the thread that runs the task is ended (the task says which
// when it starts, probe-bridge.ts; piscina starts another), so a page that would make a parser or a rule run for
// minutes costs one worker until its request's `timeout`, while /health, cache hits and every other request go on
// being served. A task whose request is gone before it starts is ended as it starts.
// A worker reads up to TASKS_PER_WORKER pages at once: a page's image and logo checks go out through the main thread
// and the task waits for them; with a worker to each task (what piscina does with a task it may abort itself, and
// why the service ends its threads itself), two pages behind a host whose name takes a second to resolve held every
// read of the service (docs/benchmarks.md#dns). A task that ends its worker (its deadline, or its memory) takes the
// others of that worker with it: those are read again once, and only a second such end is their own.
import { MessageChannel } from 'node:worker_threads'
import { Piscina } from 'piscina'
import type { Logger } from 'pino'
import type { Probe } from '../net/types.ts'
import { abortError, abortable } from '../util/abort.ts'
import { AppError } from '../errors.ts'
import { serveProbes } from './probe-bridge.ts'
import type { PageReadResult, PageReadTask } from './read-page.ts'
import type { ReaderWorkerData, WorkerOutcome, WorkerTask } from './worker.ts'

export type { PageReadTask, PageReadResult } from './read-page.ts'

export interface PageReaderOptions {
  /** The guarded probe every outbound request of the readers goes through. */
  probe: Probe
  maxHtmlBytes: number
  /** The most text the rules of one request may read (MAX_RESPONSE_BYTES). */
  maxResponseBytes: number
  /** Worker threads at most (READER_THREADS). */
  threads: number
  /** The workers' environment: the children's allowlist (config.childEnv), never the service's secrets. */
  env: Readonly<Record<string, string>>
  log: Logger
}

export interface PageReader {
  /** Reads the page as the task asks; rejects with the signal's reason when it fires first. */
  read: (task: PageReadTask, run: { signal: AbortSignal, log: Logger }) => Promise<PageReadResult>
  close: () => Promise<void>
}

/** A worker's heap limit: a page that would take more ends its worker (ERR_WORKER_OUT_OF_MEMORY), not the service. */
const WORKER_HEAP_MB = 1024
/** Pages one worker reads at once: CPU work takes turns on its thread, waits for probes overlap. */
const TASKS_PER_WORKER = 4

/** Whether a task failed because its worker ended under it (ended for another task, or out of memory). */
function workerEnded (err: unknown): boolean {
  const { code, message } = err as { code?: unknown, message?: unknown }
  return code === 'ERR_WORKER_OUT_OF_MEMORY' || message === 'Terminating worker thread' || (typeof message === 'string' && message.startsWith('worker exited with code'))
}

type Balancer = NonNullable<NonNullable<ConstructorParameters<typeof Piscina>[0]>['loadBalancer']>

export function createPageReader ({ probe, maxHtmlBytes, maxResponseBytes, threads, env, log }: PageReaderOptions): PageReader {
  // An idle worker first; else, while the pool may grow, none (piscina starts a worker for the task, so two pages
  // that need the CPU get a thread each); else the least busy one with room.
  const balance: Balancer = (_task, workers) => {
    let best: (typeof workers)[number] | null = null
    for (const worker of workers) {
      if (worker.currentUsage === 0) return worker
      if (worker.currentUsage < TASKS_PER_WORKER && (best === null || worker.currentUsage < best.currentUsage)) best = worker
    }
    return pool.threads.length < threads ? null : best
  }
  const pool: Piscina<WorkerTask, WorkerOutcome> = new Piscina<WorkerTask, WorkerOutcome>({
    loadBalancer: balance,
    concurrentTasksPerWorker: TASKS_PER_WORKER,
    filename: new URL('./worker.ts', import.meta.url).href,
    workerData: { maxHtmlBytes, maxResponseBytes } satisfies ReaderWorkerData,
    minThreads: 1,
    maxThreads: threads,
    // An idle worker above the first goes after a minute; the first stays warm.
    idleTimeout: 60_000,
    resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
    // The workers see no secret: the service's environment stays in the service (docs/api.md §10).
    env: { ...env }
  })

  /** Ends the worker thread `thread` (piscina sees it exit, fails its tasks and starts another). */
  function endThread (thread: number): void {
    const worker = pool.threads.find(w => w.threadId === thread)
    if (worker !== undefined) void worker.terminate()
  }

  async function read (task: PageReadTask, run: { signal: AbortSignal, log: Logger }): Promise<PageReadResult> {
    for (let tries = 1; ; tries++) {
      try {
        return await readOnce(task, run)
      } catch (err) {
        if (tries > 1 || run.signal.aborted || !workerEnded(err)) throw failure(err, run.signal)
        run.log.debug({ err: { message: (err as Error).message } }, 'page reader worker ended under this read; reading again')
      }
    }
  }

  /** What a failed read answers: the abort, a page too large to read, or the error as it is. */
  function failure (err: unknown, signal: AbortSignal): unknown {
    if (signal.aborted) return abortError(signal)
    if ((err as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY') {
      return new AppError('ETOOLARGE', { cause: err, data: { url: 'The page takes more memory to read than a reader has.' } })
    }
    return err
  }

  async function readOnce (task: PageReadTask, run: { signal: AbortSignal, log: Logger }): Promise<PageReadResult> {
    const { signal } = run
    signal.throwIfAborted()
    const { port1, port2 } = new MessageChannel()
    let thread: number | undefined
    // The request stops waiting: the thread running its task ends, now or as the task starts.
    const onAbort = (): void => { if (thread !== undefined) endThread(thread) }
    const stop = serveProbes(port1, {
      probe,
      signal,
      log: run.log,
      onStart: (started) => { thread = started; if (signal.aborted) endThread(started) }
    })
    // The body is copied into the task (the loaded one may share its memory with other buffers).
    const body = new Uint8Array(task.page.body)
    const running = pool.run(
      { ...task, page: { ...task.page, body }, port: port2, debug: run.log.isLevelEnabled('debug') },
      { transferList: [port2, body.buffer as ArrayBuffer] }
    )
    signal.addEventListener('abort', onAbort, { once: true })
    // The port stays open until the task ends, so that a task started after its request left still says so.
    running.finally(() => { signal.removeEventListener('abort', onAbort); stop() }).catch(() => {})
    const outcome = await abortable(running, signal)
    if (outcome.ok) return outcome.result
    const { code, message, data } = outcome.error
    throw new AppError(code, { message, data })
  }

  return {
    read,
    async close () {
      await pool.destroy().catch((err: unknown) => { log.warn({ err }, 'page reader pool did not close cleanly') })
    }
  }
}
