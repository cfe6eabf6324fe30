// The pool's own time helpers. src/util/abort.ts has a `sleep` too, but it takes a signal and keeps the process
// alive; the pool's waits (relaunch backoff, close polling) must do neither.
import { AppError, isAppError } from '../../errors.ts'

/** Resolves after `ms`; the timer does not keep the process alive. */
export function sleep (ms: number): Promise<void> {
  return new Promise((resolve) => { setTimeout(resolve, ms).unref() })
}

/** Resolves with the promise's value, or with `fallback` after `ms` (the promise goes on unobserved). */
export async function within<T> (promise: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([promise, new Promise<T>((resolve) => { timer = setTimeout(() => { resolve(fallback) }, ms) })])
  } finally {
    clearTimeout(timer)
  }
}

/** The error a job or a waiter fails with when its signal aborted: the reason if it is ours, else ETIMEOUT. */
export function abortErrorOf (signal: AbortSignal): AppError {
  const reason: unknown = signal.reason
  return isAppError(reason) ? reason : new AppError('ETIMEOUT', { cause: reason })
}
