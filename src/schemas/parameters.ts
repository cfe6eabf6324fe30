// The one table of parameters (docs/api.md §3): each option of ExtractOptions is declared here once, in
// the order parseQuery reads them (so the first error of a query with several is always the same). From
// it come the grammar's root shape, the plan gates, the cache-key rules, what needs the browser, the
// option groups (option-groups.ts), /openapi.json and /docs (src/docs/) and docs/reference/parameters.md.
// A pure data table: the readers live in read-*.ts, the sub-keys' shapes and docs in shapes.ts.
import { DEFAULT_DEVICE } from './devices.ts'
import { COLOR_SCHEMES, DEFAULT_RETRY, MAX_TTL, MIN_TTL, WAIT_UNTIL, someRule } from './options.ts'
import type { ShapeSpec } from './grammar.ts'
import { doc } from './param-doc.ts'
import type { ParamTable } from './param-types.ts'
import { readBoolean, readEnum, readInteger, readOptionalString, readStrings } from './readers.ts'
import {
  BOOLEAN, DATA_SHAPE, DURATION, HEADERS_SHAPE, IFRAME_SHAPE, INSIGHTS_SHAPE, META_SHAPE, PDF_LEGACY, PDF_SHAPE, PING_SHAPE,
  PROXY_SHAPE, SCREENSHOT_LEGACY, SCREENSHOT_SHAPE, STRING, STRING_OR_LIST, SWITCH, VIEWPORT_SHAPE, LIST
} from './shapes.ts'
import { readData } from './read-rules.ts'
import { readActions } from './read-actions.ts'
import { readArgs, readFunction } from './read-function.ts'
import { readPdf, readScreenshot } from './read-capture.ts'
import { readIframe, readInsights, readMeta, readPing } from './read-detectors.ts'
import { API_HEADER_PREFIX, readDevice, readHeaders, readViewport } from './read-emulation.ts'
import { readPrerender, readProxy, readTimeout, readUrl, readWaitForTimeout, readWaitUntil } from './read-loading.ts'
import { STREAM, readCacheKey, readEmbed, readFilename, readFilter, readStaleTtl, readTtl } from './read-delivery.ts'

const LEAF: ShapeSpec = {}

/** The legacy top-level names of `parent`'s sub-keys, each with the sub-key's shape. */
function legacy (parent: ShapeSpec, names: readonly string[]): Record<string, ShapeSpec> {
  return Object.fromEntries(names.map((name) => [name, parent.keys?.[name] ?? LEAF]))
}

export const PARAMETERS = {
  url: {
    group: 'target',
    shape: LEAF,
    read: readUrl,
    cacheKey: 'keep',
    doc: doc('Target page, parsed as a WHATWG URL: `http` or `https` with a host. Required. EINVALURL if missing, unparseable or unreachable; EFORBIDDENURL if blocked.', { type: 'string', format: 'uri' })
  },
  meta: {
    group: 'outputs',
    shape: META_SHAPE,
    read: readMeta,
    cacheKey: 'keep',
    readsPage: (o) => o.meta !== false,
    doc: doc('Normalized metadata: title, description, lang, author, publisher, image, url, date, logo. `false` skips it; `meta.<field>=true|false` selects fields.', { ...SWITCH, default: true })
  },
  data: {
    group: 'outputs',
    shape: DATA_SHAPE,
    read: readData,
    cacheKey: 'keep',
    browser: { when: (o) => someRule(o.data, (rule) => rule.evaluate !== undefined), note: 'when a rule has `evaluate`' },
    readsPage: (o) => o.data !== undefined,
    doc: doc('Custom extraction rules by field name: `data.<field>` is a rule object or a list of fallback rules. EINVALDATA if invalid.', { type: 'object' })
  },
  filter: {
    group: 'reply',
    shape: LEAF,
    read: readFilter,
    cacheKey: 'leave-out',
    doc: doc('Comma-separated dot paths into `data` to keep (`url,title,image.url`). Ignored with `embed`.', STRING)
  },
  embed: {
    group: 'reply',
    shape: LEAF,
    aliases: STREAM.keys,
    read: readEmbed,
    cacheKey: 'leave-out',
    doc: doc('Dot path into `data`; the response body becomes that value (files and media URLs are streamed).', { ...STRING, examples: ['screenshot.url', 'pdf.url', 'image.url', 'title'] })
  },
  screenshot: {
    group: 'outputs',
    shape: SCREENSHOT_SHAPE,
    aliases: legacy(SCREENSHOT_SHAPE, SCREENSHOT_LEGACY),
    read: readScreenshot,
    cacheKey: 'keep',
    browser: { when: (o) => o.screenshot !== false },
    doc: doc('Adds `data.screenshot`: an image of the viewport (device pixels), plus any overlay.', { ...SWITCH, default: false })
  },
  pdf: {
    group: 'outputs',
    shape: PDF_SHAPE,
    aliases: legacy(PDF_SHAPE, PDF_LEGACY),
    read: readPdf,
    cacheKey: 'keep',
    browser: { when: (o) => o.pdf !== false },
    doc: doc('Adds `data.pdf`, the page printed to PDF; `mediaType` then defaults to `print`. EPDFTOOLARGE if it cannot be rendered in time or exceeds 100 MiB.', { ...SWITCH, default: false })
  },
  video: {
    group: 'outputs',
    shape: LEAF,
    read: readBoolean(false),
    cacheKey: 'keep',
    readsPage: (o) => o.video,
    doc: doc('Adds `data.video`, a browser-playable source (mp4, webm, ogg) from Open Graph, `twitter:player:stream`, JSON-LD, `<video>` or the target itself, with its duration and size read from the container.', { ...BOOLEAN, default: false })
  },
  audio: {
    group: 'outputs',
    shape: LEAF,
    read: readBoolean(false),
    cacheKey: 'keep',
    readsPage: (o) => o.audio,
    doc: doc('Adds `data.audio`, a browser-playable source (mp3, m4a/aac, ogg/opus, wav, flac) found the same way, with its duration.', { ...BOOLEAN, default: false })
  },
  iframe: {
    group: 'outputs',
    shape: IFRAME_SHAPE,
    read: readIframe,
    cacheKey: 'keep',
    readsPage: (o) => o.iframe !== false,
    doc: doc('oEmbed: adds `data.iframe = {html, scripts}` from the page\'s discovery link, else the bundled provider registry; `null` if none answers. Other `iframe.*` keys go to the provider, lower-cased.', { ...SWITCH, default: false })
  },
  insights: {
    group: 'outputs',
    shape: INSIGHTS_SHAPE,
    read: readInsights,
    cacheKey: 'keep',
    browser: { when: (o) => o.insights !== false && o.insights.lighthouse !== false, note: 'with `insights.lighthouse`' },
    readsPage: (o) => o.insights !== false && o.insights.technologies,
    doc: doc('Adds `data.insights = {technologies, lighthouse}`; once on, both parts default to on, and a part turned off is absent.', { ...SWITCH, default: false })
  },
  palette: {
    group: 'outputs',
    shape: LEAF,
    read: readBoolean(false),
    cacheKey: 'keep',
    doc: doc('Every image-like media object gains `palette` (up to 6 colours, dominant first), `background_color`, `color` and `alternative_color` (best WCAG contrast); all null for svg and ico.', { ...BOOLEAN, default: false })
  },
  ping: {
    group: 'outputs',
    shape: PING_SHAPE,
    read: readPing,
    cacheKey: 'keep',
    doc: doc('Checks each media URL before returning it; `ping.<kind>=false` skips one kind.', { ...SWITCH, default: true })
  },
  function: {
    group: 'outputs',
    shape: LEAF,
    read: readFunction,
    cacheKey: 'keep',
    browser: { when: (o) => o.function !== undefined },
    doc: doc('Source of a JavaScript function run inside the page (`lz#`, `br#`, `gz#` mark compressed source); the result is `data.function`. Unknown parameters become its arguments. EINVALFUNCTION if it does not parse.', STRING)
  },
  device: {
    group: 'emulation',
    shape: LEAF,
    read: readDevice,
    cacheKey: 'keep',
    doc: doc('Device preset: viewport and user agent; names match ignoring case, spaces and punctuation.', { type: 'string', default: DEFAULT_DEVICE })
  },
  viewport: {
    group: 'emulation',
    shape: VIEWPORT_SHAPE,
    read: readViewport,
    cacheKey: 'keep',
    doc: doc('Merged over the device\'s viewport.', { type: 'object' }, { shownDefault: 'from device' })
  },
  colorScheme: {
    group: 'emulation',
    shape: LEAF,
    read: readEnum(COLOR_SCHEMES, 'no-preference'),
    cacheKey: 'keep',
    doc: doc('Emulates `prefers-color-scheme`.', { type: 'string', enum: COLOR_SCHEMES, default: 'no-preference' })
  },
  mediaType: {
    group: 'emulation',
    shape: LEAF,
    read: (node, input) => readEnum<'screen' | 'print'>(['screen', 'print'], input.done.pdf === false ? 'screen' : 'print')(node, input),
    cacheKey: 'keep',
    doc: doc('Emulated CSS media type.', { type: 'string', enum: ['screen', 'print'], default: 'screen' }, { shownDefault: 'screen (print with pdf)' })
  },
  javascript: {
    group: 'emulation',
    shape: LEAF,
    read: readBoolean(true),
    cacheKey: 'keep',
    doc: doc('`false` disables page scripts in the browser.', { ...BOOLEAN, default: true })
  },
  animations: {
    group: 'emulation',
    shape: LEAF,
    read: readBoolean(false),
    cacheKey: 'keep',
    doc: doc('`false` stops CSS animations and transitions and emulates `prefers-reduced-motion: reduce`.', { ...BOOLEAN, default: false })
  },
  adblock: {
    group: 'emulation',
    shape: LEAF,
    read: readBoolean(true),
    cacheKey: 'keep',
    doc: doc('Blocks ad, tracker and cookie-consent requests with bundled filter lists.', { ...BOOLEAN, default: true })
  },
  headers: {
    group: 'target',
    shape: HEADERS_SHAPE,
    read: readHeaders,
    gate: { code: 'EHEADERS', requestHeaderPrefix: API_HEADER_PREFIX },
    cacheKey: 'hash-values',
    doc: doc('`headers.<name>=<value>` is sent to the target; so is the request header `x-api-header-<name>`, which wins.', { type: 'object' })
  },
  prerender: {
    group: 'target',
    shape: LEAF,
    read: readPrerender,
    cacheKey: 'keep',
    doc: doc('`false`: plain HTTP GET; `true`: headless browser; `auto`: a GET unless something needs the browser or the HTML looks client-rendered.', { type: ['boolean', 'string'], enum: [true, false, 'auto'], default: 'auto' })
  },
  waitUntil: {
    group: 'steps',
    shape: LIST,
    read: readWaitUntil,
    cacheKey: 'keep',
    browser: { when: (o) => !(o.waitUntil.length === 1 && o.waitUntil[0] === 'auto'), note: 'any value but `auto`' },
    doc: doc('Events to wait for: `load`, `domcontentloaded`, `networkidle0`, `networkidle2`, or `auto` (`load`, then network idle). A list waits for all.', { type: ['string', 'array'], items: { type: 'string', enum: WAIT_UNTIL }, default: 'auto' })
  },
  waitForSelector: {
    group: 'steps',
    shape: LEAF,
    read: readOptionalString,
    cacheKey: 'keep',
    browser: { when: (o) => o.waitForSelector !== undefined },
    doc: doc('CSS selector: waits until the element is attached and visible. Giving up is not an error.', STRING)
  },
  timeout: {
    group: 'target',
    shape: LEAF,
    read: readTimeout,
    cacheKey: 'leave-out',
    doc: doc('Budget for the whole request, queue wait included; > 0, lowered to `MAX_TIMEOUT`. ETIMEOUT when it runs out.', DURATION, { label: 'duration', shownDefault: 'MAX_TIMEOUT (28s)' })
  },
  waitForTimeout: {
    group: 'steps',
    shape: LEAF,
    read: readWaitForTimeout,
    cacheKey: 'keep',
    browser: { when: (o) => o.waitForTimeout !== undefined },
    doc: doc('Fixed wait after `waitForSelector`, at most `timeout`.', DURATION, { label: 'duration' })
  },
  click: {
    group: 'steps',
    shape: LIST,
    read: readStrings,
    cacheKey: 'keep',
    browser: { when: (o) => o.click.length > 0 },
    doc: doc('Selectors clicked in order; missing ones are skipped.', STRING_OR_LIST)
  },
  scroll: {
    group: 'steps',
    shape: LEAF,
    read: readOptionalString,
    cacheKey: 'keep',
    browser: { when: (o) => o.scroll !== undefined },
    doc: doc('Selector scrolled into view after the clicks.', STRING)
  },
  actions: {
    group: 'steps',
    shape: LEAF,
    read: readActions,
    // Added after entries were stored: no actions (the default) keeps their keys.
    cacheKey: 'unless-empty',
    browser: { when: (o) => o.actions.length > 0 },
    doc: doc('A JSON list of page actions done in the order given, after the other steps: `wait`, `click`, `write`, `press`, `scroll`, `screenshot`, `scrape`, `executeJavascript`, `pdf` (docs/firecrawl.md#actions). Their captures are in `data.actions`. An action that cannot be done is EACTION.', STRING)
  },
  modules: {
    group: 'steps',
    shape: LIST,
    read: readStrings,
    cacheKey: 'keep',
    browser: { when: (o) => o.modules.length > 0 },
    doc: doc('Injected as a `script` element of `type=module`: inline code or an http(s) URL.', STRING_OR_LIST)
  },
  scripts: {
    group: 'steps',
    shape: LIST,
    read: readStrings,
    cacheKey: 'keep',
    browser: { when: (o) => o.scripts.length > 0 },
    doc: doc('Injected as a classic `script` element: inline code or an http(s) URL.', STRING_OR_LIST)
  },
  styles: {
    group: 'steps',
    shape: LIST,
    read: readStrings,
    cacheKey: 'keep',
    browser: { when: (o) => o.styles.length > 0 },
    doc: doc('Injected `<style>`: inline CSS or an http(s) URL.', STRING_OR_LIST)
  },
  retry: {
    group: 'target',
    shape: LEAF,
    read: readInteger(0, 5, DEFAULT_RETRY),
    cacheKey: 'leave-out',
    doc: doc('Retries of browser failures within the deadline, with exponential backoff from 250 ms.', { type: 'integer', minimum: 0, maximum: 5, default: DEFAULT_RETRY })
  },
  proxy: {
    group: 'target',
    shape: PROXY_SHAPE,
    read: readProxy,
    gate: { code: 'EPROXY' },
    cacheKey: 'hash',
    doc: doc('An `http`, `https` or `socks5` proxy URL (credentials allowed) for every request, behind the address guard. EINVALPROXY if unparseable or the proxy fails; EFORBIDDENURL (`data.proxy`) if its host is not allowed.', { type: ['string', 'object'], format: 'uri' })
  },
  ttl: {
    group: 'cache',
    shape: LEAF,
    read: readTtl,
    gate: { code: 'ETTL' },
    cacheKey: 'keep',
    doc: doc(`Cache lifetime, 1 minute to 31 days (\`min\` = ${MIN_TTL} ms, \`max\` = ${MAX_TTL} ms). EINVALTTL otherwise.`, { ...DURATION, default: '24h' }, { label: 'duration | min | max' })
  },
  staleTtl: {
    group: 'cache',
    shape: LEAF,
    read: readStaleTtl,
    gate: { code: 'ESTTL' },
    cacheKey: 'leave-out',
    doc: doc('Stale-while-revalidate: an entry with less than this ttl left is served at once while it refreshes. `true` means 0. Lower than `ttl`, else EINVALSTTL.', { type: ['number', 'string', 'boolean'], default: false }, { label: 'duration | boolean' })
  },
  force: {
    group: 'cache',
    shape: LEAF,
    read: readBoolean(false),
    cacheKey: 'leave-out',
    doc: doc('Skips the cache lookup, recomputes and overwrites the entry.', { ...BOOLEAN, default: false })
  },
  cacheKey: {
    group: 'cache',
    shape: LEAF,
    read: readCacheKey,
    gate: { code: 'ECACHEKEY' },
    cacheKey: 'keep',
    doc: doc('Extra segment of the cache key.', { type: 'string', maxLength: 256 })
  },
  filename: {
    group: 'reply',
    shape: LEAF,
    read: readFilename,
    gate: { code: 'EFILENAME' },
    cacheKey: 'keep',
    doc: doc('Download name of the generated screenshot or PDF: 1-100 characters of `[A-Za-z0-9._-]`; the extension is added if missing.', { type: 'string', pattern: '^[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}$' })
  },
  args: {
    group: 'outputs',
    query: false,
    shape: LEAF,
    read: readArgs,
    cacheKey: 'with-function',
    doc: doc('Not a parameter: the unknown parameters, passed to `function` as its named arguments.', { type: 'object' })
  }
} as const satisfies ParamTable

/** Root names refused (docs/api.md §2); `screenshot.path` and `pdf.path` are in their shapes. */
export const REJECTED_ROOT: Readonly<Record<string, ShapeSpec>> = { path: { rejected: true } }

/**
 * A signed link's parameters (docs/api.md §16, src/tenants/signed-links.ts): names the grammar knows and no option
 * reads, so they are never `function` arguments and stay out of the cache key (two links that differ in `expires`
 * share one entry).
 */
export const SIGNED_LINK_ROOT = { keyId: LEAF, expires: LEAF, signature: LEAF } as const satisfies Readonly<Record<string, ShapeSpec>>
