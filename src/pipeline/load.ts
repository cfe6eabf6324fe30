// Loading the target for one computation (docs/api.md §3.6): a plain GET, the browser, or (`prerender=auto`) a
// GET that hands over to the browser when it fails or the HTML looks client-rendered.
import type { Logger } from 'pino'
import type { ServiceMetrics } from '../metrics.ts'
import type { OptionGroups } from '../schemas/option-groups.ts'
import type { FetchPageResult } from '../net/types.ts'
import { endToEndHeaders } from '../net/headers.ts'
import { AppError } from '../errors.ts'
import { createDeadline, throwIfAborted, type Deadline } from '../util/abort.ts'
import { fetchTarget, isBodyTooLarge, type FetchDeps } from './fetch.ts'
import { isHtml } from '../media/content-kind.ts'
import { looksClientRendered, type LoadMode } from './prerender.ts'
import { renderPage, type RenderDeps, type Rendered } from './render.ts'

/** What loading uses: the plain GET's and the browser's parts, and the two durations it measures. */
export type LoadDeps = FetchDeps & RenderDeps & { readonly metrics: Pick<ServiceMetrics, 'fetchDuration' | 'renderDuration'> }

/** What loading needs of the computation: its signal and deadline, and where to log. */
export interface LoadRun {
  signal: AbortSignal
  log: Logger
  /** Epoch ms by which the computation must be over. */
  deadline: number
  /** Phase durations in ms (server-timing): the render adds its parts. */
  timings?: Record<string, number>
  /** False when nothing reads the page's HTML (a capture with `meta=false` and nothing else): the render skips it. */
  readsPage?: boolean
}

/** What was loaded, whichever way. */
export interface Loaded {
  mode: 'fetch' | 'prerender'
  url: string
  statusCode: number
  /** The target's end-to-end headers (net/headers.ts): the hop-by-hop ones describe a connection, not the page. */
  headers: Record<string, string>
  redirects: Array<{ statusCode: number, url: string }>
  body: Buffer
  fetchTime: number
  rendered?: Rendered
  /**
   * What the load gave up on (the browser's waits that ran out, a browser that was to take over and failed): the
   * page was taken as loaded, so the answer is not cached (docs/api.md §7). Empty when nothing was.
   */
  gaveUp: readonly string[]
}

function fromFetch (page: FetchPageResult, fetchTime: number): Loaded {
  return { mode: 'fetch', url: page.url, statusCode: page.statusCode, headers: endToEndHeaders(page.headers), redirects: page.redirects, body: page.body, fetchTime, gaveUp: [] }
}

function fromRender (rendered: Rendered): Loaded {
  return {
    mode: 'prerender',
    url: rendered.url,
    statusCode: rendered.statusCode,
    headers: endToEndHeaders(rendered.headers),
    redirects: rendered.redirects,
    body: Buffer.from(rendered.html, 'utf8'),
    fetchTime: rendered.loadTime,
    rendered,
    gaveUp: rendered.gaveUp
  }
}

/** The request's options, by group, as loading reads them. */
export type LoadGroups = Pick<OptionGroups, 'target' | 'emulation' | 'steps' | 'outputs'>

async function render (deps: LoadDeps, groups: LoadGroups, run: LoadRun): Promise<Loaded> {
  const t = performance.now()
  try {
    const rendered = await renderPage(deps, groups, run.signal, run.deadline, run.timings, run.readsPage !== false)
    deps.metrics.renderDuration((performance.now() - t) / 1000, 'ok')
    return fromRender(rendered)
  } catch (err) {
    deps.metrics.renderDuration((performance.now() - t) / 1000, 'error')
    throw err
  }
}

async function fetchWithin (deps: LoadDeps, groups: LoadGroups, signal: AbortSignal): Promise<Loaded> {
  const t = performance.now()
  let page: FetchPageResult
  try {
    page = await fetchTarget(deps, groups.target, signal)
  } catch (err) {
    deps.metrics.fetchDuration((performance.now() - t) / 1000, 'error')
    throw err
  }
  const elapsed = performance.now() - t
  deps.metrics.fetchDuration(elapsed / 1000, 'ok')
  return fromFetch(page, elapsed)
}

/** The GET of prerender=auto may use a third of the budget (docs/api.md §3.6). */
function thirdOfBudget (run: LoadRun): Deadline {
  return createDeadline(
    Math.max(1, (run.deadline - Date.now()) / 3),
    () => new AppError('ETIMEOUT', { data: { url: 'The plain fetch used its share of the budget.' } }),
    run.signal
  )
}

export async function loadTarget (deps: LoadDeps, groups: LoadGroups, mode: LoadMode, run: LoadRun): Promise<Loaded> {
  if (mode === 'fetch') return await fetchWithin(deps, groups, run.signal)
  if (mode === 'prerender') return await render(deps, groups, run)

  // auto: a plain GET first; the browser takes over when it fails or the HTML looks client-rendered.
  const share = thirdOfBudget(run)
  let fetched: Loaded | undefined
  let fetchError: unknown
  try {
    fetched = await fetchWithin(deps, groups, share.signal)
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
    const rendered = await render(deps, groups, run)
    // The browser's result is kept unless it is worse: a failure, or >= 400 where the GET got < 400.
    if (fetched !== undefined && rendered.statusCode >= 400 && fetched.statusCode < 400) return fetched
    return rendered
  } catch (err) {
    if (fetched !== undefined) {
      run.log.info({ err }, 'browser fallback failed; keeping the plain fetch')
      // With more time (or luck) the browser would have answered instead.
      return { ...fetched, gaveUp: ['prerender'] }
    }
    throw err
  }
}
