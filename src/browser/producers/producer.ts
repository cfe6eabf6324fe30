// What a producer is: one output made from the loaded page inside the browser slot, after the page steps
// (docs/api.md §3.6: extraction, `evaluate`, `function` and capture). Producers run in the order of index.ts, each
// reading only its own part of the outputs group. A file producer makes a file (screenshot, pdf), which the pipeline
// stores and describes as media objects once the slot is released; a value producer returns a value computed in the
// page (the results of `data` rules' `evaluate`, of `function`), which the pipeline reads after the slot is released.
import type { BrowserContext, BrowserContextOptions, Page } from 'playwright-core'
import type { OutputOptions } from '../../schemas/option-groups.ts'
import type { Budget } from '../page/budget.ts'
import type { PageCdpSession } from '../page/cdp-session.ts'
import type { LoadedPage } from '../steps/index.ts'
import type { FileExt, FileKind } from '../../storage/index.ts'
import type { PageGlobals } from '../../insights/signals.ts'

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
  /** The address the request asked for (`url`), before any redirect. */
  readonly url: string
  readonly page: Page
  readonly budget: Budget
  readonly loaded: LoadedPage
  /** The page's capture session (the lease keeps it). */
  readonly cdp: PageCdpSession
  /** Tallest screenshot in image pixels (MAX_FULLPAGE_HEIGHT). */
  readonly maxImageHeight: number
  /** The most the values the page returns may be in all, UTF-8 bytes of JSON (MAX_RESPONSE_BYTES), checked in the page. */
  readonly maxValueBytes: number
  /** Marks the page as not to be reused after this job (user code ran in it). */
  readonly discardPage: () => void
  /**
   * Records a wait the producer gave up on (its time ran out and it went on with what it had), like the page steps'
   * (StepContext.gaveUp): the answer is then not cached.
   */
  readonly gaveUp: (wait: string) => void
  /** A context for a stage of the job (JobInfo.stageContext): the overlay is composed in one. */
  readonly stageContext: (options: BrowserContextOptions) => Promise<BrowserContext>
  /**
   * Where a producer adds the named parts of its time (ms, for server-timing), such as Chromium's own capture; the
   * rest of its time is counted under its field (runProducers).
   */
  readonly timings?: Record<string, number>
}

/** One `evaluate` source's outcome in the page: its value, or a throw at run time (docs/api.md §3.3: a miss). */
export type Evaluated = { ok: true, value: unknown } | { ok: false }

/** `data.function` (docs/api.md §3.4): the awaited value, or `{name, message}` of a throw or the time limit. */
export interface FunctionResult {
  isFulfilled: boolean
  isRejected: boolean
  value: unknown
}

/** What value producers give, by name. */
export interface ProducedValues {
  /** Each distinct `evaluate` source of the `data` rules, by source text. */
  evaluate: Readonly<Record<string, Evaluated>>
  /** The outcome of `function`. */
  function: FunctionResult
  /** What `insights.technologies` reads in the page: JS globals, DOM properties, the browser's cookies. */
  technologies: PageGlobals
}

export type ValueKind = keyof ProducedValues

export interface FileProducer<S> {
  readonly kind: 'file'
  /** The `data` field it fills. */
  readonly field: FileKind
  /** Its settings from the outputs, or false when it is not asked for. */
  settings (outputs: Readonly<OutputOptions>): S | false
  /** Whether asking for it makes the request rendered in the browser (pipeline/prerender.ts needsBrowser). */
  readonly needsBrowser: boolean
  produce (settings: S, context: ProducerContext): Promise<GeneratedFile>
}

export interface ValueProducer<S, K extends ValueKind = ValueKind> {
  readonly kind: 'value'
  /** The name its value is kept under. */
  readonly field: K
  settings (outputs: Readonly<OutputOptions>): S | false
  /** Whether asking for it makes the request rendered in the browser (pipeline/prerender.ts needsBrowser). */
  readonly needsBrowser: boolean
  produce (settings: S, context: ProducerContext): Promise<ProducedValues[K]>
}

export type Producer<S> = FileProducer<S> | ValueProducer<S>
