// How the `actions` page step (browser/steps/actions.ts) captures the page mid-sequence: the producers' own
// screenshot and print, with Firecrawl's defaults for what an action leaves out (a PNG of the viewport; a Letter PDF
// at scale 1 with its backgrounds). Passed into the steps, which do not know the producers.
import type { ActionCapturer } from '../browser/steps/index.ts'
import type { PageCdpSession } from '../browser/page/cdp-session.ts'
import { takeScreenshot } from '../browser/producers/screenshot.ts'
import { printPdf } from '../browser/producers/pdf.ts'
import { DEFAULT_CODE_SCHEME } from '../schemas/code-schemes.ts'

const IMAGE_TYPES = { png: 'image/png', jpg: 'image/jpeg', webp: 'image/webp' } as const

/** The capturer of one job: its page's capture session, the tallest image allowed. */
export function actionCapturer (cdp: PageCdpSession, maxImageHeight: number, gaveUp: (wait: string) => void): ActionCapturer {
  return {
    async screenshot (page, { fullPage, quality }, budget) {
      const image = await takeScreenshot(page, {
        // A quality asks for a JPEG, as a screenshot format's does (docs/firecrawl.md).
        type: quality === undefined ? 'png' : 'jpeg',
        ...(quality === undefined ? {} : { quality }),
        fullPage,
        omitBackground: false,
        overlay: {},
        codeScheme: DEFAULT_CODE_SCHEME
      }, budget, { session: cdp, maxImageHeight, gaveUp })
      return { body: image.body, ext: image.type, contentType: IMAGE_TYPES[image.type], details: { width: image.width, height: image.height } }
    },
    async pdf (page, { format, landscape, scale }, budget) {
      const printed = await printPdf(page, {
        format: format ?? 'Letter',
        margin: { top: 0, right: 0, bottom: 0, left: 0 },
        scale: scale ?? 1,
        landscape: landscape ?? false,
        printBackground: true
      }, budget, cdp)
      return { body: printed.body, ext: 'pdf', contentType: 'application/pdf', details: {} }
    }
  }
}
