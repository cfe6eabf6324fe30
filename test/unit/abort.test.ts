// The time and cancellation primitives of src/util/abort.ts, on fake timers.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { AppError } from '../../src/errors.ts'
import {
  TIMED_OUT, abortReason, abortable, createDeadline, isTimedOut, sleep, throwIfAborted, within
} from '../../src/util/abort.ts'

beforeEach(() => { vi.useFakeTimers() })
afterEach(() => { vi.useRealTimers() })

/** Settles `promise` into a plain record, so a rejection can be looked at after the clock moved. */
function settle<T> (promise: Promise<T>): { value?: T, error?: unknown, done: boolean } {
  const out: { value?: T, error?: unknown, done: boolean } = { done: false }
  promise.then(value => { out.value = value; out.done = true }, (error: unknown) => { out.error = error; out.done = true })
  return out
}

function listeners (signal: AbortSignal): { count: () => number } {
  let count = 0
  const add = signal.addEventListener.bind(signal)
  const remove = signal.removeEventListener.bind(signal)
  signal.addEventListener = ((...args: Parameters<AbortSignal['addEventListener']>) => { count++; add(...args) }) as AbortSignal['addEventListener']
  signal.removeEventListener = ((...args: Parameters<AbortSignal['removeEventListener']>) => { count--; remove(...args) }) as AbortSignal['removeEventListener']
  return { count: () => count }
}

describe('abortReason and throwIfAborted', () => {
  it('give the signal\'s own reason', () => {
    const controller = new AbortController()
    expect(() => { throwIfAborted(controller.signal) }).not.toThrow()
    const reason = new AppError('ETIMEOUT')
    controller.abort(reason)
    expect(abortReason(controller.signal)).toBe(reason)
    expect(() => { throwIfAborted(controller.signal) }).toThrow(reason)
  })

  it('fall back to ETIMEOUT for a signal-like without a reason', () => {
    const bare = { aborted: true, reason: undefined } as unknown as AbortSignal
    const reason = abortReason(bare)
    expect(reason).toBeInstanceOf(AppError)
    expect((reason as AppError).code).toBe('ETIMEOUT')
  })
})

describe('sleep', () => {
  it('resolves after the time, and counts a negative time as 0', async () => {
    const signal = new AbortController().signal
    const slept = settle(sleep(100, signal))
    await vi.advanceTimersByTimeAsync(99)
    expect(slept.done).toBe(false)
    await vi.advanceTimersByTimeAsync(1)
    expect(slept).toEqual({ value: undefined, done: true })
    const negative = settle(sleep(-5, signal))
    await vi.advanceTimersByTimeAsync(0)
    expect(negative.done).toBe(true)
  })

  it('rejects with the reason as soon as the signal aborts, and at once when it already has', async () => {
    const controller = new AbortController()
    const slept = settle(sleep(10_000, controller.signal))
    const reason = new Error('gone')
    controller.abort(reason)
    await vi.advanceTimersByTimeAsync(0)
    expect(slept.error).toBe(reason)
    expect(vi.getTimerCount()).toBe(0)
    await expect(sleep(10, controller.signal)).rejects.toBe(reason)
  })

  it('leaves no listener behind once it has slept', async () => {
    const controller = new AbortController()
    const tracked = listeners(controller.signal)
    const slept = sleep(10, controller.signal)
    await vi.advanceTimersByTimeAsync(10)
    await slept
    expect(tracked.count()).toBe(0)
  })
})

describe('abortable', () => {
  it('gives the work\'s value or error', async () => {
    const signal = new AbortController().signal
    await expect(abortable(Promise.resolve(7), signal)).resolves.toBe(7)
    const failure = new Error('failed')
    await expect(abortable(Promise.reject(failure), signal)).rejects.toBe(failure)
  })

  it('rejects with the reason when the signal fires first, and swallows the work\'s late rejection', async () => {
    const controller = new AbortController()
    let fail: (err: Error) => void = () => {}
    const work = new Promise<number>((_resolve, reject) => { fail = reject })
    const raced = settle(abortable(work, controller.signal))
    const reason = new AppError('ETIMEOUT')
    controller.abort(reason)
    await vi.advanceTimersByTimeAsync(0)
    expect(raced.error).toBe(reason)
    fail(new Error('late')) // would be an unhandled rejection if nobody observed the work
    await vi.advanceTimersByTimeAsync(0)
  })

  it('rejects at once on an aborted signal, and detaches from the signal when the work ends', async () => {
    const aborted = new AbortController()
    const reason = new Error('before')
    aborted.abort(reason)
    await expect(abortable(Promise.resolve(1), aborted.signal)).rejects.toBe(reason)
    const controller = new AbortController()
    const tracked = listeners(controller.signal)
    await abortable(Promise.resolve(1), controller.signal)
    expect(tracked.count()).toBe(0)
  })
})

describe('within', () => {
  it('gives the work\'s value when it finishes in time', async () => {
    const signal = new AbortController().signal
    await expect(within(Promise.resolve('done'), 100, signal)).resolves.toBe('done')
    expect(vi.getTimerCount()).toBe(0)
  })

  it('gives TIMED_OUT when the time runs out first', async () => {
    const signal = new AbortController().signal
    const raced = settle(within(new Promise(() => {}), 100, signal))
    await vi.advanceTimersByTimeAsync(100)
    expect(raced.value).toBe(TIMED_OUT)
    expect(isTimedOut(raced.value)).toBe(true)
    expect(isTimedOut(undefined)).toBe(false)
    expect(isTimedOut('timed out')).toBe(false)
  })

  it('rejects with the abort reason, before or during the wait', async () => {
    const controller = new AbortController()
    const raced = settle(within(new Promise(() => {}), 10_000, controller.signal))
    const reason = new Error('client gone')
    controller.abort(reason)
    await vi.advanceTimersByTimeAsync(0)
    expect(raced.error).toBe(reason)
    expect(vi.getTimerCount()).toBe(0)
    await expect(within(Promise.resolve(1), 100, controller.signal)).rejects.toBe(reason)
  })
})

describe('createDeadline', () => {
  it('aborts with the reason built when the time is up', async () => {
    const reason = vi.fn(() => new AppError('ETIMEOUT'))
    const deadline = createDeadline(100, reason)
    expect(reason).not.toHaveBeenCalled()
    await vi.advanceTimersByTimeAsync(100)
    expect(deadline.signal.aborted).toBe(true)
    expect(deadline.signal.reason).toBe(reason.mock.results[0]?.value)
    deadline.dispose()
  })

  it('aborts by hand, the first reason winning', async () => {
    const deadline = createDeadline(100, () => new Error('time'))
    const first = new Error('client closed')
    deadline.abort(first)
    deadline.abort(new Error('second'))
    await vi.advanceTimersByTimeAsync(100)
    expect(deadline.signal.reason).toBe(first)
    deadline.dispose()
  })

  it('follows its parent, also one aborted already', () => {
    const parent = new AbortController()
    const deadline = createDeadline(100, () => new Error('time'), parent.signal)
    const reason = new Error('parent gone')
    parent.abort(reason)
    expect(deadline.signal.reason).toBe(reason)
    deadline.dispose()
    const early = createDeadline(100, () => new Error('time'), parent.signal)
    expect(early.signal.reason).toBe(reason)
    early.dispose()
  })

  it('dispose() stops the timer and leaves the parent', async () => {
    const parent = new AbortController()
    const tracked = listeners(parent.signal)
    const deadline = createDeadline(100, () => new Error('time'), parent.signal)
    expect(tracked.count()).toBe(1)
    deadline.dispose()
    expect(tracked.count()).toBe(0)
    expect(vi.getTimerCount()).toBe(0)
    parent.abort(new Error('later'))
    await vi.advanceTimersByTimeAsync(200)
    expect(deadline.signal.aborted).toBe(false)
  })
})
