// The typed, normalized options of one API request (docs/api.md §3), as parseQuery (query.ts) builds them.
// Every parameter has its default filled in and its value normalized, so two queries that mean the
// same thing (other spelling, other order, a default stated or not) give deep-equal objects. Optional
// members are left out, never set to undefined.
import type { Viewport } from './devices.ts'

export type { Viewport }

export const META_FIELDS = ['title', 'description', 'lang', 'author', 'publisher', 'image', 'url', 'date', 'logo'] as const
export type MetaField = (typeof META_FIELDS)[number]

/** `data` rule types (docs/api.md §3.3). */
export const RULE_TYPES = [
  'auto', 'string', 'number', 'boolean', 'object', 'date', 'email', 'ip', 'lang', 'regexp', 'url',
  'title', 'description', 'author', 'publisher', 'image', 'logo', 'video', 'audio'
] as const
export type RuleType = (typeof RULE_TYPES)[number]

/** `attr` values with a meaning of their own; any other string is an attribute name. */
export const ATTR_KEYWORDS = ['html', 'outerHTML', 'text', 'markdown', 'val', 'json'] as const

export interface Rule {
  /** Fallback selectors (`querySelector`), tried in order. */
  selector?: string[]
  /** Fallback selectors for all matches; when both are given, `selectorAll` is kept. */
  selectorAll?: string[]
  /**
   * What to read: fallback names (keywords of ATTR_KEYWORDS in their canonical spelling, or attribute
   * names as written), default `['html']`; or nested rules run per match, keyed by field name as written.
   */
  attr: string[] | Record<string, Rule[]>
  type: RuleType
  /** JS expression or function source, checked to parse. */
  evaluate?: string
  /** Read only the page's main content (docs/api.md §3.3); present only when true. */
  mainContent?: true
}

/** Whether any rule of `data`, nested rules included, passes `test`. */
export function someRule (data: Readonly<Record<string, readonly Rule[]>> | undefined, test: (rule: Rule) => boolean): boolean {
  return Object.values(data ?? {}).some((rules) => rules.some((rule) =>
    test(rule) || (!Array.isArray(rule.attr) && someRule(rule.attr, test))))
}

/** Every distinct `evaluate` source of `data`, nested rules included, in the order rules are written. */
export function evaluateSources (data: Readonly<Record<string, readonly Rule[]>> | undefined): string[] {
  const found = new Set<string>()
  someRule(data, (rule) => {
    if (rule.evaluate !== undefined) found.add(rule.evaluate)
    return false
  })
  return [...found]
}

export type ScreenshotType = 'png' | 'jpeg' | 'webp'

export interface ScreenshotOptions {
  type: ScreenshotType
  /** 0-100; present for jpeg and webp only (png ignores it). */
  quality?: number
  /** Always false when `element` is set. */
  fullPage: boolean
  element?: string
  /** Always false for jpeg, which has no transparency. */
  omitBackground: boolean
  overlay: {
    browser?: 'light' | 'dark'
    /** A lower-cased hex or named colour, rgb()/rgba(), a linear-/radial-gradient(), or an http(s) URL (href). */
    background?: string
  }
  /** A bundled prism-themes id (code-schemes.ts) or an absolute http(s) CSS URL (href). */
  codeScheme: string
  /**
   * png only, present only when true: the file is stored as Chromium's fast encoder wrote it, not written again
   * smaller (media/png-recompress.ts). The pixels are the same either way.
   */
  optimizeForSpeed?: true
}

export const PAPER_FORMATS = ['Letter', 'Legal', 'Tabloid', 'Ledger', 'A0', 'A1', 'A2', 'A3', 'A4', 'A5', 'A6'] as const
export type PaperFormat = (typeof PAPER_FORMATS)[number]

/** One page action of `actions` (schemas/actions.ts reads them), in the order given. */
export type PageAction =
  | { type: 'wait', milliseconds?: number, selector?: string }
  | { type: 'click', selector: string, all?: boolean }
  | { type: 'write', text: string }
  | { type: 'press', key: string }
  | { type: 'scroll', direction: 'up' | 'down', selector?: string }
  | { type: 'screenshot', fullPage: boolean, quality?: number }
  | { type: 'scrape' }
  | { type: 'executeJavascript', script: string }
  | { type: 'pdf', format?: PaperFormat, landscape?: boolean, scale?: number }

/** Paper sizes in inches, portrait (Playwright's table). */
export const PAPER_SIZES_IN: Readonly<Record<PaperFormat, { width: number, height: number }>> = Object.freeze({
  Letter: { width: 8.5, height: 11 },
  Legal: { width: 8.5, height: 14 },
  Tabloid: { width: 11, height: 17 },
  Ledger: { width: 17, height: 11 },
  A0: { width: 33.1, height: 46.8 },
  A1: { width: 23.4, height: 33.1 },
  A2: { width: 16.54, height: 23.4 },
  A3: { width: 11.7, height: 16.54 },
  A4: { width: 8.27, height: 11.7 },
  A5: { width: 5.83, height: 8.27 },
  A6: { width: 4.13, height: 5.83 }
})

export interface PdfMargin {
  /** CSS pixels (96 per inch). */
  top: number
  right: number
  bottom: number
  left: number
}

export interface PdfOptions {
  /** The paper format; absent when a custom size (`width` and `height`) is given. */
  format?: PaperFormat
  /** Custom paper size in CSS pixels; both present or both absent. A side left out takes the format's. */
  width?: number
  height?: number
  margin: PdfMargin
  scale: number
  landscape: boolean
  printBackground: boolean
  /** Normalized: no spaces, e.g. `1-5,8,11-13`, `5-`. Absent means all pages. */
  pageRanges?: string
}

export const LIGHTHOUSE_OUTPUTS = ['json', 'html', 'csv'] as const
export const LIGHTHOUSE_PRESETS = ['default', 'desktop', 'perf', 'experimental', 'full', 'lr-desktop', 'lr-mobile'] as const

/**
 * Lighthouse settings a request may not set: `auditMode` and `gatherMode` read and write artifacts on the service's
 * disk, `debugNavigation` waits for a person, and `extraHeaders` would send headers to every origin, around the
 * pro-only `headers.*` (400 EINVALQUERY). The run's time limits are capped by the request's deadline instead.
 */
export const LIGHTHOUSE_RESERVED_SETTINGS = ['auditMode', 'gatherMode', 'debugNavigation', 'extraHeaders'] as const

/**
 * Lighthouse settings that name a page its browser loads besides the target (400 EINVALQUERY): `blankPage`, which it
 * opens before the run, would take it to `file:`, `chrome:` (`chrome://crash`) or `view-source:` pages, which web
 * content can never reach. Its other settings name no page (lighthouse/core/config/constants.js, 13.x).
 */
export const LIGHTHOUSE_PAGE_SETTINGS = ['blankPage'] as const

export interface LighthouseOptions {
  output: (typeof LIGHTHOUSE_OUTPUTS)[number]
  preset: (typeof LIGHTHOUSE_PRESETS)[number]
  /** Everything else, for Lighthouse's settings: camelCase names; `true`/`false` and numbers coerced. */
  settings: Record<string, unknown>
}

export interface InsightsOptions {
  technologies: boolean
  lighthouse: false | LighthouseOptions
}

/** Media kinds whose URLs are checked (`ping.<kind>`). */
export const PING_KINDS = ['image', 'logo', 'video', 'audio'] as const
export type PingKind = (typeof PING_KINDS)[number]
export type PingOptions = Record<PingKind, boolean>

export interface FunctionOptions {
  /** The decoded source (after `lz#`, `br#` or `gz#`). */
  source: string
  /** ms the code may run: the plan's limit (FUNCTION_TIME_LIMIT_MS), later capped by the time the request has left. */
  timeLimit: number
}

/** A named argument of `function`: unknown query parameters, names as written, dot paths nested. */
export type FunctionArg = string | FunctionArg[] | { [name: string]: FunctionArg }

export const WAIT_UNTIL = ['auto', 'load', 'domcontentloaded', 'networkidle0', 'networkidle2'] as const
export type WaitUntil = (typeof WAIT_UNTIL)[number]

export const COLOR_SCHEMES = ['light', 'dark', 'no-preference'] as const
export type ColorScheme = (typeof COLOR_SCHEMES)[number]

export interface ExtractOptions {
  /** WHATWG href: lower-case scheme and host, punycode, default port dropped, fragment kept. */
  url: string
  meta: false | { fields: MetaField[] }
  /** Extraction rules by field name (as written); each field holds its fallback rules, in order. */
  data?: Record<string, Rule[]>
  /** Dot paths into `data` to keep, sorted and deduplicated; absent with `embed`. */
  filter?: string[]
  /** Dot path into `data` (`stream=<f>` becomes `<f>.url`; `embed` wins). May be empty (then ENOTFOUND). */
  embed?: string
  screenshot: false | ScreenshotOptions
  pdf: false | PdfOptions
  video: boolean
  audio: boolean
  /** false, or the oEmbed query parameters (lower-cased names) to pass to the provider. */
  iframe: false | Record<string, string>
  insights: false | InsightsOptions
  palette: boolean
  ping: PingOptions
  function?: FunctionOptions
  /** Canonical device name (schemas/devices.ts). */
  device: string
  /** The device's viewport with the user's partial `viewport` merged over it. */
  viewport: Viewport
  colorScheme: ColorScheme
  /** `print` by default when `pdf` is on, else `screen`. */
  mediaType: 'screen' | 'print'
  javascript: boolean
  animations: boolean
  adblock: boolean
  /** Forwarded headers: lower-case kebab names, hop-by-hop/host/content-length dropped; x-api-header-* merged in and winning. */
  headers: Record<string, string>
  prerender: boolean | 'auto'
  /** Sorted, deduplicated; `['auto']` by default; `auto` never combined with others. */
  waitUntil: WaitUntil[]
  waitForSelector?: string
  /** ms, at most `timeout`. */
  waitForTimeout?: number
  /** ms, > 0, at most the server's MAX_TIMEOUT (its default). */
  timeout: number
  click: string[]
  scroll?: string
  /** Done in the page in this order after the other steps (browser/steps/actions.ts); empty when none. */
  actions: PageAction[]
  modules: string[]
  scripts: string[]
  styles: string[]
  /** 0-5. */
  retry: number
  /** http, https or socks5 proxy URL (href, credentials kept). */
  proxy?: string
  /** ms, 1 min to 31 days. */
  ttl: number
  /** ms, lower than ttl; false when off. */
  staleTtl: number | false
  force: boolean
  cacheKey?: string
  /** Download names with their extension, per generated file; only kinds that are on. */
  filename?: { screenshot?: string, pdf?: string }
  /** Unknown parameters, only when `function` is set (else empty). */
  args: Record<string, FunctionArg>
}

export const MS_MINUTE = 60_000
export const MS_DAY = 86_400_000
export const DEFAULT_TTL = MS_DAY
export const MIN_TTL = MS_MINUTE
export const MAX_TTL = 31 * MS_DAY
export const MAX_QUERY_BYTES = 32 * 1024
export const MAX_FUNCTION_BYTES = 64 * 1024
export const MAX_FREE_FUNCTION_BYTES = 1024
/** How long `function` may run, by plan (docs/api.md §3.4), before the request's own deadline caps it. */
export const FUNCTION_TIME_LIMIT_MS = { free: 5_000, pro: 28_000 } as const
export const DEFAULT_SCREENSHOT_QUALITY = 80
export const DEFAULT_PDF_SCALE = 0.6
export const DEFAULT_PDF_MARGIN = '0.35cm'
export const DEFAULT_RETRY = 2
