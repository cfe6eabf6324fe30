// The producers, in the order they run once the page steps are done (docs/api.md §3.6). A new output made in the page
// is one entry here and one file.
import type { OutputOptions } from '../../schemas/option-groups.ts'
import type { FileKind, GeneratedFile, ProducedValues, Producer, ProducerContext } from './producer.ts'
import { evaluateProducer } from './evaluate.ts'
import { functionProducer } from './function.ts'
import { pdfProducer } from './pdf.ts'
import { screenshotProducer } from './screenshot.ts'
import { technologiesProducer } from './technologies.ts'

export type { Evaluated, FileExt, FunctionResult, FileKind, GeneratedFile, ProducedValues, Producer, ProducerContext, ValueKind } from './producer.ts'

export const PRODUCERS: ReadonlyArray<Producer<never>> = Object.freeze([
  // The page as it loaded, before any user code (`evaluate`, `function`) changes its globals.
  technologiesProducer as Producer<never>,
  // docs/api.md §3.6: `evaluate` runs before the captures.
  evaluateProducer as Producer<never>,
  // then `function`, after the rules' own code and before the captures, which show what it left.
  functionProducer as Producer<never>,
  screenshotProducer as Producer<never>,
  pdfProducer as Producer<never>
])

export interface Produced {
  /** The file producers' files, by field, in the order they ran. */
  files: Partial<Record<FileKind, GeneratedFile>>
  /** The value producers' values, by name. */
  values: Partial<ProducedValues>
}

/** Runs the producers that are asked for, in order. */
export async function runProducers (outputs: Readonly<OutputOptions>, context: ProducerContext): Promise<Produced> {
  const produced: Produced = { files: {}, values: {} }
  for (const producer of PRODUCERS) {
    const settings = producer.settings(outputs)
    if (settings === false) continue
    if (producer.kind === 'file') produced.files[producer.field] = await producer.produce(settings, context)
    // Each value producer fills its own field (the pairing of field and value type is the ValueProducer's).
    else Object.assign(produced.values, { [producer.field]: await producer.produce(settings, context) })
  }
  return produced
}
