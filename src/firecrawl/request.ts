// The body of a Firecrawl scrape (POST /v1|v2/scrape, docs/firecrawl.md), read into one normalized ScrapeRequest.
// Fastify checks the body's shape against SCRAPE_BODY_SCHEMA (schemas/firecrawl.ts) first (the same schema the OpenAPI document shows); what a
// JSON schema cannot say (a format that needs a language model, an action's missing field, a proxy mode) is refused
// here, each with 400 and the name of what was refused. Keys clients add (`origin`, `integration`, …) are ignored.
import { AppError } from '../errors.ts'
import { readActionList, type PageAction } from '../schemas/actions.ts'
import { FORMATS, LLM_FORMATS, type ApiVersion, type Format } from '../schemas/firecrawl.ts'

export type { ApiVersion, Format }

export interface ScreenshotSpec {
  fullPage: boolean
  /** 0-100: a JPEG of that quality; absent: PNG. */
  quality?: number
  viewport?: { width: number, height: number }
}

/** One action, in the order given (schemas/actions.ts reads them; docs/firecrawl.md#actions says what each does). */
export type Action = PageAction

export interface ScrapeRequest {
  /** The URL as the client sent it (metadata.sourceURL). */
  url: string
  formats: ReadonlySet<Format>
  /** Set when a screenshot format was asked for. */
  screenshot?: ScreenshotSpec
  onlyMainContent: boolean
  includeTags: readonly string[]
  excludeTags: readonly string[]
  headers: Readonly<Record<string, string>>
  waitFor: number
  timeout?: number
  mobile: boolean
  blockAds: boolean
  actions: readonly Action[]
  languages: readonly string[]
  /** ms; 0: never reuse a cached page. */
  maxAge?: number
  storeInCache: boolean
  /** Our proxy URL (Firecrawl's `basic` and `auto` mean none). */
  proxy?: string
}

const FORMAT_NAMES = [...FORMATS, ...LLM_FORMATS, 'screenshot', 'attributes', 'branding', 'product', 'menu', 'audio', 'video']

function refuse (field: string, message: string): never {
  throw new AppError('EINVALQUERY', { message, data: { [field]: message } })
}

function screenshotOf (value: Record<string, unknown>): ScreenshotSpec {
  const viewport = value.viewport as { width?: number, height?: number } | undefined
  return {
    fullPage: value.fullPage === true,
    ...(typeof value.quality === 'number' ? { quality: value.quality } : {}),
    ...(viewport?.width !== undefined && viewport.height !== undefined ? { viewport: { width: viewport.width, height: viewport.height } } : {})
  }
}

function readFormats (raw: unknown[] | undefined, version: ApiVersion): { formats: Set<Format>, screenshot?: ScreenshotSpec } {
  const formats = new Set<Format>()
  let screenshot: ScreenshotSpec | undefined
  for (const item of raw ?? ['markdown']) {
    const name = typeof item === 'string' ? item : String((item as { type: unknown }).type)
    if ((LLM_FORMATS as readonly string[]).includes(name)) {
      throw new AppError('EFORMAT', {
        message: `The \`${name}\` format needs a language model, which pagecast does not run. Ask for markdown and give it to your own model.`,
        data: { formats: name }
      })
    }
    if (!(FORMATS as readonly string[]).includes(name)) {
      refuse('formats', FORMAT_NAMES.includes(name)
        ? `The \`${name}\` format is not supported; supported: ${FORMATS.join(', ')}.`
        : `Unknown format \`${name}\`; supported: ${FORMATS.join(', ')}.`)
    }
    if (typeof item !== 'string' && version === 'v1') refuse('formats', 'v1 takes formats as strings (`screenshot`, `screenshot@fullPage`).')
    if (name === 'screenshot' || name === 'screenshot@fullPage') {
      screenshot = typeof item === 'string' ? { fullPage: name === 'screenshot@fullPage' } : screenshotOf(item as Record<string, unknown>)
      formats.add('screenshot')
    } else {
      formats.add(name as Format)
    }
  }
  return screenshot === undefined ? { formats } : { formats, screenshot }
}

/** Firecrawl's proxy modes that mean "no particular proxy"; a URL is our `proxy` parameter (plan permitting). */
const DIRECT_PROXY_MODES = new Set(['basic', 'auto'])

function readProxy (proxy: string | undefined): string | undefined {
  if (proxy === undefined || DIRECT_PROXY_MODES.has(proxy)) return undefined
  if (/^(?:https?|socks5):\/\//i.test(proxy)) return proxy
  return refuse('proxy', `The proxy mode \`${proxy}\` is not offered; give \`basic\` (direct) or a proxy URL (http, https or socks5; pro plan).`)
}

/** Reads a body that passed SCRAPE_BODY_SCHEMA (or a job's page: its url and scrapeOptions). Throws AppError only. */
export function readScrapeRequest (body: Record<string, unknown>, version: ApiVersion): ScrapeRequest {
  const { formats, screenshot } = readFormats(body.formats as unknown[] | undefined, version)
  const location = body.location as { languages?: string[] } | undefined
  const timeout = body.timeout as number | undefined
  const maxAge = body.maxAge as number | undefined
  const proxy = readProxy(body.proxy as string | undefined)
  return {
    url: String(body.url),
    formats,
    ...(screenshot === undefined ? {} : { screenshot }),
    onlyMainContent: body.onlyMainContent !== false,
    includeTags: (body.includeTags as string[] | undefined) ?? [],
    excludeTags: (body.excludeTags as string[] | undefined) ?? [],
    headers: (body.headers as Record<string, string> | undefined) ?? {},
    waitFor: (body.waitFor as number | undefined) ?? 0,
    ...(timeout === undefined ? {} : { timeout }),
    mobile: body.mobile === true,
    blockAds: body.blockAds !== false,
    actions: readActionList(body.actions ?? []),
    languages: location?.languages ?? [],
    ...(maxAge === undefined ? {} : { maxAge }),
    storeInCache: body.storeInCache !== false,
    ...(proxy === undefined ? {} : { proxy })
  }
}
