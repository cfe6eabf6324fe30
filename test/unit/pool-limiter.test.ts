// The pool's slots and bounded queue, without a browser: who starts at once, who waits, who is told "full", and
// what an abort or a flush does to a waiter.
import { describe, expect, it } from 'vitest'
import { Limiter } from '../../src/browser/pool/limiter.ts'
import type { Waiter } from '../../src/browser/pool/limiter.ts'

interface Probe extends Waiter {
  started: boolean
  rejected: unknown
}

/** A waiter that takes its slot when started, as the pool's do. */
function probe (limiter: Limiter): Probe {
  const p: Probe = {
    started: false,
    rejected: undefined,
    start () { p.started = true; limiter.acquire() },
    reject (err) { p.rejected = err }
  }
  return p
}

function limiterOf (concurrency: number, queueLimit: number, clock?: { now: number }): Limiter {
  return new Limiter({
    concurrency,
    queueLimit,
    abortError: (signal) => ({ aborted: signal.reason }),
    lateError: (waitMs) => ({ late: waitMs }),
    ...(clock === undefined ? {} : { now: () => clock.now })
  })
}

/** 40 jobs of `jobMs`, each answered and its slot given back after a reset of `resetMs`: the limiter's measures. */
function measureJobs (limiter: Limiter, jobMs: number, resetMs: number): void {
  for (let i = 0; i < 40; i++) { limiter.acquire(); limiter.answered(); limiter.release(jobMs, resetMs) }
}

/** A limiter of `concurrency` slots and no queue, after jobs of `jobMs` and resets of 50 ms, with one job answered now: its reset under way. */
function oneResetUnderWay (concurrency: number, jobMs: number, clock: { now: number }): Limiter {
  const limiter = limiterOf(concurrency, 0, clock)
  measureJobs(limiter, jobMs, 50)
  limiter.acquire()
  limiter.answered()
  return limiter
}

const never = new AbortController().signal

describe('Limiter', () => {
  it('starts up to `concurrency` at once, queues up to `queueLimit`, and answers full beyond', () => {
    const limiter = limiterOf(2, 1)
    const [a, b, c, d] = [probe(limiter), probe(limiter), probe(limiter), probe(limiter)]
    expect(limiter.admit(a, never, true)).toBe('started')
    expect(limiter.admit(b, never, true)).toBe('started')
    expect(limiter.admit(c, never, true)).toBe('queued')
    expect(limiter.admit(d, never, true)).toBe('full')
    expect([a.started, b.started, c.started, d.started]).toEqual([true, true, false, false])
    expect({ active: limiter.active, queued: limiter.queued }).toEqual({ active: 2, queued: 1 })
  })

  it('queues when no browser is ready, even with free slots, and never lets anyone jump the queue', () => {
    const limiter = limiterOf(2, 5)
    const [a, b] = [probe(limiter), probe(limiter)]
    expect(limiter.admit(a, never, false)).toBe('queued')
    expect(limiter.admit(b, never, true)).toBe('queued')
    expect(limiter.pump(() => false)).toBe(false)
    expect(a.started).toBe(false)
    expect(limiter.pump(() => true)).toBe(true)
    expect([a.started, b.started]).toEqual([true, true])
  })

  it('starts waiters first in, first out as slots are released', () => {
    const limiter = limiterOf(1, 3)
    const order: string[] = []
    const named = (name: string): Waiter => ({ start () { order.push(name); limiter.acquire() }, reject () {} })
    limiter.admit(named('a'), never, true)
    limiter.admit(named('b'), never, true)
    limiter.admit(named('c'), never, true)
    expect(order).toEqual(['a'])
    limiter.release()
    limiter.pump(() => true)
    expect(order).toEqual(['a', 'b'])
    limiter.release()
    limiter.pump(() => true)
    expect(order).toEqual(['a', 'b', 'c'])
    expect(limiter.queued).toBe(0)
  })

  it('takes a waiter whose signal aborts out of the queue and rejects it with the abort error', () => {
    const limiter = limiterOf(1, 2)
    limiter.admit(probe(limiter), never, true)
    const controller = new AbortController()
    const waiting = probe(limiter)
    limiter.admit(waiting, controller.signal, true)
    controller.abort('gone')
    expect(waiting.rejected).toEqual({ aborted: 'gone' })
    expect(limiter.queued).toBe(0)
    limiter.release()
    limiter.pump(() => true)
    expect(waiting.started).toBe(false)
  })

  it('flush rejects every waiter and stops listening to their signals', () => {
    const limiter = limiterOf(1, 2)
    limiter.admit(probe(limiter), never, true)
    const controller = new AbortController()
    const waiting = probe(limiter)
    limiter.admit(waiting, controller.signal, true)
    limiter.flush('closing')
    expect(waiting.rejected).toBe('closing')
    controller.abort('late')
    expect(waiting.rejected).toBe('closing')
    expect(limiter.queued).toBe(0)
  })

  it('holds at least one slot and no negative queue', () => {
    const limiter = limiterOf(0.5, -3)
    expect([limiter.concurrency, limiter.queueLimit]).toEqual([1, 0])
    limiter.admit(probe(limiter), never, true)
    expect(limiter.admit(probe(limiter), never, true)).toBe('full')
  })

  it('refuses at once a waiter that would start too late to finish before its deadline, at the measured pace', () => {
    const clock = { now: 1_000_000 }
    const limiter = limiterOf(2, 100, clock)
    // Jobs of 2 s measured one at a time: the mean moves toward them from the 1 s prior.
    for (let i = 0; i < 40; i++) { limiter.acquire(); limiter.release(2_000) }
    expect(limiter.jobMs).toBeCloseTo(2_000, -1)
    // Never measured with waiters queued: the pace is one job's time spread over the slots.
    expect(limiter.paceMs).toBeCloseTo(1_000, -1)
    limiter.admit(probe(limiter), never, true)
    limiter.admit(probe(limiter), never, true)
    // Both slots busy: the n-th waiter starts after n + 1 releases (1 s apart) and needs one job's time (2 s) before
    // its deadline.
    const deadline = clock.now + 10_010
    const admissions = Array.from({ length: 12 }, () => limiter.admit(probe(limiter), never, true, deadline))
    // The 8th (position 7) starts after 8 releases, at 8 s, and ends at the deadline; the 9th would end 1 s after it.
    expect(admissions.filter(a => a === 'queued')).toHaveLength(8)
    expect(admissions.slice(8).every(a => a === 'late')).toBe(true)
    expect(limiter.refused).toEqual({ full: 0, late: 4, left: 0 })
    expect(limiter.queued).toBe(8)
    expect(limiter.waitFor(limiter.queued)).toBeCloseTo(9_000, -1)
  })

  it('measures the pace from releases while waiters queue, not from jobs one at a time', () => {
    const clock = { now: 1_000_000 }
    const limiter = limiterOf(2, 100, clock)
    for (let i = 0; i < 40; i++) { limiter.acquire(); clock.now += 1_000; limiter.release(1_000) }
    expect(limiter.paceMs).toBeCloseTo(500, -1)
    // A job's reset overlaps the next job of a client that sends one at a time: both slots taken, nobody waiting.
    for (let i = 0; i < 40; i++) { limiter.acquire(); limiter.acquire(); clock.now += 50; limiter.release(1_000); clock.now += 950; limiter.release(1_000) }
    expect(limiter.paceMs).toBeCloseTo(500, -1)
    // Both slots taken and waiters queued: a slot is given back every 300 ms, and the next waiter starts.
    limiter.admit(probe(limiter), never, true)
    limiter.admit(probe(limiter), never, true)
    for (let i = 0; i < 60; i++) limiter.admit(probe(limiter), never, true)
    for (let i = 0; i < 40; i++) { clock.now += 300; limiter.release(600); limiter.pump(() => true) }
    expect(limiter.paceMs).toBeCloseTo(300, -1)
    expect(limiter.waitFor(0)).toBeCloseTo(300, -1)
    expect(limiter.waitFor(9)).toBeCloseTo(3_000, -1)
  })

  it('lets go at once of queued waiters that no longer fit once the pace is measured slower', () => {
    const clock = { now: 1_000_000 }
    const limiter = limiterOf(1, 100, clock)
    for (let i = 0; i < 40; i++) { limiter.acquire(); clock.now += 1_000; limiter.release(1_000) }
    limiter.admit(probe(limiter), never, true)
    const deadline = clock.now + 10_000
    const waiting = Array.from({ length: 8 }, () => probe(limiter))
    expect(waiting.map(w => limiter.admit(w, never, true, deadline))).toEqual(Array(8).fill('queued'))
    // The running job takes 4 s: the pace is now slower, and only the first waiters can still start in time.
    clock.now += 4_000
    limiter.release(4_000)
    limiter.pump(() => true)
    expect(waiting[0]!.started).toBe(true)
    const left = waiting.filter(w => w.rejected !== undefined)
    expect(left.length).toBeGreaterThan(0)
    expect(left.every(w => typeof (w.rejected as { late?: number }).late === 'number')).toBe(true)
    expect(waiting.filter(w => !w.started && w.rejected === undefined)).toHaveLength(limiter.queued)
    expect(limiter.refused.left).toBe(left.length)
    // Those kept can start in time at the pace measured now.
    expect(clock.now + limiter.waitFor(limiter.queued - 1) + limiter.ownJobMs).toBeLessThanOrEqual(deadline)
  })

  it('gives an early verdict without queuing, and counts a refusal', () => {
    const clock = { now: 1_000_000 }
    const limiter = limiterOf(1, 1, clock)
    expect(limiter.verdict(true, clock.now + 5_000)).toBe('started')
    expect(limiter.verdict(false, clock.now + 5_000)).toBe('queued')
    limiter.admit(probe(limiter), never, true)
    expect(limiter.verdict(true, clock.now + 5_000)).toBe('queued')
    expect(limiter.verdict(true, clock.now + 1_500)).toBe('late')
    expect({ active: limiter.active, queued: limiter.queued }).toEqual({ active: 1, queued: 0 })
    limiter.admit(probe(limiter), never, true)
    expect(limiter.verdict(true)).toBe('full')
    expect(limiter.refused).toEqual({ full: 1, late: 1, left: 0 })
  })

  it('lets a queued waiter leave when only one job\'s time is left before its deadline', async () => {
    const limiter = limiterOf(1, 10)
    for (let i = 0; i < 40; i++) { limiter.acquire(); limiter.release(50) }
    limiter.admit(probe(limiter), never, true)
    const waiting = probe(limiter)
    expect(limiter.admit(waiting, never, true, Date.now() + 400)).toBe('queued')
    await new Promise(resolve => setTimeout(resolve, 600))
    expect(waiting.started).toBe(false)
    expect(waiting.rejected).toMatchObject({ late: expect.any(Number) })
    expect(limiter.queued).toBe(0)
  })

  it('lets a waiter wait for a slot whose job has answered and is being reset, even with no queue, for the reset\'s time', () => {
    const clock = { now: 1_000_000 }
    const limiter = limiterOf(1, 0, clock)
    // Jobs of 2 s measured, resets of 50 ms.
    measureJobs(limiter, 2_000, 50)
    expect(limiter.resetMs).toBeCloseTo(50, 0)
    const running = probe(limiter)
    limiter.admit(running, never, true)
    // Its job still runs: no queue, so full; a short deadline would be late at the job's pace anyway.
    expect(limiter.verdict(true, clock.now + 3_000)).toBe('full')
    // Its job answered: the slot is free in a reset's time. A waiter with time for its own job is queued for it.
    limiter.answered()
    expect(limiter.resetting).toBe(1)
    expect(limiter.waitFor(0)).toBeCloseTo(50, 0)
    const next = probe(limiter)
    expect(limiter.admit(next, never, true, clock.now + 3_000)).toBe('queued')
    // One reset, one waiter: the next one waits for a job, and there is no room for that.
    expect(limiter.verdict(true, clock.now + 3_000)).toBe('full')
    limiter.release(2_000, 60)
    limiter.pump(() => true)
    expect(next.started).toBe(true)
    expect(limiter.resetting).toBe(0)
    expect(limiter.refused).toEqual({ full: 2, late: 0, left: 0 })
  })

  it('holds a waiter back while the only work under way is a reset, even with slots free, until the reset ends', () => {
    const clock = { now: 1_000_000 }
    // The last job answered: its reset runs, nothing else does. Three slots are free, and a waiter still waits.
    const limiter = oneResetUnderWay(4, 200, clock)
    const next = probe(limiter)
    expect(limiter.admit(next, never, true, clock.now + 3_000)).toBe('queued')
    // At most the rest of the hold: twice the reset time from the reset's start.
    expect(limiter.waitFor(0)).toBeCloseTo(100, 0)
    clock.now += 60
    expect(limiter.waitFor(0)).toBeCloseTo(40, 0)
    // A second one is not refused as full (BROWSER_QUEUE_LIMIT=0): free slots will take both.
    const other = probe(limiter)
    expect(limiter.admit(other, never, true)).toBe('queued')
    // Late in the hold, one whose latest start falls just after the hold's end waits for it: not refused as late.
    const patient = probe(limiter)
    expect(limiter.admit(patient, never, true, clock.now + 42 + limiter.ownJobMs)).toBe('queued')
    limiter.pump(() => true)
    expect([next.started, other.started, patient.started]).toEqual([false, false, false])
    limiter.release(200, 30)
    limiter.pump(() => true)
    expect([next.started, other.started, patient.started]).toEqual([true, true, true])
    expect(limiter.refused).toEqual({ full: 0, late: 0, left: 0 })
  })

  it('does not hold back for a reset a waiter whose deadline leaves no time to wait: it starts beside the reset', () => {
    const clock = { now: 1_000_000 }
    // Jobs of 4 s measured (they ran to a 4 s timeout), resets of 50 ms.
    const limiter = oneResetUnderWay(2, 4_000, clock)
    // A 4 s deadline is shorter than a job's measured time: held, it could only be refused as late. It starts now,
    // as it would with no reset under way.
    const hurried = probe(limiter)
    expect(limiter.admit(hurried, never, true, clock.now + 4_000)).toBe('started')
    expect(limiter.refused).toEqual({ full: 0, late: 0, left: 0 })
  })

  it('starts a waiter on a free slot beside a reset when a job runs too, and does not hold it past twice the reset time', async () => {
    const limiter = limiterOf(4, 0)
    measureJobs(limiter, 200, 50)
    limiter.acquire()
    limiter.acquire()
    limiter.answered()
    // One job runs, one reset: the CPU is shared anyway, and waiting would only add the reset's time.
    const beside = probe(limiter)
    expect(limiter.admit(beside, never, true)).toBe('started')
    expect(beside.started).toBe(true)
    limiter.release(200)
    limiter.release(200)
    // Only the reset is left, and it never ends: wake() starts the waiter about 100 ms (2 × 50) after it began.
    let woken = 0
    const waking = new Limiter({ concurrency: 4, queueLimit: 0, abortError: () => 'aborted', lateError: () => 'late', wake: () => { woken += 1; waking.pump(() => true) } })
    measureJobs(waking, 200, 50)
    waking.acquire()
    waking.answered()
    const held = probe(waking)
    const queuedAt = performance.now()
    expect(waking.admit(held, never, true)).toBe('queued')
    await expect.poll(() => held.started, { timeout: 5_000, interval: 10 }).toBe(true)
    expect(woken).toBeGreaterThanOrEqual(1)
    expect(performance.now() - queuedAt).toBeGreaterThanOrEqual(90)
  })

  it('measures the reset time by resets that worked only', () => {
    const limiter = limiterOf(2, 0)
    measureJobs(limiter, 2_000, 50)
    // A reset that failed (the pool ended it at its bound) gives its slot back and says nothing of the next one's time.
    limiter.acquire()
    limiter.answered()
    expect(limiter.resetting).toBe(1)
    limiter.release(undefined, NaN)
    expect(limiter.resetting).toBe(0)
    expect(limiter.active).toBe(0)
    expect(limiter.resetMs).toBeCloseTo(50, 0)
  })

  it('queues without a deadline as before', () => {
    const limiter = limiterOf(1, 3)
    limiter.admit(probe(limiter), never, true)
    expect([1, 2, 3, 4].map(() => limiter.admit(probe(limiter), never, true))).toEqual(['queued', 'queued', 'queued', 'full'])
  })
})
