// Reading a loaded page: everything whose cost the page decides (decoding, parsing, the metadata, `video`/`audio`
// discovery, the `data` rules, `insights.technologies`, oEmbed discovery), done once per computation on one parsed
// document. It runs in a worker thread (worker.ts), so a hostile page costs a worker its deadline, never the
// service its event loop; the task and its result are plain data, and every outbound request the readers make goes
// through the `probe` they were built with (in the worker, a bridge to the guarded client: probe-bridge.ts).
import type { MetadataExtractor } from '../metadata/extractor.ts'
import { classifyTarget } from '../metadata/extractor.ts'
import type { RuleRunner } from '../extract/index.ts'
import { parseTarget, parsedHtmlOf } from '../extract/index.ts'
import type { AvFinder, AvKind } from '../media/discover.ts'
import type { MetaField, PingOptions, Rule } from '../schemas/options.ts'
import type { Evaluated } from '../browser/producers/index.ts'
import { discoverOembed, type OembedEndpoint } from '../oembed/index.ts'
import { detectTechnologies, type Technology } from '../insights/detect.ts'
import { pageSignals, type PageGlobals } from '../insights/signals.ts'
import type { FingerprintSet } from '../insights/fingerprints.ts'

/** The page as loaded, and what to read from it. */
export interface PageReadTask {
  page: {
    /** The final URL. */
    url: string
    statusCode: number
    headers: Record<string, string>
    body: Uint8Array
    /** The browser's serialized DOM rather than the response itself. */
    rendered: boolean
    /** The attribute the rendered DOM's form fields carry their live values under (extract/document.ts). */
    valueMark?: string
  }
  /** MAX_HTML_BYTES. */
  maxHtmlBytes: number
  /** The metadata fields, when `meta` is on. */
  meta?: { fields: readonly MetaField[], ping: Pick<PingOptions, 'image' | 'logo'> }
  /** `video` / `audio`, when asked for. */
  av?: { kinds: readonly AvKind[], ping: Readonly<Record<AvKind, boolean>> }
  /** The `data` rules, with the values their `evaluate` got in the page. */
  rules?: {
    data: Readonly<Record<string, readonly Rule[]>>
    evaluated?: Readonly<Record<string, Evaluated>>
    ping: Readonly<PingOptions>
  }
  /** `insights.technologies`, with what the rendered page gave. */
  technologies?: { globals?: PageGlobals }
  /** Whether `iframe` wants the page's oEmbed discovery links. */
  oembed: boolean
}

export interface PageReadResult {
  /** The metadata, then `video`/`audio`, then the rules' fields (which override metadata fields of the same name). */
  data: Record<string, unknown>
  technologies?: Technology[]
  /** The page's oEmbed discovery links, in order (empty when the target is not HTML). */
  oembed?: OembedEndpoint[]
  /** ms spent on the rules. */
  rulesTime?: number
}

export interface PageReaders {
  metadata: MetadataExtractor
  av: AvFinder
  rules: RuleRunner
  fingerprints: () => FingerprintSet
}

/** Reads the page as the task asks, with the readers given; `signal` ends the probes. */
export async function readPage (task: PageReadTask, readers: PageReaders, signal: AbortSignal): Promise<PageReadResult> {
  const { page } = task
  const body = Buffer.from(page.body.buffer, page.body.byteOffset, page.body.byteLength)
  const document = parseTarget({
    url: page.url, headers: page.headers, body, rendered: page.rendered, ...(page.valueMark === undefined ? {} : { valueMark: page.valueMark })
  }, task.maxHtmlBytes)
  const html = document.kind === 'html' ? document : undefined
  const result: PageReadResult = { data: {} }

  if (task.meta !== undefined) {
    const parsed = parsedHtmlOf(document)
    result.data = await readers.metadata.extract({
      url: page.url,
      statusCode: page.statusCode,
      headers: page.headers,
      body,
      fields: task.meta.fields,
      ping: task.meta.ping,
      signal,
      ...(parsed === undefined ? {} : { document: parsed })
    })
  }
  if (task.av !== undefined) {
    const target = classifyTarget(page.headers, body)
    Object.assign(result.data, await readers.av.find({
      kinds: task.av.kinds,
      url: page.url,
      ...(html === undefined ? {} : { $: html.$ }),
      ...(target === 'video' || target === 'audio' ? { target } : {}),
      ping: task.av.ping,
      signal
    }))
  }
  if (task.rules !== undefined) {
    const t = performance.now()
    Object.assign(result.data, await readers.rules.run({
      data: task.rules.data, document, evaluated: task.rules.evaluated, ping: task.rules.ping, signal
    }))
    result.rulesTime = performance.now() - t
  }
  if (task.technologies !== undefined) {
    result.technologies = detectTechnologies(readers.fingerprints(), pageSignals({
      url: page.url,
      headers: page.headers,
      html: html?.source ?? '',
      ...(html === undefined ? {} : { $: html.$ }),
      ...(task.technologies.globals === undefined ? {} : { globals: task.technologies.globals })
    }))
  }
  if (task.oembed) result.oembed = html === undefined ? [] : discoverOembed(html.$, page.url)
  return result
}
