// Loading the target without a browser: one guarded GET (API.md §3.6 prerender=false/auto).
import type { AppContext } from '../context.ts'
import type { ExtractOptions } from '../schemas/options.ts'
import type { FetchPageResult } from '../net/types.ts'

/** HTML is parsed up to 10 MiB (API.md §9). */
export const MAX_HTML_BYTES = 10 * 1024 * 1024

export async function loadPage (ctx: AppContext, options: ExtractOptions, signal: AbortSignal): Promise<FetchPageResult> {
  return await ctx.http.fetchPage(options.url, {
    signal,
    maxBytes: MAX_HTML_BYTES,
    headers: { ...options.headers }
  })
}
