// The semaphore and the bounded queue in front of the browser (the gotenberg habit; browserless keeps the same
// apart as limiter.ts): at most `concurrency` jobs hold a slot, up to `queueLimit` more wait first come first
// served, and beyond that the caller is told at once. Pure bookkeeping: it knows nothing of browsers, so whether a
// browser can take a job now is the caller's answer (`ready`).
// Admission by deadline (docs/browser.md#admission): the limiter measures how long a slot is held (an exponentially
// weighted mean of the last jobs, their reset included), so it knows when a waiter at the back of the queue would
// start. A waiter that would start too late to finish before its deadline is not queued ('late': the caller answers
// EBUSY at once, with the measured wait as retry-after); a queued waiter whose deadline comes nearer than one job's
// time before it starts leaves the queue the same way, rather than waiting to time out.
// A slot whose job has answered is still held while its page is reset (runner.ts), but it is free in a moment, not
// after a job: a waiter that such a slot will take waits that reset's measured time, and is not refused for it (the
// queue limit, BROWSER_QUEUE_LIMIT=0 included, counts the waiters that wait for a job).
// Resets before jobs: while the only work under way is resets, a waiter waits for them even with a slot free (at
// most twice the measured reset time after the last one began, and never one whose deadline leaves no time for it).
// A job beside a reset takes both longer than the two one after the other: on two cores the reset's navigation and
// clearing share the browser process and the cores with the job's own (docs/benchmarks.md, "A job after the reset,
// not beside it").

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
  /** Called when waiters held back for resets may start although no reset has ended (the hold's bound passed). */
  wake?: () => void
  /** A slot's expected hold time before any job has been measured, ms. */
  initialJobMs?: number
  now?: () => number
}

/** The weight of the newest job in the mean hold time (and in its mean deviation: DEVIATION_SMOOTHING). */
const SMOOTHING = 0.2
const DEVIATION_SMOOTHING = 0.25
/**
 * The time a waiter keeps for its own job: the mean plus this many mean deviations (TCP's retransmission timeout
 * habit, RFC 6298). Under a burst a job takes longer than the quiet ones measured before it; a waiter admitted on
 * the mean alone would find out only in the queue, and leave it late.
 */
const DEVIATIONS = 2
/** A reset's expected time before any is measured, ms (bench/cdp-messages.ts measures tens of ms). */
const INITIAL_RESET_MS = 100
/** How long, in measured reset times after the last reset began, a waiter is held back for resets under way. */
const RESET_HOLD = 2

interface Entry {
  waiter: Waiter
  /** Epoch ms by which its job must be over (Infinity: none). */
  deadline: number
  /** Stops listening to the waiter's signal, and its deadline's timer. */
  cleanup: () => void
}

export class Limiter {
  readonly concurrency: number
  readonly queueLimit: number
  readonly #abortError: (signal: AbortSignal) => unknown
  readonly #lateError: (waitMs: number) => unknown
  readonly #now: () => number
  readonly #wake: (() => void) | undefined
  #wakeTimer: NodeJS.Timeout | undefined = undefined
  /** When the last reset began (answered()). */
  #lastResetAt = -Infinity
  readonly #queue: Entry[] = []
  #active = 0
  /** Slots taken whose job has answered: their page is being reset. */
  #resetting = 0
  /** The mean time from a job's answer to its slot given back (the reset), ms. */
  #resetMs = INITIAL_RESET_MS
  #jobMs: number
  /** The mean deviation of the hold time (undefined until a job is measured). */
  #jobDevMs: number | undefined
  /** The mean time between two releases while waiters queued (undefined until measured). */
  #intervalMs: number | undefined
  /** The last release while waiters queued (NaN when the queue has emptied since). */
  #lastBacklogRelease = NaN
  readonly #refused = { full: 0, late: 0, left: 0 }

  constructor (options: LimiterOptions) {
    this.concurrency = Math.max(1, Math.floor(options.concurrency))
    this.queueLimit = Math.max(0, Math.floor(options.queueLimit))
    this.#abortError = options.abortError
    this.#lateError = options.lateError
    this.#wake = options.wake
    this.#jobMs = options.initialJobMs ?? 1000
    this.#now = options.now ?? Date.now
  }

  /** Waiters refused so far: the queue full, too late at admission, or left the queue when their time ran short. */
  get refused (): Readonly<{ full: number, late: number, left: number }> { return this.#refused }

  /** A slot's measured hold time, ms (the mean of the last jobs). */
  get jobMs (): number { return this.#jobMs }

  /** The time a waiter keeps for its own job before its deadline: the mean hold time and DEVIATIONS deviations. */
  get ownJobMs (): number { return this.#jobMs + DEVIATIONS * (this.#jobDevMs ?? 0) }

  /**
   * The queue's pace: the time between two slots given back while waiters queued, as measured; until it is, one
   * job's time spread over the slots. Jobs measured one at a time say little of how long they take with every slot
   * busy; the pace measured under a backlog does, and a waiter admitted on the estimate that then proves short
   * leaves the queue at the next release (pump), not at its deadline. (Taking one job's time per release until
   * measured, as if slots did not run in parallel, served half as many of a first burst of 200 on 2 cores and
   * refused none of them sooner.)
   */
  get paceMs (): number { return this.#intervalMs ?? this.#jobMs / this.concurrency }

  /**
   * How long a waiter at queue position `position` (0: the head) waits for a slot. It needs `position + 1` slots to
   * come free: the free ones first, then those whose reset ends (the measured reset time), then one release per job
   * still running, at the measured pace.
   */
  waitFor (position: number): number {
    const free = this.concurrency - this.#active
    const needed = position + 1 - Math.max(0, free)
    // A free slot: at most the rest of a hold for resets (the bound the hold itself uses, so the two never disagree).
    if (needed <= 0) return Math.max(0, this.#heldUntil() - this.#now())
    const jobsAhead = Math.max(0, needed - this.#resetting)
    return jobsAhead > 0 ? jobsAhead * this.paceMs : this.#resetMs
  }

  /** Slots taken (a job's reset included). */
  get active (): number { return this.#active }

  /** Slots taken whose job has answered (their reset under way). */
  get resetting (): number { return this.#resetting }

  /** The measured time of a reset (from a job's answer to its slot given back), ms. */
  get resetMs (): number { return this.#resetMs }

  get queued (): number { return this.#queue.length }

  /**
   * Until when a waiter is held back for the resets under way with a slot free (in the past: not held): while resets
   * run and no job does, up to RESET_HOLD measured reset times after the last one began.
   */
  #heldUntil (): number {
    if (this.#resetting === 0 || this.#active > this.#resetting) return -Infinity
    return this.#lastResetAt + RESET_HOLD * this.#resetMs
  }

  /**
   * Whether a waiter with this deadline may start now on a free slot. One is held back for resets under way unless
   * its own job's time would then not fit before its deadline (it starts beside them instead); when it is held,
   * wake() is armed for the hold's end.
   */
  #slotFree (deadline = Infinity): boolean {
    if (this.#active >= this.concurrency) return false
    const until = this.#heldUntil()
    const now = this.#now()
    if (until <= now || this.#latestStart(deadline) < until) return true
    if (this.#wake !== undefined && this.#wakeTimer === undefined) {
      const wake = this.#wake
      this.#wakeTimer = setTimeout(() => { this.#wakeTimer = undefined; wake() }, Math.ceil(until - now) + 1)
      this.#wakeTimer.unref()
    }
    return false
  }

  /** The latest a waiter with this deadline may start: its own job's time before it. */
  #latestStart (deadline: number): number {
    return deadline - this.ownJobMs
  }

  /**
   * What admit() would do now with a waiter of this deadline, without queuing it: 'started' stands for "a slot is
   * free" (`ready`: a browser can take it). A refusal ('full', 'late') is counted: the caller answers it (the early
   * verdict of docs/browser.md#admission, asked before a request does work the browser's refusal would throw away).
   */
  verdict (ready: boolean, deadline?: number): Admission {
    const admission = this.#judge(ready, deadline)
    if (admission === 'full' || admission === 'late') this.#refused[admission]++
    return admission
  }

  #judge (ready: boolean, deadline: number | undefined): Admission {
    if (this.#queue.length === 0 && ready && this.#slotFree(deadline)) return 'started'
    // The waiters that free slots and resets under way will take are not waiting for a job: the limit does not count them.
    if (this.#queue.length >= this.queueLimit + Math.max(0, this.concurrency - this.#active) + this.#resetting) return 'full'
    // Queued, it would start after the jobs ahead, and needs its own job's time before its deadline.
    if (deadline !== undefined && this.#now() + this.waitFor(this.#queue.length) > this.#latestStart(deadline)) return 'late'
    return 'queued'
  }

  /**
   * Starts `waiter` at once when a slot is free, nobody is ahead and `ready`; else queues it, unless the queue is
   * full or it would start too late. A queued waiter whose signal aborts leaves the queue and is rejected with the
   * abort error; one that can no longer start in time (its deadline's timer, or pump() at the measured pace) leaves
   * with the late error.
   */
  admit (waiter: Waiter, signal: AbortSignal, ready: boolean, deadline?: number): Admission {
    const admission = this.verdict(ready, deadline)
    if (admission === 'started') waiter.start()
    if (admission !== 'queued') return admission
    const onAbort = (): void => { this.#leave(entry, this.#abortError(signal)) }
    let timer: NodeJS.Timeout | undefined
    // Still queued at the latest start (the estimate was short): it cannot finish, so it leaves now. The pace may
    // have changed by then: a waiter that still fits waits on, to the new latest start.
    const arm = (): void => {
      timer = setTimeout(() => {
        if (this.#now() >= this.#latestStart(entry.deadline)) this.#late(entry)
        else arm()
      }, Math.max(0, this.#latestStart(entry.deadline) - this.#now()))
      timer.unref()
    }
    const entry: Entry = {
      waiter,
      deadline: deadline ?? Infinity,
      cleanup: () => {
        signal.removeEventListener('abort', onAbort)
        if (timer !== undefined) clearTimeout(timer)
      }
    }
    if (deadline !== undefined) arm()
    signal.addEventListener('abort', onAbort, { once: true })
    this.#queue.push(entry)
    return 'queued'
  }

  #leave (entry: Entry, err: unknown): void {
    const index = this.#queue.indexOf(entry)
    if (index !== -1) this.#queue.splice(index, 1)
    entry.cleanup()
    entry.waiter.reject(err)
  }

  #late (entry: Entry): void {
    this.#refused.left++
    this.#leave(entry, this.#lateError(this.waitFor(Math.max(0, this.#queue.indexOf(entry)))))
  }

  /**
   * Starts queued waiters in order while a slot is free, then lets go at once of every waiter that can no longer
   * start in time at the measured pace (it would only leave later, or time out). Returns false when it stopped
   * because `ready()` said no browser can take one (the caller then gets one going), true otherwise.
   */
  pump (ready: () => boolean): boolean {
    let started = true
    while (this.#queue.length > 0 && this.#slotFree(this.#queue[0]!.deadline)) {
      if (!ready()) { started = false; break }
      const head = this.#queue.shift()!
      head.cleanup()
      // Its time ran out while it waited: starting it now would only time out.
      if (this.#now() > this.#latestStart(head.deadline)) {
        this.#refused.left++
        head.waiter.reject(this.#lateError(0))
        continue
      }
      head.waiter.start()
    }
    this.#sweep()
    return started
  }

  /** Lets go of the queued waiters that would now start too late (the pace measured since they were queued). */
  #sweep (): void {
    const now = this.#now()
    for (let i = 0; i < this.#queue.length;) {
      const entry = this.#queue[i]!
      if (now + this.waitFor(i) > this.#latestStart(entry.deadline)) this.#late(entry)
      else i++
    }
  }

  /** Takes a slot (a started waiter that runs). */
  acquire (): void { this.#active += 1 }

  /**
   * The job of a taken slot has answered; the slot is given back once its page is reset. Until then a waiter may
   * count on the slot coming free within a reset's time. Each call is followed by one release() with `resetMs`.
   */
  answered (): void {
    this.#resetting += 1
    this.#lastResetAt = this.#now()
  }

  /**
   * Gives a slot back; `heldMs`, how long the slot was held, updates the measured job time and its deviation;
   * `resetMs`, given for a slot whose job answered() before, how long its reset took (NaN: the reset failed, and
   * measures nothing).
   * Two releases in a row while every slot is taken and waiters queue measure the pace: the time between them, into
   * a mean that starts from the estimate before any (paceMs). The first release of a backlog is no
   * measure: its job may have started long before the queue formed, or be the reset of a job answered just before.
   */
  release (heldMs?: number, resetMs?: number): void {
    const now = this.#now()
    if (resetMs !== undefined) {
      this.#resetting = Math.max(0, this.#resetting - 1)
      if (Number.isFinite(resetMs) && resetMs >= 0) this.#resetMs += SMOOTHING * (resetMs - this.#resetMs)
    }
    if (this.#active >= this.concurrency && this.#queue.length > 0) {
      if (!Number.isNaN(this.#lastBacklogRelease)) {
        const pace = this.paceMs
        this.#intervalMs = pace + SMOOTHING * (now - this.#lastBacklogRelease - pace)
      }
      this.#lastBacklogRelease = now
    } else {
      this.#lastBacklogRelease = NaN
    }
    this.#active -= 1
    if (heldMs === undefined || !Number.isFinite(heldMs) || heldMs < 0) return
    this.#jobDevMs = this.#jobDevMs === undefined ? heldMs / 2 : this.#jobDevMs + DEVIATION_SMOOTHING * (Math.abs(heldMs - this.#jobMs) - this.#jobDevMs)
    this.#jobMs += SMOOTHING * (heldMs - this.#jobMs)
  }

  /** Rejects every queued waiter with `err`. */
  flush (err: unknown): void {
    for (const entry of this.#queue.splice(0)) {
      entry.cleanup()
      entry.waiter.reject(err)
    }
  }
}
