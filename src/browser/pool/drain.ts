// What close() waits for: jobs still running, and jobs being released (their lease reset or closed after the
// caller already has its answer).

export class Drain {
  /** Releases under way: each settles once its job's lease is reset or closed. */
  readonly #running = new Set<Promise<void>>()
  /** Woken whenever a job is released. */
  readonly #waiters = new Set<() => void>()

  /** Follows a job's release until it settles. */
  track (release: Promise<void>): void {
    this.#running.add(release)
    void release.finally(() => { this.#running.delete(release) })
  }

  /** A job was released. */
  wake (): void {
    for (const wake of [...this.#waiters]) wake()
  }

  /**
   * Waits until no job runs (`active()` is 0) and no release is under way. Past `timeoutMs`, `overdue` is called
   * before each further wait (it aborts what still runs).
   */
  async settle (active: () => number, timeoutMs: number, overdue: () => void): Promise<void> {
    const deadline = Date.now() + timeoutMs
    while (this.#running.size > 0 || active() > 0) {
      const left = deadline - Date.now()
      if (left <= 0) overdue()
      await Promise.race([this.#waitForRelease(left > 0 ? left : 250), ...this.#running])
    }
  }

  #waitForRelease (ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => { clearTimeout(timer); this.#waiters.delete(done); resolve() }
      const timer = setTimeout(done, ms)
      this.#waiters.add(done)
    })
  }
}
