// One Lighthouse run at a time (src/browser/lighthouse/mutex.ts), without a browser: the first caller goes at once,
// later ones wait first come first served, a waiter whose signal aborts leaves the line with its reason, and beyond
// the queue limit the caller is told EBUSY at once.
import { describe, expect, it } from 'vitest'
import { RunMutex } from '../../src/browser/lighthouse/mutex.ts'
import { AppError } from '../../src/errors.ts'

const never = new AbortController().signal

describe('RunMutex', () => {
  it('lets one in, queues the next ones in order, and hands over on release', async () => {
    const mutex = new RunMutex(2)
    const order: string[] = []
    const first = await mutex.acquire(never)
    expect(mutex.held).toBe(true)
    const second = mutex.acquire(never).then((release) => { order.push('second'); return release })
    const third = mutex.acquire(never).then((release) => { order.push('third'); return release })
    await Promise.resolve()
    expect(mutex.waiting).toBe(2)
    expect(order).toEqual([])
    first()
    first() // twice is once
    const releaseSecond = await second
    expect(order).toEqual(['second'])
    expect(mutex.waiting).toBe(1)
    releaseSecond()
    ;(await third)()
    expect(order).toEqual(['second', 'third'])
    expect({ held: mutex.held, waiting: mutex.waiting }).toEqual({ held: false, waiting: 0 })
  })

  it('answers EBUSY beyond the queue limit, and lets an aborted waiter go with its reason', async () => {
    const mutex = new RunMutex(1)
    const release = await mutex.acquire(never)
    const controller = new AbortController()
    const waiting = mutex.acquire(controller.signal)
    await expect(mutex.acquire(never)).rejects.toMatchObject({ code: 'EBUSY', status: 503 })
    controller.abort(new AppError('ETIMEOUT'))
    await expect(waiting).rejects.toMatchObject({ code: 'ETIMEOUT' })
    expect(mutex.waiting).toBe(0)
    // The line is free again: the next caller queues, and gets the turn on release.
    const next = mutex.acquire(never)
    release()
    ;(await next)()
    expect(mutex.held).toBe(false)
    // An already aborted signal is refused at once.
    await expect(mutex.acquire(controller.signal)).rejects.toMatchObject({ code: 'ETIMEOUT' })
  })
})
