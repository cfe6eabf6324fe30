// The semaphore and the bounded queue in front of the browser (the gotenberg habit; browserless keeps the same
// apart as limiter.ts): at most `concurrency` jobs hold a slot, up to `queueLimit` more wait first come first
// served, and beyond that the caller is told at once. Pure bookkeeping: it knows nothing of browsers, so whether a
// browser can take a job now is the caller's answer (`ready`).
// Admission by deadline (docs/browser.md#admission): the limiter measures how long a slot is held (an exponentially
// weighted mean of the last jobs, their reset included), so it knows when a waiter at the back of the queue would
// start. A waiter that would start too late to finish before its deadline is not queued ('late': the caller answers
// EBUSY at once, with the measured wait as retry-after); a queued waiter whose deadline comes nearer than one job's
// time before it starts leaves the queue the same way, rather than waiting to time out.

export interface Waiter {
  /** Its turn has come. It takes the slot itself, with acquire(), if it can run. */
  start (): void
  /** It will never start: the queue was flushed, or its signal aborted. */
  reject (err: unknown): void
}

/** What admit() did with a waiter: started it, queued it, or neither (the queue is full, or it would start too late). */
export type Admission = 'started' | 'queued' | 'full' | 'late'

export interface LimiterOptions {
  /** Slots (at least 1). */
  concurrency: number
  /** Waiters that may queue (at least 0). */
  queueLimit: number
  /** The error a queued waiter is rejected with when its signal aborts. */
  abortError: (signal: AbortSignal) => unknown
  /** The error a queued waiter is rejected with when it can no longer start in time (`waitMs`: the expected wait). */
  lateError: (waitMs: number) => unknown
  /** A slot's expected hold time before any job has been measured, ms. */
  initialJobMs?: number
  now?: () => number
}

/** The weight of the newest job in the mean hold time. */
const SMOOTHING = 0.2

interface Entry {
  waiter: Waiter
  /** Stops listening to the waiter's signal, and its deadline's timer. */
  cleanup: () => void
}

export class Limiter {
  readonly concurrency: number
  readonly queueLimit: number
  readonly #abortError: (signal: AbortSignal) => unknown
  readonly #lateError: (waitMs: number) => unknown
  readonly #now: () => number
  readonly #queue: Entry[] = []
  #active = 0
  #jobMs: number
  readonly #refused = { full: 0, late: 0, left: 0 }

  constructor (options: LimiterOptions) {
    this.concurrency = Math.max(1, Math.floor(options.concurrency))
    this.queueLimit = Math.max(0, Math.floor(options.queueLimit))
    this.#abortError = options.abortError
    this.#lateError = options.lateError
    this.#jobMs = options.initialJobMs ?? 1000
    this.#now = options.now ?? Date.now
  }

  /** Waiters refused so far: the queue full, too late at admission, or left the queue when their time ran short. */
  get refused (): Readonly<{ full: number, late: number, left: number }> { return this.#refused }

  /** A slot's measured hold time, ms (the mean of the last jobs). */
  get jobMs (): number { return this.#jobMs }

  /**
   * How long a waiter at queue position `position` (0: the head) waits for a slot: the jobs ahead of it, the ones
   * running included, spread over the slots, each holding one for the measured time.
   */
  waitFor (position: number): number {
    const ahead = Math.max(0, this.#active - this.concurrency + 1) + position
    return Math.ceil(ahead / this.concurrency) * this.#jobMs
  }

  /** Slots taken (a job's reset included). */
  get active (): number { return this.#active }

  get queued (): number { return this.#queue.length }

  /**
   * Starts `waiter` at once when a slot is free, nobody is ahead and `ready`; else queues it, unless the queue is
   * full. A queued waiter whose signal aborts leaves the queue and is rejected with the abort error.
   */
  admit (waiter: Waiter, signal: AbortSignal, ready: boolean, deadline?: number): Admission {
    if (this.#queue.length === 0 && ready && this.#active < this.concurrency) {
      waiter.start()
      return 'started'
    }
    if (this.#queue.length >= this.queueLimit) {
      this.#refused.full++
      return 'full'
    }
    // Queued, it would start after the jobs ahead, and needs one job's time itself before its deadline.
    const latest = deadline === undefined ? Infinity : deadline - this.#jobMs
    if (this.#now() + this.waitFor(this.#queue.length) > latest) {
      this.#refused.late++
      return 'late'
    }
    const leave = (err: unknown): void => {
      const index = this.#queue.indexOf(entry)
      if (index !== -1) this.#queue.splice(index, 1)
      entry.cleanup()
      waiter.reject(err)
    }
    const onAbort = (): void => { leave(this.#abortError(signal)) }
    // Still queued when only one job's time is left: it cannot finish, so it leaves now (the estimate was short).
    const timer = latest === Infinity
      ? undefined
      : setTimeout(() => {
        this.#refused.left++
        leave(this.#lateError(this.waitFor(this.#queue.indexOf(entry))))
      }, Math.max(0, latest - this.#now()))
    timer?.unref()
    const entry: Entry = {
      waiter,
      cleanup: () => {
        signal.removeEventListener('abort', onAbort)
        if (timer !== undefined) clearTimeout(timer)
      }
    }
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

  /** Gives a slot back; `heldMs`, how long the slot was held, updates the measured job time. */
  release (heldMs?: number): void {
    this.#active -= 1
    if (heldMs !== undefined && Number.isFinite(heldMs) && heldMs >= 0) this.#jobMs += SMOOTHING * (heldMs - this.#jobMs)
  }

  /** Rejects every queued waiter with `err`. */
  flush (err: unknown): void {
    for (const entry of this.#queue.splice(0)) {
      entry.cleanup()
      entry.waiter.reject(err)
    }
  }
}
