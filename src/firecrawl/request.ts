// The body of a Firecrawl scrape (POST /v1|v2/scrape, docs/firecrawl.md), read into one normalized ScrapeRequest.
// Fastify checks the body's shape against SCRAPE_BODY_SCHEMA (schemas/firecrawl.ts) first (the same schema the OpenAPI document shows); what a
// JSON schema cannot say (a format that needs a language model, an action we cannot run, a proxy mode) is refused
// here, each with 400 and the name of what was refused. Keys clients add (`origin`, `integration`, …) are ignored.
import { AppError } from '../errors.ts'
import { PAPER_FORMATS, type PaperFormat } from '../schemas/options.ts'
import { FORMATS, LLM_FORMATS, type ApiVersion, type Format } from '../schemas/firecrawl.ts'

export type { ApiVersion, Format }

export interface ScreenshotSpec {
  fullPage: boolean
  /** 0-100: a JPEG of that quality; absent: PNG. */
  quality?: number
  viewport?: { width: number, height: number }
}

/** One action, in the order given (docs/firecrawl.md says how each maps and what runs when). */
export type Action =
  | { type: 'wait', milliseconds?: number, selector?: string }
  | { type: 'click', selector: string }
  | { type: 'scroll', direction: 'up' | 'down', selector?: string }
  | { type: 'screenshot', fullPage: boolean, quality?: number }
  | { type: 'scrape' }
  | { type: 'executeJavascript', script: string }
  | { type: 'pdf', format?: PaperFormat, landscape?: boolean, scale?: number }

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

function str (action: Record<string, unknown>, name: string, index: number): string {
  const value = action[name]
  if (typeof value !== 'string' || value.trim() === '') refuse('actions', `actions[${index}] (${String(action.type)}) needs \`${name}\` as a non-empty string.`)
  return value
}

function readAction (action: Record<string, unknown>, index: number): Action {
  switch (action.type) {
    case 'wait': {
      const ms = action.milliseconds
      const selector = action.selector
      if (ms !== undefined && (typeof ms !== 'number' || !Number.isInteger(ms) || ms < 0)) refuse('actions', `actions[${index}] (wait): \`milliseconds\` must be a whole number >= 0.`)
      if (ms === undefined && selector === undefined) refuse('actions', `actions[${index}] (wait) needs \`milliseconds\` or \`selector\`.`)
      return { type: 'wait', ...(ms === undefined ? {} : { milliseconds: ms }), ...(selector === undefined ? {} : { selector: str(action, 'selector', index) }) }
    }
    case 'click': return { type: 'click', selector: str(action, 'selector', index) }
    case 'scroll': {
      const direction = action.direction ?? 'down'
      if (direction !== 'up' && direction !== 'down') refuse('actions', `actions[${index}] (scroll): \`direction\` is up or down.`)
      return { type: 'scroll', direction, ...(action.selector === undefined ? {} : { selector: str(action, 'selector', index) }) }
    }
    case 'screenshot': {
      const quality = action.quality
      if (quality !== undefined && (typeof quality !== 'number' || quality < 0 || quality > 100)) refuse('actions', `actions[${index}] (screenshot): \`quality\` is 0 to 100.`)
      return { type: 'screenshot', fullPage: action.fullPage === true, ...(quality === undefined ? {} : { quality }) }
    }
    case 'scrape': return { type: 'scrape' }
    case 'executeJavascript': return { type: 'executeJavascript', script: str(action, 'script', index) }
    case 'pdf': {
      const format = action.format
      if (format !== undefined && !(PAPER_FORMATS as readonly unknown[]).includes(format)) refuse('actions', `actions[${index}] (pdf): \`format\` is one of ${PAPER_FORMATS.join(', ')}.`)
      const scale = action.scale
      if (scale !== undefined && (typeof scale !== 'number' || scale < 0.1 || scale > 2)) refuse('actions', `actions[${index}] (pdf): \`scale\` is 0.1 to 2.`)
      return {
        type: 'pdf',
        ...(format === undefined ? {} : { format: format as PaperFormat }),
        ...(typeof action.landscape === 'boolean' ? { landscape: action.landscape } : {}),
        ...(scale === undefined ? {} : { scale })
      }
    }
    case 'write':
    case 'press':
      return refuse('actions', `actions[${index}]: \`${action.type}\` (typing into the page) is not supported; click, wait, scroll, screenshot, scrape, executeJavascript and pdf are.`)
    default:
      return refuse('actions', `actions[${index}]: unknown action type \`${String(action.type)}\`.`)
  }
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
    actions: ((body.actions as Array<Record<string, unknown>> | undefined) ?? []).map(readAction),
    languages: location?.languages ?? [],
    ...(maxAge === undefined ? {} : { maxAge }),
    storeInCache: body.storeInCache !== false,
    ...(proxy === undefined ? {} : { proxy })
  }
}
