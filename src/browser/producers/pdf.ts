// The PDF producer (docs/api.md §3.2): Page.printToPDF with the media type already emulated, streamed back in chunks
// so that the 100 MiB cap is enforced while reading. 400 EPAGERANGE when a range starts past the last page; 400
// EPDFTOOLARGE when printing does not finish in the time left or the file passes 100 MiB.
import type { Page } from 'playwright-core'
import type { PdfOptions } from '../../schemas/options.ts'
import { PAPER_SIZES_IN } from '../../schemas/options.ts'
import { AppError } from '../../errors.ts'
import { throwIfAborted } from '../../util/abort.ts'
import type { Budget } from '../page/budget.ts'
import { PageCdpSession } from '../page/cdp-session.ts'
import { inTime } from './capture-session.ts'
import type { FileProducer } from './producer.ts'

/** Largest PDF produced. */
export const MAX_PDF_BYTES = 100 * 1024 * 1024

export interface Pdf {
  body: Buffer
  pages: number
}

const CSS_PX_PER_INCH = 96

/** Page objects in a PDF: `/Type /Page` dictionaries (not `/Pages`). Chromium writes them uncompressed. */
export function countPdfPages (body: Buffer): number {
  let count = 0
  const type = Buffer.from('/Type')
  const page = Buffer.from('/Page')
  for (let at = body.indexOf(type); at !== -1; at = body.indexOf(type, at + type.length)) {
    let i = at + type.length
    while (i < body.length && (body[i] === 0x20 || body[i] === 0x0a || body[i] === 0x0d || body[i] === 0x09)) i++
    if (!body.subarray(i, i + page.length).equals(page)) continue
    const next = body[i + page.length]
    // A name ends at whitespace or a delimiter; `/Pages` (or any longer name) is something else.
    if (next === undefined || !/[A-Za-z0-9_.#-]/.test(String.fromCharCode(next))) count++
  }
  return count
}

interface PageRange { from: number, to: number }

/** `1-5,8,11-13`, `5-`, `-3` as inclusive ranges (open ends are 1 and Infinity). */
export function parsePageRanges (text: string): PageRange[] {
  const ranges: PageRange[] = []
  for (const part of text.split(',')) {
    const trimmed = part.trim()
    if (trimmed === '') continue
    const [from, to] = trimmed.includes('-') ? trimmed.split('-') : [trimmed, trimmed]
    ranges.push({
      from: from === undefined || from === '' ? 1 : Number(from),
      to: to === undefined || to === '' ? Number.POSITIVE_INFINITY : Number(to)
    })
  }
  return ranges
}

/** How many distinct pages `ranges` select from a document of `total` pages. */
function selectedPages (ranges: PageRange[], total: number): number {
  const pages = new Set<number>()
  for (const { from, to } of ranges) {
    for (let p = Math.max(1, from); p <= Math.min(to, total); p++) pages.add(p)
  }
  return pages.size
}

/**
 * Whether a range starts past the last page, knowing only that Chromium printed `printed` pages for `ranges`
 * (it drops such ranges silently when another one is valid). With N pages Chromium prints selected(N) pages, which
 * grows with N, and adds the page `s` of the latest start once N ≥ s; so a range starts past the end exactly when
 * printed ≤ selected(s − 1).
 */
export function startsPastEnd (ranges: PageRange[], printed: number): boolean {
  if (ranges.length === 0) return false
  const latest = Math.max(...ranges.map(r => r.from))
  return printed <= selectedPages(ranges, latest - 1)
}

function pdfTooLarge (reason: string, cause?: unknown): AppError {
  return new AppError('EPDFTOOLARGE', { data: { pdf: reason }, ...(cause === undefined ? {} : { cause }) })
}

function pageRangeError (pageRanges: string, cause?: unknown): AppError {
  return new AppError('EPAGERANGE', {
    data: { 'pdf.pageRanges': `The range \`${pageRanges}\` starts past the last page of the document.` },
    ...(cause === undefined ? {} : { cause })
  })
}

/** Page.printToPDF parameters (lengths in inches). */
export interface PrintParameters {
  landscape: boolean
  printBackground: boolean
  scale: number
  paperWidth: number
  paperHeight: number
  marginTop: number
  marginRight: number
  marginBottom: number
  marginLeft: number
  pageRanges: string
  preferCSSPageSize: boolean
  displayHeaderFooter: boolean
  generateTaggedPDF: boolean
  generateDocumentOutline: boolean
  transferMode: 'ReturnAsStream'
}

/** Chromium reads page numbers as 32-bit ints and calls a larger one a syntax error. */
const MAX_PAGE_NUMBER = 2_147_483_647

/**
 * `pageRanges` as Chromium reads it: a page number past its int range means the same as the largest one (a page past
 * any real document), so `1-99999999999` prints to the end and `99999999999` starts past the last page (EPAGERANGE).
 */
export function chromiumPageRanges (pageRanges: string): string {
  return pageRanges.replace(/\d+/g, (digits) => {
    const trimmed = digits.replace(/^0+(?=\d)/, '')
    return trimmed.length > 10 || Number(trimmed) > MAX_PAGE_NUMBER ? String(MAX_PAGE_NUMBER) : digits
  })
}

/** The Page.printToPDF parameters for `pdf`. */
export function printParameters (pdf: PdfOptions): PrintParameters {
  const paper = pdf.format !== undefined
    ? PAPER_SIZES_IN[pdf.format]
    : { width: (pdf.width ?? 794) / CSS_PX_PER_INCH, height: (pdf.height ?? 1123) / CSS_PX_PER_INCH }
  return {
    landscape: pdf.landscape,
    printBackground: pdf.printBackground,
    scale: pdf.scale,
    paperWidth: paper.width,
    paperHeight: paper.height,
    marginTop: pdf.margin.top / CSS_PX_PER_INCH,
    marginRight: pdf.margin.right / CSS_PX_PER_INCH,
    marginBottom: pdf.margin.bottom / CSS_PX_PER_INCH,
    marginLeft: pdf.margin.left / CSS_PX_PER_INCH,
    pageRanges: chromiumPageRanges(pdf.pageRanges ?? ''),
    preferCSSPageSize: false,
    displayHeaderFooter: false,
    generateTaggedPDF: false,
    generateDocumentOutline: false,
    transferMode: 'ReturnAsStream'
  }
}

const READ_CHUNK = 4 * 1024 * 1024

/**
 * Prints the page (docs/api.md §3.2 `pdf`) with the media type already emulated. 400 EPAGERANGE when a range starts past
 * the last page; 400 EPDFTOOLARGE when printing does not finish in the time left or the file passes 100 MiB. `cdp` is
 * the page's capture session (a pooled page's comes with JobInfo); without one, a session of its own. `timings` gets
 * Chromium's printing (Page.printToPDF: layout and PDF generation) as `print` (ms); reading the stream back is not in it.
 */
export async function printPdf (
  page: Page, pdf: PdfOptions, budget: Budget, cdp: PageCdpSession = new PageCdpSession(page), timings?: Record<string, number>
): Promise<Pdf> {
  throwIfAborted(budget.signal)
  const timeout = (): AppError => pdfTooLarge('The PDF could not be generated in the time left.')
  const session = await cdp.get()
  {
    let stream: string
    try {
      const t = performance.now()
      const printed = await inTime(session.send('Page.printToPDF', printParameters(pdf)), budget, timeout)
      if (timings !== undefined) timings.print = performance.now() - t
      stream = printed.stream ?? ''
    } catch (err) {
      const message = err instanceof Error ? err.message : ''
      if (/Page range exceeds page count/i.test(message)) throw pageRangeError(pdf.pageRanges ?? '', err)
      if (/Page range is invalid/i.test(message)) {
        throw new AppError('EINVALQUERY', { data: { 'pdf.pageRanges': `The range \`${pdf.pageRanges ?? ''}\` is not valid.` }, cause: err })
      }
      throw err
    }
    const chunks: Buffer[] = []
    let size = 0
    try {
      for (;;) {
        const chunk = await inTime(session.send('IO.read', { handle: stream, size: READ_CHUNK }), budget, timeout)
        const bytes = Buffer.from(chunk.data, chunk.base64Encoded === true ? 'base64' : 'latin1')
        size += bytes.length
        if (size > MAX_PDF_BYTES) throw pdfTooLarge('The PDF would be larger than 100 MiB.')
        chunks.push(bytes)
        if (chunk.eof) break
      }
    } finally {
      await session.send('IO.close', { handle: stream }).catch(() => {})
    }
    const body = Buffer.concat(chunks)
    const pages = countPdfPages(body)
    if (pdf.pageRanges !== undefined && startsPastEnd(parsePageRanges(pdf.pageRanges), pages)) throw pageRangeError(pdf.pageRanges)
    return { body, pages }
  }
}

export const pdfProducer: FileProducer<PdfOptions> = {
  kind: 'file',
  field: 'pdf',
  needsBrowser: true,
  settings: (outputs) => outputs.pdf,
  async produce (pdf, { page, budget, cdp, timings }) {
    const printed = await printPdf(page, pdf, budget, cdp, timings)
    return { body: printed.body, ext: 'pdf', contentType: 'application/pdf', details: {} }
  }
}
