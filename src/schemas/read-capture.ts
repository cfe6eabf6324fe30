// `screenshot` and `pdf` (docs/api.md §3.2): each on when given (or a sub-key is), off when `false`;
// their legacy top-level aliases are merged under them, the nested key winning.
import { DEFAULT_CODE_SCHEME, resolveCodeScheme } from './code-schemes.ts'
import { DEFAULT_PDF_MARGIN, DEFAULT_PDF_SCALE, DEFAULT_SCREENSHOT_QUALITY, PAPER_FORMATS, PAPER_SIZES_IN } from './options.ts'
import type { PaperFormat, PdfMargin, PdfOptions, ScreenshotOptions, ScreenshotType } from './options.ts'
import type { Node, Prim } from './grammar.ts'
import { fail, invalid } from './messages.ts'
import { bool, enumValue, numberIn, objectNode, optionalString, parseCssLength, scalar, str, sub, switchState, toBool, withAliases } from './readers.ts'
import type { SubKey } from './readers.ts'
import { MARGIN_SHAPE, OVERLAY_SHAPE, PDF_LEGACY, PDF_SHAPE, SCREENSHOT_LEGACY, SCREENSHOT_SHAPE } from './shapes.ts'
import type { ReadInput } from './param-types.ts'
import { toHttpUrl } from '../util/url.ts'

const NAMED_COLORS = new Set((
  'aliceblue antiquewhite aqua aquamarine azure beige bisque black blanchedalmond blue blueviolet brown burlywood ' +
  'cadetblue chartreuse chocolate coral cornflowerblue cornsilk crimson cyan darkblue darkcyan darkgoldenrod darkgray ' +
  'darkgreen darkgrey darkkhaki darkmagenta darkolivegreen darkorange darkorchid darkred darksalmon darkseagreen ' +
  'darkslateblue darkslategray darkslategrey darkturquoise darkviolet deeppink deepskyblue dimgray dimgrey dodgerblue ' +
  'firebrick floralwhite forestgreen fuchsia gainsboro ghostwhite gold goldenrod gray green greenyellow grey honeydew ' +
  'hotpink indianred indigo ivory khaki lavender lavenderblush lawngreen lemonchiffon lightblue lightcoral lightcyan ' +
  'lightgoldenrodyellow lightgray lightgreen lightgrey lightpink lightsalmon lightseagreen lightskyblue lightslategray ' +
  'lightslategrey lightsteelblue lightyellow lime limegreen linen magenta maroon mediumaquamarine mediumblue ' +
  'mediumorchid mediumpurple mediumseagreen mediumslateblue mediumspringgreen mediumturquoise mediumvioletred ' +
  'midnightblue mintcream mistyrose moccasin navajowhite navy oldlace olive olivedrab orange orangered orchid ' +
  'palegoldenrod palegreen paleturquoise palevioletred papayawhip peachpuff peru pink plum powderblue purple ' +
  'rebeccapurple red rosybrown royalblue saddlebrown salmon sandybrown seagreen seashell sienna silver skyblue ' +
  'slateblue slategray slategrey snow springgreen steelblue tan teal thistle tomato turquoise violet wheat white ' +
  'whitesmoke yellow yellowgreen transparent'
).split(' '))

function isRgbComponent (text: string): boolean {
  const match = /^(\d+(?:\.\d+)?|\.\d+)(%?)$/.exec(text)
  if (match === null) return false
  const n = Number(match[1])
  return match[2] === '%' ? n <= 100 : n <= 255
}

function isAlpha (text: string): boolean {
  const match = /^(\d+(?:\.\d+)?|\.\d+)(%?)$/.exec(text)
  if (match === null) return false
  const n = Number(match[1])
  return match[2] === '%' ? n <= 100 : n <= 1
}

function isRgb (text: string): boolean {
  const match = /^rgba?\(([^()]*)\)$/i.exec(text)
  if (match === null) return false
  const inner = (match[1] ?? '').trim()
  let channels: string[]
  let alpha: string | undefined
  if (inner.includes(',')) {
    const parts = inner.split(',').map((part) => part.trim())
    if (parts.length !== 3 && parts.length !== 4) return false
    channels = parts.slice(0, 3)
    alpha = parts[3]
  } else {
    const [colour, rest, extra] = inner.split('/').map((part) => part.trim())
    if (extra !== undefined || colour === undefined) return false
    channels = colour.split(/\s+/)
    if (channels.length !== 3) return false
    alpha = rest
  }
  return channels.every(isRgbComponent) && (alpha === undefined || isAlpha(alpha))
}

function isGradient (text: string): boolean {
  const match = /^(linear|radial)-gradient\((.*)\)$/is.exec(text)
  if (match === null) return false
  const inner = match[2] ?? ''
  if (inner.trim() === '' || !/^[a-z0-9#%.,()\s+\-/]*$/i.test(inner)) return false
  let depth = 0
  for (const char of inner) {
    if (char === '(') depth++
    if (char === ')') depth--
    if (depth < 0) return false
  }
  return depth === 0
}

function parseOverlayBackground (value: Prim): string {
  const param = 'screenshot.overlay.background'
  const hint = 'It must be a hex, rgb()/rgba() or named colour, a linear-/radial-gradient(), or an http(s) image URL.'
  if (typeof value !== 'string') invalid('EINVALOVERLAYBG', param, value, hint)
  const text = value.trim()
  const lower = text.toLowerCase()
  if (/^#(?:[0-9a-f]{3}|[0-9a-f]{4}|[0-9a-f]{6}|[0-9a-f]{8})$/i.test(text)) return lower
  if (NAMED_COLORS.has(lower)) return lower
  if (isRgb(text)) return lower.replace(/\s+/g, ' ')
  if (isGradient(text)) return text
  if (/^https?:\/\//i.test(text)) {
    const href = toHttpUrl(text)
    if (href !== undefined) return href
  }
  invalid('EINVALOVERLAYBG', param, value, hint)
}

export function readScreenshot (given: Node | undefined, { root }: ReadInput): ScreenshotOptions | false {
  if (switchState(given, 'screenshot') !== 'on') return false
  const node = withAliases(root, given, SCREENSHOT_LEGACY)
  const kid = (name: SubKey<typeof SCREENSHOT_SHAPE>): Node | undefined => sub(node, SCREENSHOT_SHAPE, name)

  const animated = scalar(kid('animated'), 'screenshot.animated')
  if (animated !== undefined && toBool(animated, 'screenshot.animated', true)) {
    fail('EINVALQUERY', 'screenshot.animated', 'The `screenshot.animated` option is not supported.')
  }
  const type = enumValue<ScreenshotType>(kid('type'), 'screenshot.type', ['png', 'jpeg', 'webp'], 'png', { jpg: 'jpeg' })
  const quality = numberIn(kid('quality'), 'screenshot.quality', 0, 100, DEFAULT_SCREENSHOT_QUALITY, true)
  const element = optionalString(kid('element'), 'screenshot.element')
  const fullPage = bool(kid('fullPage'), 'screenshot.fullPage', false)
  const omitBackground = bool(kid('omitBackground'), 'screenshot.omitBackground', false)
  const optimizeForSpeed = bool(kid('optimizeForSpeed'), 'screenshot.optimizeForSpeed', false)

  const overlayNode = objectNode(kid('overlay'), 'screenshot.overlay')
  const overlay: ScreenshotOptions['overlay'] = {}
  if (overlayNode !== undefined) {
    const browser = scalar(sub(overlayNode, OVERLAY_SHAPE, 'browser'), 'screenshot.overlay.browser')
    if (browser !== undefined) {
      overlay.browser = enumValue<'light' | 'dark'>(sub(overlayNode, OVERLAY_SHAPE, 'browser'), 'screenshot.overlay.browser', ['light', 'dark'], 'light')
    }
    const background = scalar(sub(overlayNode, OVERLAY_SHAPE, 'background'), 'screenshot.overlay.background', 'EINVALOVERLAYBG')
    if (background !== undefined) overlay.background = parseOverlayBackground(background)
  }

  let codeScheme = DEFAULT_CODE_SCHEME
  const scheme = str(kid('codeScheme'), 'screenshot.codeScheme')
  if (scheme !== undefined) {
    const text = scheme.trim()
    const resolved = /^https?:\/\//i.test(text) ? toHttpUrl(text) : resolveCodeScheme(text)
    if (resolved === undefined) {
      invalid('EINVALQUERY', 'screenshot.codeScheme', scheme, 'It must be a prism-themes id (such as `atom-dark`) or an absolute http(s) CSS URL.')
    }
    codeScheme = resolved
  }

  const out: ScreenshotOptions = {
    type,
    fullPage: element === undefined ? fullPage : false,
    omitBackground: type === 'jpeg' ? false : omitBackground,
    overlay,
    codeScheme
  }
  if (type !== 'png') out.quality = quality
  if (type === 'png' && optimizeForSpeed) out.optimizeForSpeed = true
  if (element !== undefined) out.element = element
  return out
}

// --- pdf (§3.2)

const PAGE_RANGE_RE = /^(?:\d+|\d+-\d*|-\d+)$/

function normalizePageRanges (value: string | undefined): string | undefined {
  if (value === undefined) return undefined
  const text = value.replace(/\s+/g, '')
  if (text === '') return undefined
  const hint = 'Use page numbers and ranges such as `1-5, 8, 11-13` or `5-`.'
  for (const part of text.split(',')) {
    if (!PAGE_RANGE_RE.test(part)) invalid('EINVALQUERY', 'pdf.pageRanges', value, hint)
    const [from, to] = part.split('-')
    if (from !== undefined && from !== '' && Number(from) < 1) invalid('EINVALQUERY', 'pdf.pageRanges', value, hint)
    if (to !== undefined && to !== '' && (Number(to) < 1 || (from !== undefined && from !== '' && Number(from) > Number(to)))) {
      invalid('EINVALQUERY', 'pdf.pageRanges', value, hint)
    }
  }
  return text
}

function length (node: Node | undefined, param: string, positive: boolean): number | undefined {
  return lengthOf(scalar(node, param), param, positive)
}

function lengthOf (value: Prim | undefined, param: string, positive: boolean): number | undefined {
  if (value === undefined) return undefined
  const px = parseCssLength(value)
  if (px === undefined || (positive && px <= 0)) {
    invalid('EINVALQUERY', param, value, 'It must be a CSS length: a number with `px`, `in`, `cm` or `mm` (a bare number is px).')
  }
  return px
}

function parseMargin (node: Node | undefined): PdfMargin {
  const all = parseCssLength(DEFAULT_PDF_MARGIN) ?? 0
  if (node === undefined) return { top: all, right: all, bottom: all, left: all }
  if (node.self?.kind === 'struct' && node.self.array) invalid('EINVALQUERY', 'pdf.margin', '[…]', 'It must be a CSS length or an object of sides.')
  const base = node.self?.kind === 'value' ? lengthOf(node.self.value, 'pdf.margin', false) ?? 0 : 0
  const side = (name: keyof PdfMargin): number => length(sub(node, MARGIN_SHAPE, name), `pdf.margin.${name}`, false) ?? base
  return { top: side('top'), right: side('right'), bottom: side('bottom'), left: side('left') }
}

export function readPdf (given: Node | undefined, { root }: ReadInput): PdfOptions | false {
  if (switchState(given, 'pdf') !== 'on') return false
  const node = withAliases(root, given, PDF_LEGACY)
  const kid = (name: SubKey<typeof PDF_SHAPE>): Node | undefined => sub(node, PDF_SHAPE, name)

  const format = enumValue<PaperFormat>(kid('format'), 'pdf.format', PAPER_FORMATS, 'A4')
  const width = length(kid('width'), 'pdf.width', true)
  const height = length(kid('height'), 'pdf.height', true)
  const out: PdfOptions = {
    margin: parseMargin(kid('margin')),
    scale: numberIn(kid('scale'), 'pdf.scale', 0.1, 2, DEFAULT_PDF_SCALE, false),
    landscape: bool(kid('landscape'), 'pdf.landscape', false),
    printBackground: bool(kid('printBackground'), 'pdf.printBackground', true)
  }
  if (width === undefined && height === undefined) {
    out.format = format
  } else {
    const paper = PAPER_SIZES_IN[format]
    out.width = width ?? Math.round(paper.width * 96 * 10_000) / 10_000
    out.height = height ?? Math.round(paper.height * 96 * 10_000) / 10_000
  }
  assertRoomOnPage(out)
  const pageRanges = normalizePageRanges(str(kid('pageRanges'), 'pdf.pageRanges'))
  if (pageRanges !== undefined) out.pageRanges = pageRanges
  return out
}

/** Margins that leave no printable area are refused here: Chromium would fail the print (a 500 before). */
function assertRoomOnPage (pdf: PdfOptions): void {
  const paper = pdf.format === undefined
    ? { width: pdf.width ?? 0, height: pdf.height ?? 0 }
    : { width: PAPER_SIZES_IN[pdf.format].width * 96, height: PAPER_SIZES_IN[pdf.format].height * 96 }
  const page = pdf.landscape ? { width: paper.height, height: paper.width } : paper
  const { top, right, bottom, left } = pdf.margin
  if (top + bottom >= page.height || left + right >= page.width) {
    const px = (n: number): string => `${Math.round(n)}px`
    fail('EINVALQUERY', 'pdf.margin', `The margins (${px(top)} ${px(right)} ${px(bottom)} ${px(left)}) leave no room on a ${px(page.width)} × ${px(page.height)} page.`)
  }
}
