// What a producer is: one output made from the loaded page inside the browser slot, after the page steps
// (docs/api.md §3.6: extraction, `evaluate`, `function` and capture). Producers run in the order of index.ts, each
// reading only its own part of the outputs group. Today they make files (screenshot, pdf), which the pipeline
// stores and describes as media objects once the slot is released.
import type { Page } from 'playwright-core'
import type { OutputOptions } from '../../schemas/option-groups.ts'
import type { Budget } from '../page/budget.ts'
import type { PageCdpSession } from '../page/cdp-session.ts'
import type { LoadedPage } from '../steps/index.ts'
import type { FileExt, FileKind } from '../../storage/index.ts'

// The kinds and extensions of generated files are storage's (they are part of its key grammar): one declaration.
export type { FileExt, FileKind } from '../../storage/index.ts'

/** A file made in the page, not yet stored. */
export interface GeneratedFile {
  body: Buffer
  /** The file extension, also the media object's `type`. */
  ext: FileExt
  contentType: string
  /** Media object members beyond url, type and sizes (a screenshot's width and height). */
  details: Readonly<Record<string, number>>
}

export interface ProducerContext {
  readonly page: Page
  readonly budget: Budget
  readonly loaded: LoadedPage
  /** The page's capture session (the lease keeps it). */
  readonly cdp: PageCdpSession
  /** Tallest screenshot in image pixels (MAX_FULLPAGE_HEIGHT). */
  readonly maxImageHeight: number
}

export interface Producer<S> {
  /** The `data` field it fills. */
  readonly field: FileKind
  /** Its settings from the outputs, or false when it is not asked for. */
  settings (outputs: Readonly<OutputOptions>): S | false
  produce (settings: S, context: ProducerContext): Promise<GeneratedFile>
}
