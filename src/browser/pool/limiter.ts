// The semaphore and the bounded queue in front of the browser (the gotenberg habit; browserless keeps the same
// apart as limiter.ts): at most `concurrency` jobs hold a slot, up to `queueLimit` more wait first come first
// served, and beyond that the caller is told at once. Pure bookkeeping: it knows nothing of browsers, so whether a
// browser can take a job now is the caller's answer (`ready`).

export interface Waiter {
  /** Its turn has come. It takes the slot itself, with acquire(), if it can run. */
  start (): void
  /** It will never start: the queue was flushed, or its signal aborted. */
  reject (err: unknown): void
}

/** What admit() did with a waiter: started it, queued it, or neither because the queue is full. */
export type Admission = 'started' | 'queued' | 'full'

export interface LimiterOptions {
  /** Slots (at least 1). */
  concurrency: number
  /** Waiters that may queue (at least 0). */
  queueLimit: number
  /** The error a queued waiter is rejected with when its signal aborts. */
  abortError: (signal: AbortSignal) => unknown
}

interface Entry {
  waiter: Waiter
  /** Stops listening to the waiter's signal. */
  cleanup: () => void
}

export class Limiter {
  readonly concurrency: number
  readonly queueLimit: number
  readonly #abortError: (signal: AbortSignal) => unknown
  readonly #queue: Entry[] = []
  #active = 0

  constructor (options: LimiterOptions) {
    this.concurrency = Math.max(1, Math.floor(options.concurrency))
    this.queueLimit = Math.max(0, Math.floor(options.queueLimit))
    this.#abortError = options.abortError
  }

  /** Slots taken (a job's reset included). */
  get active (): number { return this.#active }

  get queued (): number { return this.#queue.length }

  /**
   * Starts `waiter` at once when a slot is free, nobody is ahead and `ready`; else queues it, unless the queue is
   * full. A queued waiter whose signal aborts leaves the queue and is rejected with the abort error.
   */
  admit (waiter: Waiter, signal: AbortSignal, ready: boolean): Admission {
    if (this.#queue.length === 0 && ready && this.#active < this.concurrency) {
      waiter.start()
      return 'started'
    }
    if (this.#queue.length >= this.queueLimit) return 'full'
    const onAbort = (): void => {
      const index = this.#queue.indexOf(entry)
      if (index !== -1) this.#queue.splice(index, 1)
      waiter.reject(this.#abortError(signal))
    }
    const entry: Entry = { waiter, cleanup: () => { signal.removeEventListener('abort', onAbort) } }
    signal.addEventListener('abort', onAbort, { once: true })
    this.#queue.push(entry)
    return 'queued'
  }

  /**
   * Starts queued waiters in order while a slot is free. Returns false when it stopped because `ready()` said no
   * browser can take one (the caller then gets one going), true otherwise.
   */
  pump (ready: () => boolean): boolean {
    while (this.#queue.length > 0 && this.#active < this.concurrency) {
      if (!ready()) return false
      const head = this.#queue.shift()
      if (head === undefined) return true
      head.cleanup()
      head.waiter.start()
    }
    return true
  }

  /** Takes a slot (a started waiter that runs). */
  acquire (): void { this.#active += 1 }

  /** Gives a slot back. */
  release (): void { this.#active -= 1 }

  /** Rejects every queued waiter with `err`. */
  flush (err: unknown): void {
    for (const entry of this.#queue.splice(0)) {
      entry.cleanup()
      entry.waiter.reject(err)
    }
  }
}
