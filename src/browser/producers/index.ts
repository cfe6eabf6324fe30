// The producers, in the order they run once the page steps are done (docs/api.md §3.6). A new output made in the page
// is one entry here and one file.
import type { OutputOptions } from '../../schemas/option-groups.ts'
import type { FileKind, GeneratedFile, Producer, ProducerContext } from './producer.ts'
import { pdfProducer } from './pdf.ts'
import { screenshotProducer } from './screenshot.ts'

export type { FileExt, FileKind, GeneratedFile, Producer, ProducerContext } from './producer.ts'

export const PRODUCERS: ReadonlyArray<Producer<never>> = Object.freeze([
  screenshotProducer as Producer<never>,
  pdfProducer as Producer<never>
])

/** Runs the producers that are asked for, in order; their files by field, in that order. */
export async function runProducers (outputs: Readonly<OutputOptions>, context: ProducerContext): Promise<Partial<Record<FileKind, GeneratedFile>>> {
  const files: Partial<Record<FileKind, GeneratedFile>> = {}
  for (const producer of PRODUCERS) {
    const settings = producer.settings(outputs)
    if (settings === false) continue
    files[producer.field] = await producer.produce(settings, context)
  }
  return files
}
