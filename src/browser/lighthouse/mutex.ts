// One Lighthouse run at a time per instance (docs/api.md §3.4): Lighthouse keeps process-wide state (its logger,
// its performance marks) and its performance numbers are only worth something when it does not share the CPU with
// another of its runs. Later runs wait first come first served, each within its own deadline; beyond `queueLimit`
// waiting, the caller is told at once (EBUSY), like the browser queue.
import { AppError } from '../../errors.ts'
import { abortError } from '../../util/abort.ts'

interface Waiter {
  grant: () => void
  cleanup: () => void
}

export class RunMutex {
  readonly queueLimit: number
  #held = false
  readonly #queue: Waiter[] = []

  constructor (queueLimit: number) {
    this.queueLimit = Math.max(0, Math.floor(queueLimit))
  }

  get held (): boolean { return this.#held }

  get waiting (): number { return this.#queue.length }

  /** Resolves with the release function once it is this caller's turn; rejects on abort or when too many wait. */
  async acquire (signal: AbortSignal): Promise<() => void> {
    if (signal.aborted) throw abortError(signal)
    if (!this.#held) {
      this.#held = true
      return this.#releaser()
    }
    if (this.#queue.length >= this.queueLimit) {
      throw new AppError('EBUSY', {
        headers: { 'retry-after': '5' },
        data: { browser: `A Lighthouse run is under way and ${this.#queue.length} wait for theirs.` }
      })
    }
    return await new Promise<() => void>((resolve, reject) => {
      const onAbort = (): void => {
        const index = this.#queue.indexOf(waiter)
        if (index !== -1) this.#queue.splice(index, 1)
        reject(abortError(signal))
      }
      const waiter: Waiter = {
        grant: () => { resolve(this.#releaser()) },
        cleanup: () => { signal.removeEventListener('abort', onAbort) }
      }
      signal.addEventListener('abort', onAbort, { once: true })
      this.#queue.push(waiter)
    })
  }

  #releaser (): () => void {
    let released = false
    return () => {
      if (released) return
      released = true
      const next = this.#queue.shift()
      if (next === undefined) { this.#held = false; return }
      next.cleanup()
      next.grant()
    }
  }
}
