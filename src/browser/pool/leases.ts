// Where the leases are: in use by a job (or its reset), or reset and idle. Idle leases are kept per profile, up to
// `maxIdle` across profiles (each keeps a renderer), least recently used closed first; a job takes the most
// recently used one of its own profile on the current browser.
import type { Lease } from './lease.ts'
import type { Generation } from './supervisor.ts'

export class Leases {
  /** Leases in use by a job, its reset included. */
  readonly #busy = new Set<Lease>()
  readonly #maxIdle: number
  /** Reset leases waiting for a job, least recently used first. */
  readonly #idle: Lease[] = []

  constructor (maxIdle: number) {
    this.#maxIdle = maxIdle
  }

  /** The most recently used idle lease with this profile on this browser, taken out of the idle list. */
  takeIdle (key: string, gen: Generation): Lease | undefined {
    for (let i = this.#idle.length - 1; i >= 0; i--) {
      const lease = this.#idle[i] as Lease
      if (lease.profile.key === key && lease.gen === gen && lease.page !== undefined) {
        this.#idle.splice(i, 1)
        lease.take()
        return lease
      }
    }
    return undefined
  }

  /** A reset lease joins the idle list; the least recently used beyond `maxIdle` are closed. */
  park (lease: Lease): void {
    lease.park()
    this.#idle.push(lease)
    while (this.#idle.length > this.#maxIdle) (this.#idle.shift() as Lease).close()
  }

  /** Closes the idle leases `which` selects. */
  dropIdle (which: (lease: Lease) => boolean): void {
    for (let i = this.#idle.length - 1; i >= 0; i--) {
      const lease = this.#idle[i] as Lease
      if (!which(lease)) continue
      this.#idle.splice(i, 1)
      lease.close()
    }
  }

  /** A job holds `lease` (until its reset is over). */
  hold (lease: Lease): void { this.#busy.add(lease) }

  /** The job and the reset are done with `lease`: it is parked or closed next. */
  letGo (lease: Lease): void { this.#busy.delete(lease) }

  hasIdleOn (gen: Generation): boolean {
    return this.#idle.some((lease) => lease.gen === gen)
  }

  /** Empties the idle list, for the caller to close what it held. */
  takeAllIdle (): Lease[] {
    return this.#idle.splice(0)
  }

  /** Aborts the jobs on busy leases that `which` selects, each with its own error. */
  abortJobs (which: (lease: Lease) => boolean, reason: () => unknown): void {
    for (const lease of this.#busy) {
      if (which(lease)) lease.job?.controller.abort(reason())
    }
  }
}
