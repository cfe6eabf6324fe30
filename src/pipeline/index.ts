// The use case of GET /: cache lookup, single flight, computation, cache write (docs/api.md §1.4 steps 7-10).
// Reads like a table of contents; each stage lives in its own module. Built once (createPipeline) from the
// components it names (deps.ts); each stage is handed only its part of them, and the request's options by group.
import type { Logger } from 'pino'
import type { PipelineDeps } from './deps.ts'
import type { ExtractOptions } from '../schemas/options.ts'
import { AppError } from '../errors.ts'
import { judge, type CacheEntry, type CacheRead, type Served } from '../cache/entries.ts'

export type { Served } from '../cache/entries.ts'
export type { PipelineDeps, PipelineLimits } from './deps.ts'
import { cacheKeyOf } from '../cache/key.ts'
import { abortable, createDeadline } from '../util/abort.ts'
import { computeEntry, refuseEarly, type Computed } from './compute.ts'
import type { FlightLock } from '../cache/single-flight.ts'
import { logStoreFailure } from '../store/unavailable.ts'


/** How one request is served: its deadline and logger, and what its caller knows already. */
export interface ServeOptions {
  /** The request's deadline. */
  signal: AbortSignal
  log: Logger
  /** The options' cache key, when the caller has it already. */
  cacheKey?: string
  /** Epoch ms of the request's deadline (queue wait included); default: timeout from now. */
  deadline?: number
  /**
   * Admits the computation (a tenant's concurrency slot, src/tenants/limits.ts), waiting until the deadline at most;
   * the release it gives is called when the computation ends, with whether it used the browser.
   */
  gate?: (signal: AbortSignal, deadline: number) => Promise<((browser: boolean) => void) | undefined>
  /** false: a computed answer is not written to the cache (Firecrawl's `storeInCache: false`); reads are unchanged. */
  store?: false
}

/** ms a lock outlives the computation's own deadline, so a crashed holder's lock lapses soon after. */
const LOCK_MARGIN_MS = 2000
const lockTtlOf = (options: ExtractOptions): number => options.timeout + LOCK_MARGIN_MS

/** What routes call: the pipeline's use cases, bound to its components. */
export interface Pipeline {
  /** Serves a request: the cache, the single flight, a computation on a miss (docs/api.md §1.4 steps 7-10). */
  serve (options: ExtractOptions, run: ServeOptions): Promise<Served>
  /** The entry held in process when it is a fresh HIT for these options (heldHit below). */
  heldHit (options: ExtractOptions, key: string): CacheEntry | undefined
  /** A HIT answered from the entry held in process, or undefined (serveHeld below). */
  serveHeld (options: ExtractOptions, key: string): Served | undefined
}

export function createPipeline (deps: PipelineDeps): Pipeline {
  return {
    serve: async (options, run) => await serveExtract(deps, options, run),
    heldHit: (options, key) => heldHit(deps, options, key),
    serveHeld: (options, key) => serveHeld(deps, options, key)
  }
}

async function serveExtract (deps: PipelineDeps, options: ExtractOptions, run: ServeOptions): Promise<Served> {
  const key = run.cacheKey ?? cacheKeyOf(options)
  const timings: Record<string, number> = {}
  const startedAt = Date.now()
  const lockTtl = lockTtlOf(options)
  // The flight's lock when the read found no entry and took it (or found it held), in the same round trip.
  let claim: string | null | undefined

  if (!options.force) {
    const t = performance.now()
    const read = await readCacheSafely(deps, key, lockTtl, run.log)
    const cached = read.entry
    claim = read.lock
    timings.cache = performance.now() - t
    if (cached !== undefined) {
      const verdict = judge(cached, options.staleTtl, Date.now())
      if (verdict.kind === 'hit') {
        deps.metrics.cache('HIT')
        return { entry: cached, status: 'HIT', timings }
      }
      if (verdict.kind === 'stale') {
        refreshInBackground(deps, key, options, run.log)
        deps.metrics.cache('STALE')
        return { entry: cached, status: 'STALE', timings }
      }
    }
  }

  const status: 'MISS' | 'BYPASS' = options.force ? 'BYPASS' : 'MISS'
  const flight = await deps.flights.run(
    key,
    (signal, lock) => computeAndStore(deps, key, options, { ...run, signal, status, timings }, lock),
    { signal: run.signal, lockTtl, since: startedAt, claim }
  )
  const served = flight.computedHere ? status : flight.entry.meta.status
  deps.metrics.cache(served)
  return { entry: flight.entry, ...(flight.computed === undefined ? {} : { fresh: flight.computed.fresh }), status: served, timings }
}

/**
 * The entry held in process (the hot copy) when it is a fresh HIT for these options, synchronously: no store round
 * trip and nothing to wait for. Undefined when there is no such copy (force, none held, stale or expired).
 */
function heldHit (deps: Pick<PipelineDeps, 'cache'>, options: ExtractOptions, key: string): CacheEntry | undefined {
  if (options.force) return undefined
  const held = deps.cache.held(key)
  return held === undefined || judge(held, options.staleTtl, Date.now()).kind !== 'hit' ? undefined : held
}

/**
 * A HIT answered from the entry held in process, so the caller arms no deadline for it. Undefined when there is
 * none (heldHit): serveExtract then decides as usual. Not counted in the metrics: the caller counts the hit it
 * answers, which may come after a step that refuses the request (POST /mcp looks first, then counts the quota).
 */
function serveHeld (deps: Pick<PipelineDeps, 'cache'>, options: ExtractOptions, key: string): Served | undefined {
  const t = performance.now()
  const held = heldHit(deps, options, key)
  if (held === undefined) return undefined
  return { entry: held, status: 'HIT', timings: { cache: performance.now() - t } }
}

async function readCacheSafely (deps: PipelineDeps, key: string, lockTtl: number, log: Logger): Promise<CacheRead> {
  try {
    return await deps.flights.read(key, { lockTtl })
  } catch (err) {
    // A store that is away makes every request a miss rather than an error (and the flight then computes without
    // the lock, as the store refuses it too).
    logStoreFailure(log, err, 'cache read failed')
    return { entry: undefined }
  }
}

async function computeAndStore (
  deps: PipelineDeps,
  key: string,
  options: ExtractOptions,
  run: ServeOptions & { status: 'MISS' | 'BYPASS', timings: Record<string, number> },
  lock: FlightLock | undefined
): Promise<Computed> {
  const deadline = run.deadline ?? Date.now() + options.timeout
  refuseEarly(deps, options, deadline)
  const release = await run.gate?.(run.signal, deadline)
  let computed: Computed
  try {
    computed = await abortable(computeEntry(deps, options, { ...run, cacheKey: key, deadline }), run.signal)
  } catch (err) {
    release?.(false)
    throw err
  }
  release?.(computed.entry.meta.fetchMode.startsWith('prerender'))
  const { incomplete } = computed.entry.meta
  if (incomplete !== undefined) {
    // Taken as loaded: another request, with more time, may get more. Nothing is written, the entry there (if any)
    // stays, and the flight's lock is released as after a failure, so a follower elsewhere computes for itself.
    run.log.info({ gaveUp: incomplete }, 'incomplete answer not cached')
    return computed
  }
  // Not to be stored: as above, the entry there (if any) stays and the lock is released unwritten.
  if (run.store === false) return computed
  const t = performance.now()
  try {
    // With the flight's lock, released in the same round trip.
    await deps.cache.write(key, computed.entry, lock)
  } catch (err) {
    logStoreFailure(run.log, err, 'cache write failed')
  }
  run.timings['cache-write'] = performance.now() - t
  return computed
}

/** One background recomputation per key (the single flight dedupes), with its own deadline. */
function refreshInBackground (deps: PipelineDeps, key: string, options: ExtractOptions, log: Logger): void {
  const deadline = createDeadline(options.timeout, () => new AppError('ETIMEOUT'))
  const task = deps.flights.run(
    key,
    (signal, lock) => computeAndStore(deps, key, options, { signal, log, status: 'MISS', timings: {} }, lock),
    { signal: deadline.signal, lockTtl: lockTtlOf(options), since: Date.now() }
  ).then(
    () => { log.debug('stale entry refreshed') },
    (err: unknown) => { log.warn({ err }, 'background refresh failed') }
  ).finally(() => {
    deadline.dispose()
    deps.background.delete(task)
  })
  deps.background.add(task)
}
