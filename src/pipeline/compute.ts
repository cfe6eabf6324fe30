// One computation of a result, the use case behind every MISS: load the page (load.ts), read it once in the page
// reader (src/reader/: the metadata, the `data` rules, video/audio, technologies, oEmbed links), add the outcome of
// `function`, run the enrichers on the result (storing the producers' files first, then oEmbed), and build the cache
// entry.
import { randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import type { AddressGuard } from '../net/guard.ts'
import type { ServiceMetrics } from '../metrics.ts'
import type { PageReader } from '../reader/index.ts'
import type { ExtractOptions } from '../schemas/options.ts'
import type { CacheEntry, Envelope, LoadedBy, Fresh } from '../cache/entries.ts'
import { groupOptions, type OptionGroups, type OutputOptions } from '../schemas/option-groups.ts'
import { loadModeOf, readsPage as readsPageOf } from './prerender.ts'
import { loadTarget, type LoadDeps, type Loaded } from './load.ts'
import type { PageReadTask } from '../reader/index.ts'
import { enrich, type EnrichDeps, type Extraction } from './enrichers/index.ts'
import { runWithEgress, type EgressScope } from '../net/egress-scope.ts'
import { parseUpstreamProxy, resolveProxy } from '../net/proxy-tunnel.ts'
import { recompressFiles } from '../media/png-recompress.ts'
import type { FileKind } from '../browser/producers/index.ts'
import { AppError } from '../errors.ts'

/** The outputs that are a media file the page names (docs/api.md §3.4), in their order in `data`. */
const AV_KINDS = ['video', 'audio'] as const

/** Results whose target answered 5xx are cached for one minute at most (docs/api.md §7). */
const SERVER_ERROR_TTL_MS = 60_000

/** What one computation uses: loading's and the enrichers' parts, the page reader, the guard (for `proxy` too). */
export type ComputeDeps = LoadDeps & EnrichDeps & {
  readonly guard: AddressGuard
  readonly reader: Pick<PageReader, 'read'>
  readonly metrics: Pick<ServiceMetrics, 'fetchMode' | 'fetchDuration' | 'renderDuration'>
  readonly limits: { readonly maxResponseBytes: number }
}

export interface Computed {
  entry: CacheEntry
  fresh: Fresh
}

export interface ComputeRun {
  signal: AbortSignal
  log: Logger
  status: 'MISS' | 'BYPASS'
  timings: Record<string, number>
  cacheKey: string
  /** Epoch ms by which the computation must be over. */
  deadline: number
}

/**
 * The early verdict of admission by deadline (docs/browser.md#admission): a computation that must render, and that
 * the browser queue would refuse now, is refused before it waits for a tenant's slot, resolves the proxy and the
 * target, or loads the adblock engine, all of which the queue's refusal would throw away. prerender=auto asks
 * nothing: its plain GET may well be all it needs.
 */
export function refuseEarly (deps: Pick<ComputeDeps, 'browser'>, options: ExtractOptions, deadline: number): void {
  if (loadModeOf(options) !== 'prerender') return
  const refusal = deps.browser.admissible(deadline)
  if (refusal !== undefined) throw refusal
}

export async function computeEntry (deps: ComputeDeps, options: ExtractOptions, run: ComputeRun): Promise<Computed> {
  // The proxy's own host passes the guard before anything is loaded (docs/api.md §10); every connection through
  // it checks it again on the socket it opens (net/proxy-tunnel.ts).
  if (options.proxy !== undefined) await resolveProxy(deps.guard, parseUpstreamProxy(options.proxy))
  // This computation's own scope: whether the proxy carried one of ITS requests decides the `-proxy` suffix.
  const scope: EgressScope = { proxy: options.proxy, carried: false }
  return await runWithEgress(scope, async () => await compute(deps, options, run, scope))
}

/** The files kept as Chromium wrote them with `screenshot.optimizeForSpeed`. */
const AS_WRITTEN: ReadonlySet<FileKind> = new Set(['screenshot'])

async function compute (deps: ComputeDeps, options: ExtractOptions, run: ComputeRun, scope: EgressScope): Promise<Computed> {
  // Grouped once: each stage below is handed the groups it reads.
  const groups: OptionGroups = groupOptions(options)
  const { target, outputs, cache, reply } = groups
  const mode = loadModeOf(options, groups)
  let envelope: Envelope
  let loadedBy: LoadedBy
  let fetchTime = 0
  const extraction: Extraction = { data: {}, generated: {}, files: {}, bytes: {} }
  // What the load gave up on (Loaded.gaveUp): the entry is then incomplete, answered but never stored.
  let gaveUp: readonly string[] | undefined

  // Metadata, rules, oEmbed discovery, video, audio and technologies read the page (the parameter table's
  // `readsPage`), so they load it even with `meta=false` (docs/api.md §3.4).
  const readsPage = readsPageOf(options)
  if (!readsPage && mode !== 'prerender') {
    // Nothing needs the page: no fetch at all, but the target is still resolved and checked.
    await deps.guard.assertUrlResolvesAllowed(new URL(target.url))
    envelope = { status: 'success', data: extraction.data, statusCode: null, headers: {}, redirects: [] }
    loadedBy = 'skipped'
  } else {
    const loaded = await loadTarget(deps, groups, mode, { ...run, readsPage })
    fetchTime = loaded.fetchTime
    if (loaded.gaveUp.length > 0) gaveUp = loaded.gaveUp
    run.timings.fetch = fetchTime
    // The slot is released: the screenshot's PNG is written again (smaller) on libuv's threads while the metadata is
    // extracted here; the files are stored once both are done.
    let generated: Promise<Extraction['generated']> | undefined
    if (loaded.rendered !== undefined) {
      run.timings.render = loaded.rendered.captureTime
      generated = recompressFiles(loaded.rendered.files, run.timings, outputs.screenshot !== false && outputs.screenshot.optimizeForSpeed === true ? AS_WRITTEN : undefined)
    }

    const te = performance.now()
    // Read once, off the event loop (src/reader/): the metadata, video/audio, the rules (their fields override
    // metadata fields of the same name), the technologies and the oEmbed links, from one parsed document.
    const read = readsPage ? await deps.reader.read(readTaskOf(outputs, loaded, deps.limits.maxHtmlBytes), run) : undefined
    if (read !== undefined) {
      extraction.data = read.data
      if (read.rulesTime !== undefined) run.timings.rules = read.rulesTime
    }
    run.timings.extract = performance.now() - te
    const fnResult = loaded.rendered?.values.function
    if (fnResult !== undefined) extraction.data.function = fnResult
    if (generated !== undefined) extraction.generated = await generated
    if (loaded.rendered?.actions !== undefined) extraction.actions = loaded.rendered.actions

    await enrich(extraction, {
      deps,
      outputs,
      reply,
      page: {
        url: loaded.url,
        requestedUrl: target.url,
        headers: loaded.headers,
        ...(read === undefined ? {} : { read })
      },
      // An incomplete computation's files go under keys of their own: they never replace the complete entry's.
      cacheKey: gaveUp === undefined ? run.cacheKey : `${run.cacheKey}:incomplete:${randomUUID()}`,
      ttl: ttlFor(cache.ttl, loaded.statusCode),
      signal: run.signal,
      deadline: run.deadline,
      log: run.log,
      timings: run.timings
    })
    envelope = {
      status: 'success',
      data: extraction.data,
      statusCode: loaded.statusCode,
      headers: loaded.headers,
      redirects: loaded.redirects
    }
    // A page was loaded (for the metadata, the rules or the browser's work): the header says how (docs/api.md §6).
    loadedBy = loaded.mode
  }

  const fetchMode = scope.carried ? `${loadedBy}-proxy` as const : loadedBy
  deps.metrics.fetchMode(fetchMode)
  const body = JSON.stringify(envelope)
  // The answer's own size (MAX_RESPONSE_BYTES): the page's values and the rules were bounded as they were read.
  if (Buffer.byteLength(body) > deps.limits.maxResponseBytes) {
    throw new AppError('ETOOLARGE', { data: { data: `The answer is over MAX_RESPONSE_BYTES (${deps.limits.maxResponseBytes} bytes).` } })
  }
  const entry: CacheEntry = {
    meta: {
      createdAt: Date.now(),
      ttl: ttlFor(cache.ttl, envelope.statusCode),
      fetchMode,
      fetchTime: Math.round(fetchTime),
      files: extraction.files,
      status: run.status,
      ...(gaveUp === undefined ? {} : { incomplete: gaveUp })
    },
    body
  }
  return { entry, fresh: { envelope, files: extraction.bytes } }
}

/** What the page reader is asked to read of the loaded page, from the request's outputs. */
function readTaskOf (outputs: OutputOptions, loaded: Loaded, maxHtmlBytes: number): PageReadTask {
  const avKinds = AV_KINDS.filter(kind => outputs[kind])
  const values = loaded.rendered?.values
  return {
    page: {
      url: loaded.url,
      statusCode: loaded.statusCode,
      headers: loaded.headers,
      body: loaded.body,
      rendered: loaded.mode === 'prerender',
      ...(loaded.rendered?.valueMark === undefined ? {} : { valueMark: loaded.rendered.valueMark })
    },
    maxHtmlBytes,
    oembed: outputs.iframe !== false,
    ...(outputs.meta === false ? {} : { meta: { fields: outputs.meta.fields, ping: { image: outputs.ping.image, logo: outputs.ping.logo } } }),
    ...(avKinds.length === 0 ? {} : { av: { kinds: avKinds, ping: outputs.ping } }),
    ...(outputs.data === undefined
      ? {}
      : { rules: { data: outputs.data, ping: outputs.ping, ...(values?.evaluate === undefined ? {} : { evaluated: values.evaluate }) } }),
    ...(outputs.insights === false || !outputs.insights.technologies
      ? {}
      : { technologies: values?.technologies === undefined ? {} : { globals: values.technologies } })
  }
}

function ttlFor (ttl: number, statusCode: number | null): number {
  return statusCode !== null && statusCode >= 500 ? Math.min(ttl, SERVER_ERROR_TTL_MS) : ttl
}
