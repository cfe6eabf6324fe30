// Step: the emulated CSS media type (`mediaType`; `print` by default with `pdf`), applied once the page has loaded.
// `screen` for a page that is not printed needs no call: the pool clears the media emulation at the start of every
// job (emulation.ts's applyPageEmulation), and a page without one renders as a screen, so a screenshot job saves
// the round trip. Printing without emulation would use `print`, so a page that may be printed (`prints` not false)
// always gets the call.
import type { PageStep } from './step.ts'

export const mediaTypeStep: PageStep = {
  name: 'media-type',
  applies: (options) => options.mediaType !== 'screen' || options.prints !== false,
  async run ({ page, options }) {
    await page.emulateMedia({ media: options.mediaType })
  }
}
