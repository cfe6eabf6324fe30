// One computation of a result: load the page (plain GET, browser, or GET handing over to the browser),
// extract, store the generated files, and build the cache entry.
import type { Logger } from 'pino'
import type { AppContext } from '../context.ts'
import type { ExtractOptions } from '../schemas/options.ts'
import type { FetchPageResult } from '../net/types.ts'
import type { CacheEntry, FetchMode } from './cache.ts'
import { AppError } from '../errors.ts'
import { createDeadline, throwIfAborted, type Deadline } from '../util/abort.ts'
import { fetchTarget, isBodyTooLarge } from './fetch.ts'
import { isHtml, loadModeOf, looksClientRendered } from './prerender.ts'
import { renderPage, type Rendered } from './render.ts'
import { storeFiles } from './files.ts'
import type { StoredFile } from '../storage/index.ts'

/** Results whose target answered 5xx are cached for one minute at most (API.md §7). */
const SERVER_ERROR_TTL_MS = 60_000

export interface Envelope {
  status: 'success'
  data: Record<string, unknown>
  statusCode: number | null
  headers: Record<string, string>
  redirects: Array<{ statusCode: number, url: string }>
}

/**
 * What a computation still holds in memory once its entry is serialized: the envelope and the bytes of the
 * files it stored (by their path in `data`). The request that computed it, and those that joined it in this
 * process, answer from these: no parse of the envelope just serialized, no download of a file just uploaded.
 */
export interface Fresh {
  envelope: Envelope
  files: Record<string, StoredFile>
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

/** What was loaded, whichever way. */
interface Loaded {
  mode: 'fetch' | 'prerender'
  url: string
  statusCode: number
  headers: Record<string, string>
  redirects: Array<{ statusCode: number, url: string }>
  body: Buffer
  fetchTime: number
  rendered?: Rendered
}

export async function computeEntry (ctx: AppContext, options: ExtractOptions, run: ComputeRun): Promise<Computed> {
  const mode = loadModeOf(options)
  let envelope: Envelope
  let fetchMode: FetchMode
  let fetchTime = 0
  let files: CacheEntry['meta']['files'] = {}
  let fileBytes: Fresh['files'] = {}

  if (options.meta === false && mode !== 'prerender') {
    // Nothing needs the page: no fetch at all, but the target is still resolved and checked.
    await ctx.guard.assertUrlResolvesAllowed(new URL(options.url))
    envelope = { status: 'success', data: {}, statusCode: null, headers: {}, redirects: [] }
    fetchMode = 'skipped'
  } else {
    const loaded = await load(ctx, options, mode, run)
    fetchTime = loaded.fetchTime
    run.timings.fetch = fetchTime
    if (loaded.rendered !== undefined) run.timings.render = loaded.rendered.captureTime

    const te = performance.now()
    const meta = options.meta === false
      ? {}
      : await ctx.metadata.extract({
        url: loaded.url,
        statusCode: loaded.statusCode,
        headers: loaded.headers,
        body: loaded.body,
        fields: options.meta.fields,
        ping: { image: options.ping.image, logo: options.ping.logo },
        signal: run.signal
      })
    run.timings.extract = performance.now() - te

    let fileData: Record<string, unknown> = {}
    if (loaded.rendered?.screenshot !== undefined || loaded.rendered?.pdf !== undefined) {
      const ts = performance.now()
      const stored = await storeFiles(ctx, options, run.cacheKey, ttlFor(options, loaded.statusCode), {
        screenshot: loaded.rendered.screenshot,
        pdf: loaded.rendered.pdf
      })
      run.timings.store = performance.now() - ts
      fileData = stored.data
      files = stored.keys
      fileBytes = stored.bytes
    }
    envelope = {
      status: 'success',
      data: { ...meta, ...fileData },
      statusCode: loaded.statusCode,
      headers: loaded.headers,
      redirects: loaded.redirects
    }
    // A skipped metadata step still reports how the page was loaded.
    fetchMode = options.meta === false && loaded.mode === 'fetch' ? 'skipped' : loaded.mode
  }

  ctx.metrics.fetchMode(fetchMode)
  const entry: CacheEntry = {
    meta: {
      createdAt: Date.now(),
      ttl: ttlFor(options, envelope.statusCode),
      fetchMode,
      fetchTime: Math.round(fetchTime),
      files,
      status: run.status
    },
    body: JSON.stringify(envelope)
  }
  return { entry, fresh: { envelope, files: fileBytes } }
}

function ttlFor (options: ExtractOptions, statusCode: number | null): number {
  return statusCode !== null && statusCode >= 500 ? Math.min(options.ttl, SERVER_ERROR_TTL_MS) : options.ttl
}

function fromFetch (page: FetchPageResult, fetchTime: number): Loaded {
  return { mode: 'fetch', url: page.url, statusCode: page.statusCode, headers: page.headers, redirects: page.redirects, body: page.body, fetchTime }
}

function fromRender (rendered: Rendered): Loaded {
  return {
    mode: 'prerender',
    url: rendered.url,
    statusCode: rendered.statusCode,
    headers: rendered.headers,
    redirects: rendered.redirects,
    body: Buffer.from(rendered.html, 'utf8'),
    fetchTime: rendered.loadTime,
    rendered
  }
}

async function render (ctx: AppContext, options: ExtractOptions, run: ComputeRun): Promise<Loaded> {
  const t = performance.now()
  try {
    const rendered = await renderPage(ctx, options, run.signal, run.deadline)
    ctx.metrics.renderDuration((performance.now() - t) / 1000, 'ok')
    return fromRender(rendered)
  } catch (err) {
    ctx.metrics.renderDuration((performance.now() - t) / 1000, 'error')
    throw err
  }
}

async function fetchWithin (ctx: AppContext, options: ExtractOptions, signal: AbortSignal): Promise<Loaded> {
  const t = performance.now()
  let page: FetchPageResult
  try {
    page = await fetchTarget(ctx, options, signal)
  } catch (err) {
    ctx.metrics.fetchDuration((performance.now() - t) / 1000, 'error')
    throw err
  }
  const elapsed = performance.now() - t
  ctx.metrics.fetchDuration(elapsed / 1000, 'ok')
  return fromFetch(page, elapsed)
}

/** The GET of prerender=auto may use a third of the budget (API.md §3.6). */
function thirdOfBudget (run: ComputeRun): Deadline {
  return createDeadline(
    Math.max(1, (run.deadline - Date.now()) / 3),
    () => new AppError('ETIMEOUT', { data: { url: 'The plain fetch used its share of the budget.' } }),
    run.signal
  )
}

async function load (ctx: AppContext, options: ExtractOptions, mode: 'fetch' | 'prerender' | 'auto', run: ComputeRun): Promise<Loaded> {
  if (mode === 'fetch') return await fetchWithin(ctx, options, run.signal)
  if (mode === 'prerender') return await render(ctx, options, run)

  // auto: a plain GET first; the browser takes over when it fails or the HTML looks client-rendered.
  const share = thirdOfBudget(run)
  let fetched: Loaded | undefined
  let fetchError: unknown
  try {
    fetched = await fetchWithin(ctx, options, share.signal)
  } catch (err) {
    fetchError = err
  } finally {
    share.dispose()
  }
  throwIfAborted(run.signal)
  // A blocked target or redirect, or an HTML body over MAX_HTML_BYTES, never gets a second chance in the browser.
  if (fetchError instanceof AppError && (fetchError.code === 'EFORBIDDENURL' || fetchError.code === 'EMAXREDIRECTS')) throw fetchError
  if (isBodyTooLarge(fetchError)) throw fetchError

  if (fetched !== undefined) {
    const html = isHtml(fetched.headers['content-type'], fetched.body)
    // Non-HTML content (images, PDF, JSON, text, media) never falls back.
    if (!html) return fetched
    if (fetched.statusCode < 400 && !looksClientRendered(fetched.body.toString('utf8'))) return fetched
  }

  try {
    const rendered = await render(ctx, options, run)
    // The browser's result is kept unless it is worse: a failure, or >= 400 where the GET got < 400.
    if (fetched !== undefined && rendered.statusCode >= 400 && fetched.statusCode < 400) return fetched
    return rendered
  } catch (err) {
    if (fetched !== undefined) {
      run.log.info({ err }, 'browser fallback failed; keeping the plain fetch')
      return fetched
    }
    throw err
  }
}
