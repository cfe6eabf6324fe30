// A page reader's worker thread (index.ts runs a pool of them): the readers are built once per worker, over the
// bridged probe and log (probe-bridge.ts), and each task reads one page (read-page.ts). A task never ends the
// worker's readers' state: every per-request state lives in the task.
import { workerData } from 'node:worker_threads'
import type { MessagePort } from 'node:worker_threads'
import type { Logger } from 'pino'
import { createMetadataExtractor } from '../metadata/extractor.ts'
import { createRuleRunner } from '../extract/index.ts'
import { createAvFinder } from '../media/discover.ts'
import { bundledFingerprints } from '../insights/fingerprints.ts'
import { isAppError, type ErrorCode } from '../errors.ts'
import { bridgedLog, bridgedProbe, withBridge } from './probe-bridge.ts'
import { readPage, type PageReaders, type PageReadResult, type PageReadTask } from './read-page.ts'

export interface WorkerTask extends PageReadTask {
  /** The task's way out (probe-bridge.ts), transferred with it. */
  port: MessagePort
  /** Whether the request logs at debug level (else the readers' debug lines are not sent). */
  debug: boolean
}

/** A task's result, or the coded error a reader threw (an AppError does not cross a thread as itself). */
export type WorkerOutcome =
  | { ok: true, result: PageReadResult }
  | { ok: false, error: { code: ErrorCode, message: string, data: Record<string, unknown> } }

export interface ReaderWorkerData {
  maxHtmlBytes: number
  maxResponseBytes: number
}

const { maxHtmlBytes, maxResponseBytes } = workerData as ReaderWorkerData
// The readers type their log as pino's; they call only `debug`, which the bridge carries.
const log = bridgedLog as unknown as Logger
const readers: PageReaders = {
  metadata: createMetadataExtractor({ probe: bridgedProbe, log, maxHtmlBytes }),
  rules: createRuleRunner({ probe: bridgedProbe, log, maxBytes: maxResponseBytes }),
  av: createAvFinder({ probe: bridgedProbe, log }),
  fingerprints: bundledFingerprints
}
// The service ends a task that runs past its deadline by ending this worker: nothing here needs to stop itself.
const never = new AbortController().signal

export default async function read ({ port, debug, ...task }: WorkerTask): Promise<WorkerOutcome> {
  try {
    return { ok: true, result: await withBridge(port, debug, async () => await readPage(task, readers, never)) }
  } catch (err) {
    if (!isAppError(err)) throw err
    return { ok: false, error: { code: err.code, message: err.message, data: err.data } }
  }
}
