// The MCP tools (docs/api.md §15): Microlink's tool names and input properties, each tool one `GET /` request of
// this service. A tool declares its own properties (schemas from the parameter table, mcp/schema.ts), the API
// parameters its arguments become, and where its value V sits in the answer's `data`. Every tool also takes `url`,
// `apiKey` and the shared properties below.
import type { OptionName } from '../schemas/derived.ts'
import {
  lighthouseSchema, oembedSizeSchema, own, parameterAs, parameterSchema, ruleKeySchema, type Schema
} from './schema.ts'

/** A call's arguments once coerced and validated. */
export type Args = Readonly<Record<string, unknown>>

export interface Tool {
  readonly name: string
  readonly description: string
  /** The tool's own properties, besides `url`, `apiKey` and the shared ones. */
  readonly properties: Readonly<Record<string, Schema>>
  readonly required?: readonly string[]
  /** The API parameters of the call (nested; `apiKey` and `headers` are already taken out). */
  readonly params: (args: Args) => Record<string, unknown>
  /** The dot path of V in `data`; undefined: the whole `data`. */
  readonly value?: string
  /** V when the path holds nothing (`[]` for the collections); else `null`. */
  readonly empty?: unknown
}

/** Shared by every tool: these mean what the query parameters of docs/api.md §3 mean. */
export const SHARED_PROPERTIES = [
  'adblock', 'animations', 'cacheKey', 'click', 'colorScheme', 'device', 'filename', 'filter', 'force', 'headers',
  'javascript', 'mediaType', 'modules', 'prerender', 'proxy', 'retry', 'scripts', 'scroll', 'staleTtl', 'styles',
  'timeout', 'ttl', 'viewport', 'waitForSelector', 'waitForTimeout', 'waitUntil'
] as const

/** The schema of every tool's common properties: `url`, `apiKey`, then the shared ones from the table. */
export function commonProperties (): Record<string, Schema> {
  const out: Record<string, Schema> = {
    url: parameterSchema('url'),
    apiKey: own({ type: 'string' }, 'An API key for the pro listener, for this call only, instead of the `x-api-key` or `Authorization: Bearer` header. The free listener refuses it (EPRO).')
  }
  for (const name of SHARED_PROPERTIES) {
    out[name] = name === 'headers'
      ? own({ type: 'object' }, 'Headers of this call: each `x-api-header-<name>` entry is sent to the target as `<name>` (pro only, EHEADERS on the free listener); other entries are ignored.')
      : parameterSchema(name)
  }
  // `additionalProperties` keeps header values strings.
  out.headers = { ...out.headers, additionalProperties: { type: 'string' } }
  return out
}

function pick (args: Args, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const key of keys) if (args[key] !== undefined) out[key] = args[key]
  return out
}

function without (args: Args, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(args)) if (!keys.includes(key)) out[key] = value
  return out
}

function filled (value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length > 0
}

const RULE_KEYS = ['selector', 'selectorAll', 'type'] as const
const COLLECTION_KEYS = ['selector', 'selectorAll', 'attr', 'type'] as const

function ruleProperties (keys: ReadonlyArray<'selector' | 'selectorAll' | 'attr' | 'type'>): Record<string, Schema> {
  return Object.fromEntries(keys.map((key) => [key, ruleKeySchema(key)]))
}

function params (...names: OptionName[]): Record<string, Schema> {
  return Object.fromEntries(names.map((name) => [name, parameterSchema(name)]))
}

/** `/markdown`, `/text` and `/html` as tools: one `data` rule reading the page with that `attr`. */
function content (attr: 'markdown' | 'html' | 'text', description: string): Tool {
  return {
    name: `microlink_${attr}`,
    description,
    properties: ruleProperties(RULE_KEYS),
    params: (args) => ({ meta: false, ...without(args, RULE_KEYS), data: { [attr]: { attr, ...pick(args, RULE_KEYS) } } }),
    value: attr
  }
}

/** The official clients' collection rules (docs/api.md §3.3), as mql's users send them. */
const COLLECTIONS = {
  links: { selectorAll: 'a', attr: 'href', type: 'url' },
  images: { selectorAll: 'img', attr: 'src', type: 'url' },
  videos: { selectorAll: 'video', attr: 'src', type: 'url' },
  audios: { selectorAll: 'audio', attr: 'src', type: 'url' },
  emails: { attr: 'html', type: 'email' }
} as const

function collection (name: keyof typeof COLLECTIONS, description: string): Tool {
  return {
    name: `microlink_${name}`,
    description,
    properties: ruleProperties(COLLECTION_KEYS),
    params: (args) => ({ meta: false, ...without(args, COLLECTION_KEYS), data: { [name]: { ...COLLECTIONS[name], ...pick(args, COLLECTION_KEYS) } } }),
    value: name,
    empty: []
  }
}

const LIGHTHOUSE_KEYS = ['onlyCategories', 'onlyAudits', 'skipAudits', 'output'] as const

export const TOOLS: readonly Tool[] = [
  {
    name: 'microlink_metadata',
    description: 'Reads a web page and returns its normalized metadata: title, description, author, publisher, date, language, lead image, logo and canonical URL, plus any custom fields extracted with `data` rules. Answered from pagecast\'s cache when the same request was made before.',
    properties: params('data', 'meta', 'palette'),
    params: (args) => ({ ...args })
  },
  {
    name: 'microlink_logo',
    description: 'Returns the logo of a web site as a media object (url, type, size, width, height), preferring square icons; with `palette`, its dominant colours too.',
    properties: {
      ...params('data'),
      square: own({ type: 'boolean' }, 'Ask for a square logo. pagecast always prefers square candidates, so this only narrows the answer to the logo.'),
      ...params('palette')
    },
    params: (args) => ({ ...without(args, ['square']), meta: args.square === true ? { logo: { square: true } } : true }),
    value: 'logo'
  },
  content('markdown', 'Returns a web page (or the part matched by `selector`/`selectorAll`) converted to Markdown: GitHub tables and fenced code, absolute links, scripts and hidden elements left out. The value is a string.'),
  content('html', 'Returns the HTML of a web page, or of the part matched by `selector`/`selectorAll`, as a string.'),
  content('text', 'Returns the visible text of a web page, or of the part matched by `selector`/`selectorAll`, with whitespace collapsed.'),
  {
    name: 'microlink_screenshot',
    description: 'Renders a web page in headless Chromium and captures it as an image (png, jpeg or webp; viewport or full page, an element, a browser frame and background). Returns the stored file (url, type, size, width, height); images under 1 MiB come back inline as well.',
    properties: params('data', 'screenshot'),
    params: (args) => ({ meta: false, ...args, screenshot: filled(args.screenshot) ? args.screenshot : true }),
    value: 'screenshot'
  },
  {
    name: 'microlink_pdf',
    description: 'Prints a web page to PDF in headless Chromium (paper format or size, margins, scale, orientation, page ranges). Returns the stored file (url, type, size).',
    properties: params('data', 'pdf'),
    params: (args) => ({ meta: false, ...args, pdf: filled(args.pdf) ? args.pdf : true }),
    value: 'pdf'
  },
  {
    name: 'microlink_embed',
    description: 'Finds the oEmbed endpoint of a page (its discovery link, else a bundled provider registry) and returns the embeddable HTML, with its scripts listed apart; null when the page has none.',
    properties: { ...params('data'), maxWidth: oembedSizeSchema('Largest width of the embed, in pixels'), maxHeight: oembedSizeSchema('Largest height of the embed, in pixels') },
    params: (args) => {
      const sizes = pick(args, ['maxWidth', 'maxHeight'])
      return { meta: false, ...without(args, ['maxWidth', 'maxHeight']), iframe: filled(sizes) ? sizes : true }
    },
    value: 'iframe'
  },
  {
    name: 'microlink_video',
    description: 'Finds a browser-playable video on a page (Open Graph, JSON-LD, `<video>`, or the target itself) and returns it as a media object with its duration and size; null when there is none.',
    properties: params('data', 'meta', 'video'),
    params: (args) => ({ meta: false, ...args, video: true }),
    value: 'video'
  },
  {
    name: 'microlink_audio',
    description: 'Finds a browser-playable audio source on a page (Open Graph, JSON-LD, `<audio>`, or the target itself) and returns it as a media object with its duration; null when there is none.',
    properties: params('data', 'meta', 'audio'),
    params: (args) => ({ meta: false, ...args, audio: true }),
    value: 'audio'
  },
  collection('links', 'Lists the absolute URLs of the links on a page (`a[href]` by default; `selector`, `selectorAll`, `attr` and `type` change the rule). An empty list when there are none.'),
  collection('images', 'Lists the absolute URLs of the images on a page (`img[src]` by default). An empty list when there are none.'),
  collection('videos', 'Lists the absolute URLs of the `<video>` sources on a page. An empty list when there are none.'),
  collection('audios', 'Lists the absolute URLs of the `<audio>` sources on a page. An empty list when there are none.'),
  collection('emails', 'Lists the e-mail addresses found in a page\'s HTML, `mailto:` links included, lower-cased and de-duplicated. An empty list when there are none.'),
  {
    name: 'microlink_technologies',
    description: 'Detects the technologies a site is built with (`insights.technologies`): `[{name, confidence, version, logo, url, categories}]` from a bundled Wappalyzer-format fingerprint set (HTML, headers, cookies, script URLs, meta tags; JS globals when the page is rendered).',
    properties: params('data'),
    params: (args) => ({ meta: false, ...args, insights: { technologies: true, lighthouse: false } }),
    value: 'insights.technologies'
  },
  {
    name: 'microlink_lighthouse',
    description: 'Runs a Lighthouse audit of a page (`insights.lighthouse`) and returns the report: the report object (LHR) by default, or Lighthouse\'s own HTML or CSV report text with `output`. A run takes seconds, one at a time per instance.',
    properties: {
      ...params('data'),
      onlyCategories: lighthouseSchema('onlyCategories'),
      onlyAudits: lighthouseSchema('onlyAudits'),
      skipAudits: lighthouseSchema('skipAudits'),
      output: lighthouseSchema('output')
    },
    params: (args) => {
      const settings = pick(args, LIGHTHOUSE_KEYS)
      return { meta: false, ...without(args, LIGHTHOUSE_KEYS), insights: { technologies: false, lighthouse: filled(settings) ? settings : true } }
    },
    value: 'insights.lighthouse'
  },
  {
    name: 'microlink_function',
    description: 'Runs a JavaScript function inside the page, in headless Chromium (never in the service), after it has loaded; returns `{isFulfilled, isRejected, value}` with the awaited, JSON-serialized return value.',
    properties: { code: parameterAs('function', 'The function\'s source, such as `({ page }) => page.title()`.'), ...params('data') },
    required: ['code'],
    params: (args) => ({ meta: false, ...without(args, ['code']), function: args.code }),
    value: 'function'
  },
  {
    name: 'microlink_extract',
    description: 'The whole API in one tool: any combination of metadata (`meta` is off unless given), `data` rules, screenshot, PDF, media, oEmbed, palette and function, answered as the full `data` object (or the value at `embed`).',
    properties: params('data', 'meta', 'palette', 'embed', 'function', 'iframe', 'ping', 'audio', 'video', 'pdf', 'screenshot', 'insights'),
    params: (args) => ({ meta: false, ...args })
  }
]
