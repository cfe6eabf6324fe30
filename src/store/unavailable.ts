// A store that is away (Redis down, docs/api.md §12.3): its calls are refused at once with StoreUnavailableError
// until it is back, and the callers that degrade around it (quota, cache read and write, single-flight locks) log
// through logStoreFailure. The first refusal of an outage is a warning with the error; the others are debug lines
// without a stack, and the store says how many there were when it is back. So an outage costs the log a few lines,
// not four warnings with stack traces for every request.

/** A store call refused because the store is known to be away. */
export class StoreUnavailableError extends Error {
  readonly code = 'ESTOREAWAY'
  /** The first refusal of this outage: the one logged as a warning. */
  readonly first: boolean
  constructor (reason: string, first: boolean) {
    super(reason === '' ? 'the store is unavailable' : `the store is unavailable: ${reason}`)
    this.name = 'StoreUnavailableError'
    this.first = first
  }
}

interface FailureLog {
  warn (obj: object, msg: string): void
  debug (obj: object, msg: string): void
}

/** Logs a store call that failed while the caller went on without it: see the file's header. */
export function logStoreFailure (log: FailureLog, err: unknown, msg: string): void {
  if (err instanceof StoreUnavailableError && !err.first) log.debug({ code: err.code }, msg)
  else log.warn({ err }, msg)
}
