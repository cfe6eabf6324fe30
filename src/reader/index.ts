// The page reader: the one component that reads a loaded page (read-page.ts), in a pool of worker threads
// (piscina) so that what a page makes the readers do never runs on the service's event loop. A task lives until the
// request's deadline: when the deadline fires first, the task's worker is ended (piscina terminates the thread that
// runs an aborted task, and starts another), so a page that would make a parser or a rule run for minutes costs one
// worker until its request's `timeout`, while /health, cache hits and every other request go on being served.
// A queued task whose request is gone leaves the queue without running.
import { MessageChannel } from 'node:worker_threads'
import { Piscina } from 'piscina'
import type { Logger } from 'pino'
import type { Probe } from '../net/types.ts'
import { abortError } from '../util/abort.ts'
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

export function createPageReader ({ probe, maxHtmlBytes, maxResponseBytes, threads, env, log }: PageReaderOptions): PageReader {
  const pool = new Piscina<WorkerTask, WorkerOutcome>({
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

  async function read (task: PageReadTask, run: { signal: AbortSignal, log: Logger }): Promise<PageReadResult> {
    run.signal.throwIfAborted()
    const { port1, port2 } = new MessageChannel()
    const stop = serveProbes(port1, { probe, signal: run.signal, log: run.log })
    // The body is copied into the task (the loaded one may share its memory with other buffers).
    const body = new Uint8Array(task.page.body)
    let outcome: WorkerOutcome
    try {
      outcome = await pool.run(
        { ...task, page: { ...task.page, body }, port: port2, debug: run.log.isLevelEnabled('debug') },
        { transferList: [port2, body.buffer as ArrayBuffer], signal: run.signal }
      )
    } catch (err) {
      if (run.signal.aborted) throw abortError(run.signal)
      if ((err as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY') {
        throw new AppError('ETOOLARGE', { cause: err, data: { url: 'The page takes more memory to read than a reader has.' } })
      }
      throw err
    } finally {
      stop()
    }
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
