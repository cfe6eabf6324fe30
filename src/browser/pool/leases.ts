// Where the leases are: in use by a job (or its reset), or reset and idle. Idle leases are kept per profile, up to
// `maxIdle` across profiles (each keeps a renderer), least recently used closed first; a job takes the most
// recently used one of its own profile on the current browser.
//
// Spares: with no job waiting, a job's slot is given back as its reset starts (runner.ts), so the next job of the
// profile must find another clean lease. When a job takes the last one its profile would have (none idle, none being reset, none on the way), a
// spare is opened beside it (`topUp`) and parked unused; from then on the profile's leases take turns, one serving a
// job while the last one is reset, and no job waits for a reset.
import type { Lease } from './lease.ts'
import type { Generation } from './supervisor.ts'

export class Leases {
  /** Leases in use by a job, its reset included. */
  readonly #busy = new Set<Lease>()
  readonly #maxIdle: number
  /** Reset leases waiting for a job, least recently used first. */
  readonly #idle: Lease[] = []
  /** Profile keys a spare is being opened for, per browser. */
  readonly #opening = new Map<Generation, Set<string>>()

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
    this.#trim()
  }

  #trim (): void {
    while (this.#idle.length > this.#maxIdle) (this.#idle.shift() as Lease).close()
  }

  /**
   * When the profile `key` has no clean lease coming on `gen` (none idle, none being reset, no spare on the way),
   * opens a spare with `open` and parks it unused, or closes it when `usable()` says its browser went meanwhile.
   * Returns the opening (rejects when `open` does), or undefined when the profile needs no spare.
   */
  topUp (key: string, gen: Generation, open: () => Promise<Lease>, usable: () => boolean): Promise<void> | undefined {
    if (this.#maxIdle === 0 || this.#coming(key, gen)) return undefined
    const opening = this.#opening.get(gen) ?? new Set<string>()
    this.#opening.set(gen, opening)
    opening.add(key)
    return (async () => {
      let lease: Lease
      try {
        lease = await open()
      } finally {
        opening.delete(key)
        if (opening.size === 0) this.#opening.delete(gen)
      }
      if (!usable()) {
        await lease.closeNow()
        return
      }
      lease.spareReady()
      // Behind the leases that served jobs: a job takes it only when none of them is idle.
      this.#idle.unshift(lease)
      this.#trim()
    })()
  }

  /** Whether a clean lease of `key` on `gen` is idle, being reset, or being opened as a spare. */
  #coming (key: string, gen: Generation): boolean {
    if (this.#opening.get(gen)?.has(key) === true) return true
    const ofProfile = (lease: Lease): boolean => lease.profile.key === key && lease.gen === gen
    if (this.#idle.some(ofProfile)) return true
    for (const lease of this.#busy) {
      if (lease.state === 'resetting' && ofProfile(lease)) return true
    }
    return false
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
