// Step: the emulated CSS media type (`mediaType`; `print` by default with `pdf`), applied once the page has loaded.
import type { PageStep } from './step.ts'

export const mediaTypeStep: PageStep = {
  name: 'media-type',
  applies: () => true,
  async run ({ page, options }) {
    await page.emulateMedia({ media: options.mediaType })
  }
}
