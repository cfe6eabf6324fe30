// One computation of a result, the use case behind every MISS: load the page (load.ts), parse it once, extract the
// metadata, run the `data` rules on the same document (their fields override metadata fields of the same name), add
// the outcome of `function`, run the enrichers on the result and the same document (storing the producers' files
// first, then oEmbed), and build the cache entry.
import { randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import type { AppContext } from '../context.ts'
import type { ExtractOptions } from '../schemas/options.ts'
import type { CacheEntry, Envelope, LoadedBy, Fresh } from '../cache/entries.ts'
import { groupOptions } from '../schemas/option-groups.ts'
import { loadModeOf, readsPage as readsPageOf } from './prerender.ts'
import { loadTarget } from './load.ts'
import { enrich, type Extraction } from './enrichers/index.ts'
import { parseTarget, parsedHtmlOf } from '../extract/index.ts'
import { classifyTarget } from '../metadata/extractor.ts'
import { runWithEgress, type EgressScope } from '../net/egress-scope.ts'
import { parseUpstreamProxy, resolveProxy } from '../net/proxy-tunnel.ts'
import { recompressFiles } from '../media/png-recompress.ts'

/** The outputs that are a media file the page names (docs/api.md §3.4), in their order in `data`. */
const AV_KINDS = ['video', 'audio'] as const
import type { StoredFile } from '../storage/index.ts'

/** Results whose target answered 5xx are cached for one minute at most (docs/api.md §7). */
const SERVER_ERROR_TTL_MS = 60_000

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

export async function computeEntry (ctx: AppContext, options: ExtractOptions, run: ComputeRun): Promise<Computed> {
  // The proxy's own host passes the guard before anything is loaded (docs/api.md §10); every connection through
  // it checks it again on the socket it opens (net/proxy-tunnel.ts).
  if (options.proxy !== undefined) await resolveProxy(ctx.guard, parseUpstreamProxy(options.proxy))
  // This computation's own scope: whether the proxy carried one of ITS requests decides the `-proxy` suffix.
  const scope: EgressScope = { proxy: options.proxy, carried: false }
  return await runWithEgress(scope, async () => await compute(ctx, options, run, scope))
}

async function compute (ctx: AppContext, options: ExtractOptions, run: ComputeRun, scope: EgressScope): Promise<Computed> {
  const { target, outputs, cache, reply } = groupOptions(options)
  const mode = loadModeOf(options)
  let envelope: Envelope
  let loadedBy: LoadedBy
  let fetchTime = 0
  const extraction: Extraction = { data: {}, generated: {}, files: {}, bytes: {} }
  // What the load gave up on (Loaded.gaveUp): the entry is then incomplete, answered but never stored.
  let gaveUp: readonly string[] | undefined

  const rules = outputs.data
  const avKinds = AV_KINDS.filter(kind => outputs[kind])
  // Metadata, rules, oEmbed discovery, video, audio and technologies read the page (the parameter table's
  // `readsPage`), so they load it even with `meta=false` (docs/api.md §3.4).
  const readsPage = readsPageOf(options)
  if (!readsPage && mode !== 'prerender') {
    // Nothing needs the page: no fetch at all, but the target is still resolved and checked.
    await ctx.guard.assertUrlResolvesAllowed(new URL(target.url))
    envelope = { status: 'success', data: extraction.data, statusCode: null, headers: {}, redirects: [] }
    loadedBy = 'skipped'
  } else {
    const loaded = await loadTarget(ctx, options, mode, { ...run, readsPage })
    fetchTime = loaded.fetchTime
    if (loaded.gaveUp.length > 0) gaveUp = loaded.gaveUp
    run.timings.fetch = fetchTime
    // The slot is released: the screenshot's PNG is written again (smaller) on libuv's threads while the metadata is
    // extracted here; the files are stored once both are done.
    let generated: Promise<Extraction['generated']> | undefined
    if (loaded.rendered !== undefined) {
      run.timings.render = loaded.rendered.captureTime
      generated = recompressFiles(loaded.rendered.files, run.timings)
    }

    const te = performance.now()
    // Parsed once, for the metadata and the rules together (docs/architecture.md).
    const document = readsPage
      ? parseTarget({ url: loaded.url, headers: loaded.headers, body: loaded.body, rendered: loaded.mode === 'prerender' }, ctx.config.maxHtmlBytes)
      : undefined
    if (outputs.meta !== false) {
      const parsed = document === undefined ? undefined : parsedHtmlOf(document)
      extraction.data = await ctx.metadata.extract({
        url: loaded.url,
        statusCode: loaded.statusCode,
        headers: loaded.headers,
        body: loaded.body,
        fields: outputs.meta.fields,
        ping: { image: outputs.ping.image, logo: outputs.ping.logo },
        signal: run.signal,
        ...(parsed === undefined ? {} : { document: parsed })
      })
    }
    if (avKinds.length > 0 && document !== undefined) {
      const target = classifyTarget(loaded.headers, loaded.body)
      Object.assign(extraction.data, await ctx.av.find({
        kinds: avKinds,
        url: loaded.url,
        ...(document.kind === 'html' ? { $: document.$ } : {}),
        ...(target === 'video' || target === 'audio' ? { target } : {}),
        ping: outputs.ping,
        signal: run.signal
      }))
    }
    if (rules !== undefined && document !== undefined) {
      const tr = performance.now()
      Object.assign(extraction.data, await ctx.rules.run({
        data: rules, document, evaluated: loaded.rendered?.values.evaluate, ping: outputs.ping, signal: run.signal
      }))
      run.timings.rules = performance.now() - tr
    }
    run.timings.extract = performance.now() - te
    const fnResult = loaded.rendered?.values.function
    if (fnResult !== undefined) extraction.data.function = fnResult
    if (generated !== undefined) extraction.generated = await generated

    await enrich(extraction, {
      ctx,
      outputs,
      reply,
      page: {
        url: loaded.url,
        requestedUrl: target.url,
        headers: loaded.headers,
        ...(document === undefined ? {} : { document }),
        ...(loaded.rendered?.values.technologies === undefined ? {} : { globals: loaded.rendered.values.technologies })
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
  ctx.metrics.fetchMode(fetchMode)
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
    body: JSON.stringify(envelope)
  }
  return { entry, fresh: { envelope, files: extraction.bytes } }
}

function ttlFor (ttl: number, statusCode: number | null): number {
  return statusCode !== null && statusCode >= 500 ? Math.min(ttl, SERVER_ERROR_TTL_MS) : ttl
}
