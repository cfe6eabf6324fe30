// Loading the target without a browser: one guarded GET (docs/api.md §3.6 prerender=false/auto).
import type { HttpClient } from '../net/types.ts'
import type { TargetOptions } from '../schemas/option-groups.ts'
import type { FetchPageResult } from '../net/types.ts'
import { AppError } from '../errors.ts'
import { isHtml } from '../media/content-kind.ts'

/** What the plain GET uses: the guarded client, and MAX_HTML_BYTES. */
export interface FetchDeps {
  readonly http: Pick<HttpClient, 'fetchPage'>
  readonly limits: { readonly maxHtmlBytes: number }
}

/** The errors of bodies over the limit, so prerender=auto does not hand them to the browser. */
const tooLarge = new WeakSet<AppError>()

/** True for the error of a body larger than MAX_HTML_BYTES. */
export function isBodyTooLarge (err: unknown): boolean {
  return err instanceof AppError && tooLarge.has(err)
}

/**
 * Reads at most `limits.maxHtmlBytes` (MAX_HTML_BYTES, 10 MiB by default), and the read stopping there closes the
 * connection to the target. An HTML body with more is refused (400 EINVALURL, `data.url` saying so); any other
 * content keeps its head, which is all its metadata needs (type, size and dimensions come from the headers and the
 * first bytes).
 */
export async function fetchTarget ({ http, limits }: FetchDeps, target: Pick<TargetOptions, 'url' | 'headers'>, signal: AbortSignal): Promise<FetchPageResult> {
  const maxBytes = limits.maxHtmlBytes
  const page = await http.fetchPage(target.url, {
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
