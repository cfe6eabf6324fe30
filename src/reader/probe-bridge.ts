// The page reader's one way out: a MessagePort per task between the worker that reads the page and the service
// that owns the guarded HTTP client. The worker's readers call an ordinary `Probe`; each call crosses the port, is
// made by the service under the request's deadline and egress scope (so the address guard, the proxy and the
// probe's byte limit are the service's own, unchanged), and its answer comes back as plain data. Debug lines come
// back the same way, to the request's logger.
import { AsyncLocalStorage } from 'node:async_hooks'
import { threadId, type MessagePort } from 'node:worker_threads'
import type { Logger } from 'pino'
import type { Probe, ProbeOptions, ProbeResult } from '../net/types.ts'

type ProbeCall = Omit<ProbeOptions, 'signal'>

type ToService =
  | { t: 'start', thread: number }
  | { t: 'probe', id: number, url: string, options: ProbeCall }
  | { t: 'log', obj: object, msg: string }

type ToWorker =
  | { t: 'probe', id: number, ok: true, result: Omit<ProbeResult, 'body'> & { body: Uint8Array } }
  | { t: 'probe', id: number, ok: false, name: string, message: string }

/** What a reader's debug lines go to (the subset of pino's Logger the readers use). */
export interface DebugLog {
  debug: (obj: object, msg: string) => void
}

/**
 * The service's side: answers the worker's probes on `port` until the task ends (then call the returned stop);
 * `onStart` learns the thread that runs the task when it starts.
 */
export function serveProbes (port: MessagePort, { probe, signal, log, onStart }: { probe: Probe, signal: AbortSignal, log: Logger, onStart: (thread: number) => void }): () => void {
  // The port's messages arrive outside the request's async context: bind the handler to it, so that the probes
  // go through this computation's egress scope (net/egress-scope.ts) like the ones made in the request itself.
  const onMessage = AsyncLocalStorage.bind((message: ToService) => {
    if (message.t === 'start') {
      onStart(message.thread)
      return
    }
    if (message.t === 'log') {
      log.debug(message.obj, message.msg)
      return
    }
    const { id, url, options } = message
    probe(url, { ...options, signal }).then(
      (result) => {
        const body = new Uint8Array(result.body)
        post({ t: 'probe', id, ok: true, result: { ...result, body } }, [body.buffer])
      },
      (err: unknown) => {
        const error = err instanceof Error ? err : new Error(String(err))
        post({ t: 'probe', id, ok: false, name: error.name, message: error.message })
      }
    )
  })
  let open = true
  const post = (message: ToWorker, transfer: ArrayBuffer[] = []): void => {
    if (open) port.postMessage(message, transfer)
  }
  port.on('message', onMessage)
  return () => {
    open = false
    port.off('message', onMessage)
    port.close()
  }
}

/** One task's bridge on the worker's side. */
interface Bridge {
  probe: Probe
  log: DebugLog
}

const current = new AsyncLocalStorage<Bridge>()

function bridgeOf (port: MessagePort, debug: boolean): Bridge {
  let next = 0
  const pending = new Map<number, { resolve: (result: ProbeResult) => void, reject: (err: Error) => void }>()
  port.on('message', (message: ToWorker) => {
    const waiting = pending.get(message.id)
    if (waiting === undefined) return
    pending.delete(message.id)
    if (message.ok) {
      const { body, ...rest } = message.result
      waiting.resolve({ ...rest, body: Buffer.from(body.buffer, body.byteOffset, body.byteLength) })
    } else {
      waiting.reject(Object.assign(new Error(message.message), { name: message.name }))
    }
  })
  return {
    probe: async (url, { signal: _signal, ...options }) => await new Promise<ProbeResult>((resolve, reject) => {
      const id = next++
      pending.set(id, { resolve, reject })
      port.postMessage({ t: 'probe', id, url, options } satisfies ToService)
    }),
    log: {
      debug (obj, msg) {
        if (!debug) return
        try {
          port.postMessage({ t: 'log', obj, msg } satisfies ToService)
        } catch {
          port.postMessage({ t: 'log', obj: {}, msg } satisfies ToService)
        }
      }
    }
  }
}

/**
 * Runs one task's work with its port as the way out of the worker's readers (bridgedProbe, bridgedLog), after
 * telling the service which thread runs it (the service ends that thread when the task's request stops waiting).
 */
export async function withBridge<T> (port: MessagePort, debug: boolean, work: () => Promise<T>): Promise<T> {
  port.postMessage({ t: 'start', thread: threadId } satisfies ToService)
  try {
    return await current.run(bridgeOf(port, debug), work)
  } finally {
    port.close()
  }
}

function bridge (): Bridge {
  const found = current.getStore()
  if (found === undefined) throw new Error('a page reader ran outside its task')
  return found
}

/** The probe the worker's readers are built with: the current task's bridge. */
export const bridgedProbe: Probe = async (url, options) => await bridge().probe(url, options)

/** The debug log the worker's readers are built with: the current task's bridge. */
export const bridgedLog: DebugLog = { debug: (obj, msg) => { bridge().log.debug(obj, msg) } }
