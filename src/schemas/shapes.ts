// The shapes of the parameters that have sub-keys (docs/api.md §2, §3), each sub-key with its
// documentation: what the grammar accepts under `screenshot.`, `pdf.`, `data.<field>.` and the others,
// and what /openapi.json and docs/reference/parameters.md list. A pure data table; the parameter table
// (parameters.ts) puts these under their root names, and the readers reach a sub-key through `sub()`,
// typed by the shape, so a misspelt sub-key does not compile.
import {
  ATTR_KEYWORDS, DEFAULT_PDF_MARGIN, DEFAULT_PDF_SCALE, DEFAULT_SCREENSHOT_QUALITY, LIGHTHOUSE_OUTPUTS,
  LIGHTHOUSE_PRESETS, META_FIELDS, PAPER_FORMATS, PING_KINDS, RULE_TYPES
} from './options.ts'
import { DEFAULT_CODE_SCHEME } from './code-schemes.ts'
import type { MutableShape, ShapeSpec } from './grammar.ts'
import { doc } from './param-doc.ts'
import type { JsonSchema, ParamDoc } from './param-doc.ts'

// ---------------------------------------------------------------------------------------------
// Building blocks.

export const BOOLEAN: JsonSchema = { type: 'boolean' }
export const STRING: JsonSchema = { type: 'string' }
export const DURATION: JsonSchema = { type: ['number', 'string'], examples: [500, '10s', '1.5h', '2 days'] }
export const CSS_LENGTH: JsonSchema = { type: ['number', 'string'], pattern: '^(\\d+(\\.\\d*)?|\\.\\d+)\\s*(px|in|cm|mm)?$' }
export const STRING_OR_LIST: JsonSchema = { type: ['string', 'array'], items: { type: 'string' } }
export const SWITCH: JsonSchema = { type: ['boolean', 'object'] }

/** A single value. */
export function leaf (description?: string, schema: JsonSchema = STRING, extra: Omit<ParamDoc, 'description' | 'schema'> = {}): ShapeSpec {
  return description === undefined ? {} : { doc: doc(description, schema, extra) }
}

/** A string or a list of strings: numeric segments, a JSON array, or the key repeated. */
export const LIST: ShapeSpec = { items: {}, push: true, json: 'list' }

/** Known by name only to be refused (docs/api.md §2). */
const REJECTED: ShapeSpec = { rejected: true }

// ---------------------------------------------------------------------------------------------
// `data` rules (§3.3). Rules nest through `attr`: build the cycle, then fill in the keys.

const DATA_LIST: ShapeSpec = { items: {}, push: true, json: 'list', data: true }
const ruleOrList: MutableShape = { json: 'strict', data: true }
const ATTR: ShapeSpec = {
  items: {},
  push: true,
  json: 'strict',
  data: true,
  map: { name: 'as-written', label: 'field', child: ruleOrList },
  doc: doc(`What to read: ${ATTR_KEYWORDS.map((k) => `\`${k}\``).join(', ')}, or any attribute name; a list gives fallbacks; an object holds nested rules run per match (\`attr.<field>.selector\`, …).`,
    { type: ['string', 'array', 'object'], default: 'html' })
}
export const RULE = {
  json: 'strict',
  data: true,
  keys: {
    selector: { ...DATA_LIST, doc: doc('First matching element (`querySelector`); a list holds fallback selectors.', STRING_OR_LIST) },
    selectorAll: { ...DATA_LIST, doc: doc('All matches, as an array; a list of selectors gives the matches of all of them, in document order.', STRING_OR_LIST) },
    attr: ATTR,
    type: leaf('Validates and normalizes the value.', { type: 'string', enum: RULE_TYPES, default: 'auto' }),
    evaluate: leaf('A JS expression, or function source called with no arguments, run in the page (needs the browser). EINVALEVAL if it does not parse.'),
    mainContent: leaf('Read only the main content (found by Mozilla Readability), with absolute links; the whole body when none is found. Selectors then match inside it.', { ...BOOLEAN, default: false })
  }
} as const satisfies ShapeSpec
ruleOrList.keys = RULE.keys
ruleOrList.items = RULE
ruleOrList.doc = doc('A rule object, or a list of rule objects tried in order as fallbacks (`data.<field>.0.selector`); JSON is accepted. EINVALDATA if it is anything else.',
  { type: ['object', 'array'] })

export const DATA_SHAPE = {
  map: { name: 'as-written', label: 'field', child: ruleOrList },
  json: 'strict',
  data: true
} as const satisfies ShapeSpec

// ---------------------------------------------------------------------------------------------
// `screenshot` and `pdf` (§3.2).

export const OVERLAY_SHAPE = {
  json: 'strict',
  keys: {
    browser: leaf('Draws a browser-window frame around the capture.', { type: 'string', enum: ['light', 'dark'] }),
    background: leaf('A hex, `rgb()`/`rgba()` or named colour, a `linear-`/`radial-gradient()`, or an http(s) image URL. EINVALOVERLAYBG if invalid.')
  }
} as const satisfies ShapeSpec

export const SCREENSHOT_SHAPE = {
  json: 'strict',
  keys: {
    type: leaf('Image type; `jpg` is accepted as `jpeg`.', { type: 'string', enum: ['png', 'jpeg', 'webp'], default: 'png' }),
    quality: leaf('jpeg and webp only.', { type: 'integer', minimum: 0, maximum: 100, default: DEFAULT_SCREENSHOT_QUALITY }),
    fullPage: leaf('Capture the whole scrollable page (clipped at 16,384 pixels).', { ...BOOLEAN, default: false }),
    element: leaf('CSS selector: waits for the element to be visible, then clips to it (turns `fullPage` off).'),
    omitBackground: leaf('Transparent page background (png, webp).', { ...BOOLEAN, default: false }),
    overlay: { ...OVERLAY_SHAPE, doc: doc('Frame and background around the capture.', { type: 'object' }) },
    codeScheme: leaf('Prism theme for JSON and text targets: a bundled `prism-themes` id or an absolute http(s) CSS URL.', { type: 'string', default: DEFAULT_CODE_SCHEME }),
    animated: leaf('Not supported: `true` gives EINVALQUERY.', BOOLEAN),
    optimizeForSpeed: leaf('png only: `true` stores the PNG as Chromium\'s fast encoder wrote it (same pixels, a file about 2.5× larger, less CPU and time); `false` stores it no larger than Chromium\'s default encoding.', { ...BOOLEAN, default: false }),
    path: REJECTED
  }
} as const satisfies ShapeSpec

/** Top-level names read as `screenshot.*` when `screenshot` is on (docs/api.md §2). */
export const SCREENSHOT_LEGACY = ['fullPage', 'element', 'overlay', 'omitBackground', 'type'] as const

const SIDE = { ...CSS_LENGTH, default: 0 }

export const MARGIN_SHAPE = {
  json: 'strict',
  keys: {
    top: leaf('Top margin.', SIDE, { label: 'CSS length' }),
    right: leaf('Right margin.', SIDE, { label: 'CSS length' }),
    bottom: leaf('Bottom margin.', SIDE, { label: 'CSS length' }),
    left: leaf('Left margin.', SIDE, { label: 'CSS length' })
  }
} as const satisfies ShapeSpec

export const PDF_SHAPE = {
  json: 'strict',
  keys: {
    format: leaf('Paper format, any letter case.', { type: 'string', enum: PAPER_FORMATS, default: 'A4' }),
    width: leaf('Custom paper width; overrides `format`.', CSS_LENGTH, { label: 'CSS length' }),
    height: leaf('Custom paper height; overrides `format`.', CSS_LENGTH, { label: 'CSS length' }),
    margin: { ...MARGIN_SHAPE, doc: doc('A CSS length for all four sides, or one per side; missing sides are 0.', { ...CSS_LENGTH, type: ['number', 'string', 'object'], default: DEFAULT_PDF_MARGIN }, { label: 'CSS length | object' }) },
    scale: leaf('Rendering scale.', { type: 'number', minimum: 0.1, maximum: 2, default: DEFAULT_PDF_SCALE }),
    landscape: leaf('Landscape orientation.', { ...BOOLEAN, default: false }),
    printBackground: leaf('Print CSS backgrounds.', { ...BOOLEAN, default: true }),
    pageRanges: leaf('Pages to print, such as `1-5, 8, 11-13` or `5-`; EPAGERANGE when a range starts past the last page.', { type: 'string', pattern: '^[\\d\\s,-]*$' }, { shownDefault: 'all pages' }),
    path: REJECTED
  }
} as const satisfies ShapeSpec

/** Top-level names read as `pdf.*` when `pdf` is on (docs/api.md §2). */
export const PDF_LEGACY = ['scale', 'margin', 'format', 'landscape', 'pageRanges'] as const

// ---------------------------------------------------------------------------------------------
// Detectors (§3.1, §3.4).

/** One sub-key per name in `names`, each a documented leaf. */
function keysFor<N extends string> (names: readonly N[], describe: (name: N) => ParamDoc): Record<N, ShapeSpec> {
  return Object.fromEntries(names.map((name) => [name, { doc: describe(name) }])) as Record<N, ShapeSpec>
}

export const META_SHAPE = {
  keys: keysFor(META_FIELDS, (field) => doc(`\`true\` keeps \`${field}\` (then only the \`true\` fields are returned); \`false\` leaves it out.`, BOOLEAN)),
  json: 'strict'
} as const satisfies ShapeSpec

export const IFRAME_SHAPE = {
  map: { name: 'lower', label: 'name', child: leaf('Passed to the oEmbed provider as a lower-cased query parameter (`iframe.maxWidth=400` -> `maxwidth=400`).') },
  json: 'strict'
} as const satisfies ShapeSpec

// Lighthouse settings: camelCase names and numeric segments, nested freely.
const settingsValue: MutableShape = {}
settingsValue.map = { name: 'camel', label: 'setting', child: settingsValue }
settingsValue.items = settingsValue

export const LIGHTHOUSE_SHAPE = {
  json: 'strict',
  keys: {
    output: leaf('Report format.', { type: 'string', enum: LIGHTHOUSE_OUTPUTS, default: 'json' }),
    preset: leaf('Lighthouse preset.', { type: 'string', enum: LIGHTHOUSE_PRESETS, default: 'default' })
  },
  map: { name: 'camel', label: 'setting', child: { ...settingsValue, doc: doc('Any other Lighthouse setting, camelCased (`onlyCategories`), merged into the preset\'s settings; `auditMode`, `gatherMode`, `debugNavigation`, `extraHeaders` and `blankPage` are refused (EINVALQUERY).', {}) } }
} as const satisfies ShapeSpec

export const INSIGHTS_SHAPE = {
  json: 'strict',
  keys: {
    technologies: leaf('`data.insights.technologies`: `[{name, confidence, version, logo, url, categories}]` matched on the HTML, headers, cookies, script URLs and meta tags (plus JS globals when rendered) against a bundled Wappalyzer-format fingerprint set.', { ...BOOLEAN, default: true }),
    lighthouse: { ...LIGHTHOUSE_SHAPE, doc: doc('`data.insights.lighthouse`: a Lighthouse report of the target (needs the browser), run with a Chromium of its own, one run at a time, in a browser queue slot, within `timeout`.', { ...SWITCH, default: true }) }
  }
} as const satisfies ShapeSpec

export const PING_SHAPE = {
  keys: keysFor(PING_KINDS, (kind) => doc(`\`false\` skips checking ${kind} URLs.`, { ...BOOLEAN, default: true })),
  json: 'strict'
} as const satisfies ShapeSpec

// ---------------------------------------------------------------------------------------------
// Browser and emulation (§3.5), loading (§3.6).

export const VIEWPORT_SHAPE = {
  json: 'strict',
  keys: {
    width: leaf('Viewport width in CSS pixels.', { type: 'integer', minimum: 1, maximum: 8192 }, { shownDefault: 'from device' }),
    height: leaf('Viewport height in CSS pixels.', { type: 'integer', minimum: 1, maximum: 8192 }, { shownDefault: 'from device' }),
    deviceScaleFactor: leaf('Device pixel ratio.', { type: 'number', minimum: 0.1, maximum: 4 }, { shownDefault: 'from device' }),
    isMobile: leaf('Mobile emulation.', BOOLEAN, { shownDefault: 'from device' }),
    hasTouch: leaf('Touch events.', BOOLEAN, { shownDefault: 'from device' }),
    isLandscape: leaf('Landscape orientation.', BOOLEAN, { shownDefault: 'from device' })
  }
} as const satisfies ShapeSpec

export const HEADERS_SHAPE = {
  map: { name: 'kebab', label: 'name', child: leaf('Sent to the target; the name is lower-cased and kebab-cased (`userAgent` -> `user-agent`).') },
  json: 'strict'
} as const satisfies ShapeSpec

export const PROXY_SHAPE = {
  json: 'strict',
  keys: { url: leaf('The proxy URL, as an object member.', { type: 'string', format: 'uri' }) }
} as const satisfies ShapeSpec
