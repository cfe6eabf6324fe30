// One full garbage collection once a process has started, before it serves (server.ts, and the benches that
// build the service in their own process). Why: V8 keeps at most 1,536 transitions from the map of the empty
// object `{}`, one per first property name. Starting the service (Fastify compiling its route schemas with Ajv,
// whose generated code names its variables `err16`, `_errs96`, ...; the modules; the fingerprints) fills
// them with names that die right away, and only a full collection clears them. Until one runs, every object
// built from `{}` with a first property V8 has not cached (`reply.header`'s headers object, lru-cache's `get`
// options) takes V8's slow path: a map of its own and an inline-cache miss per access, 1-10 µs each. A service
// whose heap stays small under load may not run a full collection for hours (docs/benchmarks.md, "The empty
// object's transitions").
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

let collect: (() => void) | undefined

/** Runs one full collection; returns how long it took, in milliseconds. */
export function settleHeap (): number {
  if (collect === undefined) {
    // The documented way to reach V8's `gc` without starting Node with --expose-gc: the flag is read when a new
    // context is made, so the function exists in that context only, and is taken back right after.
    setFlagsFromString('--expose-gc')
    collect = runInNewContext('gc') as () => void
    setFlagsFromString('--no-expose-gc')
  }
  const started = performance.now()
  collect()
  return performance.now() - started
}
