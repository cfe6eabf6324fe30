// What the pipeline is built from (createPipeline in index.ts): each outside component by name, and the service's
// limits as one group. Each stage declares the part it uses beside its code (FetchDeps, RenderDeps, LoadDeps,
// EnrichDeps, ComputeDeps) and is handed only that, so a stage's parameters show everything it can reach; none of
// them sees the app context.
import type { Cache } from '../cache/entries.ts'
import type { SingleFlight } from '../cache/single-flight.ts'
import type { ServiceMetrics } from '../metrics.ts'
import type { ComputeDeps } from './compute.ts'

/** The service's limits the pipeline applies (config.ts: MAX_HTML_BYTES, MAX_RESPONSE_BYTES, ...), grouped once. */
export interface PipelineLimits {
  readonly maxHtmlBytes: number
  readonly maxResponseBytes: number
  readonly maxRedirects: number
  readonly maxFullPageHeight: number
}

export type PipelineDeps = ComputeDeps & {
  readonly cache: Pick<Cache, 'held' | 'write'>
  readonly flights: Pick<SingleFlight, 'run' | 'read'>
  readonly metrics: Pick<ServiceMetrics, 'cache'>
  readonly limits: PipelineLimits
  /** Background work (stale refreshes) that shutdown waits for. */
  readonly background: Set<Promise<unknown>>
}
