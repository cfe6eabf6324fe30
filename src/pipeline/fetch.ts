// Loading the target without a browser: one guarded GET (docs/api.md §3.6 prerender=false/auto).
import type { AppContext } from '../context.ts'
import type { TargetOptions } from '../schemas/option-groups.ts'
import type { FetchPageResult } from '../net/types.ts'
import { AppError } from '../errors.ts'
import { isHtml } from '../media/content-kind.ts'

/** The errors of bodies over the limit, so prerender=auto does not hand them to the browser. */
const tooLarge = new WeakSet<AppError>()

/** True for the error of a body larger than MAX_HTML_BYTES. */
export function isBodyTooLarge (err: unknown): boolean {
  return err instanceof AppError && tooLarge.has(err)
}

/**
 * Reads at most `config.maxHtmlBytes` (MAX_HTML_BYTES, 10 MiB by default), and the read stopping there closes the
 * connection to the target. An HTML body with more is refused (400 EINVALURL, `data.url` saying so); any other
 * content keeps its head, which is all its metadata needs (type, size and dimensions come from the headers and the
 * first bytes).
 */
export async function fetchTarget (ctx: AppContext, target: Pick<TargetOptions, 'url' | 'headers'>, signal: AbortSignal): Promise<FetchPageResult> {
  const maxBytes = ctx.config.maxHtmlBytes
  const page = await ctx.http.fetchPage(target.url, {
    signal,
    maxBytes,
    headers: { ...target.headers }
  })
  if (page.truncated && isHtml(page.headers['content-type'], page.body)) {
    const error = new AppError('EINVALURL', {
      data: { url: `The URL \`${page.url}\` sent a body larger than ${maxBytes} bytes.` },
      cause: new Error(`body over ${maxBytes} bytes`)
    })
    tooLarge.add(error)
    throw error
  }
  return page
}
