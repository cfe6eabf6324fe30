// Time and cancellation: the few primitives every stage with a deadline needs, each written once. A stage that
// gives up rejects with its signal's reason, so the request fails with whatever ended it (deadline, client gone,
// browser crash). An aborted signal always has a reason: abort() without one gives an AbortError (DOM spec), so
// the ETIMEOUT fallback below only covers hand-made signal-likes.
import { AppError, isAppError } from '../errors.ts'

/** Why `signal` aborted: its reason, or ETIMEOUT when it carries none. */
export function abortReason (signal: AbortSignal): unknown {
  return signal.reason ?? new AppError('ETIMEOUT')
}

/** Why `signal` aborted, as an AppError: its reason when that is one, else ETIMEOUT carrying the reason as cause. */
export function abortError (signal: AbortSignal): AppError {
  const reason: unknown = signal.reason
  return isAppError(reason) ? reason : new AppError('ETIMEOUT', { cause: reason })
}

/** Throws the abort reason when `signal` has fired. */
export function throwIfAborted (signal: AbortSignal): void {
  if (signal.aborted) throw abortReason(signal)
}

/**
 * Resolves after `ms` (negative counts as 0), or rejects with the abort reason as soon as the signal fires. Without a
 * signal it is a background wait (a relaunch backoff, a close poll): it cannot be cut short and does not keep the
 * process alive.
 */
export function sleep (ms: number, signal?: AbortSignal): Promise<void> {
  if (signal === undefined) return new Promise((resolve) => { setTimeout(resolve, Math.max(0, ms)).unref() })
  return new Promise((resolve, reject) => {
    if (signal.aborted) { reject(abortReason(signal)); return }
    const onAbort = (): void => { clearTimeout(timer); reject(abortReason(signal)) }
    const timer = setTimeout(() => { signal.removeEventListener('abort', onAbort); resolve() }, Math.max(0, ms))
    signal.addEventListener('abort', onAbort, { once: true })
  })
}

/**
 * `work`, or a rejection with the abort reason as soon as the signal fires (at once when it has already, even if the
 * work is done). The work is left running (its owner stops it, e.g. by closing the page); its late rejection is
 * swallowed.
 */
export async function abortable<T> (work: Promise<T>, signal: AbortSignal): Promise<T> {
  work.catch(() => {})
  throwIfAborted(signal)
  let onAbort: (() => void) | undefined
  const aborted = new Promise<never>((_resolve, reject) => {
    onAbort = () => reject(abortReason(signal))
    signal.addEventListener('abort', onAbort, { once: true })
  })
  aborted.catch(() => {})
  try {
    return await Promise.race([work, aborted])
  } finally {
    if (onAbort !== undefined) signal.removeEventListener('abort', onAbort)
  }
}

/** What `within` gives when the time ran out first. */
export const TIMED_OUT: unique symbol = Symbol('timed out')

export function isTimedOut (value: unknown): value is typeof TIMED_OUT {
  return value === TIMED_OUT
}

/**
 * Races `work` against `ms` and the signal, if any: its value, or TIMED_OUT when the time ran out first (the work is
 * left running; its late rejection is swallowed). Rejects with the abort reason on abort, at once when it has already.
 */
export async function within<T> (work: Promise<T>, ms: number, signal?: AbortSignal): Promise<T | typeof TIMED_OUT> {
  work.catch(() => {})
  if (signal !== undefined) throwIfAborted(signal)
  let timer: NodeJS.Timeout | undefined
  let onAbort: (() => void) | undefined
  const limit = new Promise<typeof TIMED_OUT>((resolve, reject) => {
    timer = setTimeout(() => resolve(TIMED_OUT), Math.max(0, ms))
    if (signal === undefined) return
    onAbort = () => reject(abortReason(signal))
    signal.addEventListener('abort', onAbort, { once: true })
  })
  try {
    return await Promise.race([work, limit])
  } finally {
    clearTimeout(timer)
    if (onAbort !== undefined) signal?.removeEventListener('abort', onAbort)
  }
}

/** A signal that aborts by itself after a time, or earlier by hand or with a parent signal. */
export interface Deadline {
  readonly signal: AbortSignal
  /** Aborts now with `reason` (no-op once aborted). */
  abort (reason: unknown): void
  /** Stops the timer and detaches from the parent; the signal stays as it is. */
  dispose (): void
}

/**
 * Aborts after `ms` with `reason()` (built when the time is up), or with the parent's reason as soon as `parent`
 * aborts. Call dispose() once the guarded work is over.
 */
export function createDeadline (ms: number, reason: () => unknown, parent?: AbortSignal): Deadline {
  const controller = new AbortController()
  const timer = setTimeout(() => { controller.abort(reason()) }, Math.max(0, ms))
  const onParentAbort = (): void => { if (parent !== undefined) controller.abort(abortReason(parent)) }
  if (parent?.aborted === true) onParentAbort()
  else parent?.addEventListener('abort', onParentAbort, { once: true })
  return {
    signal: controller.signal,
    abort: (why) => { controller.abort(why) },
    dispose: () => {
      clearTimeout(timer)
      parent?.removeEventListener('abort', onParentAbort)
    }
  }
}
