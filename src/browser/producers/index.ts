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

/**
 * Runs the producers that are asked for, in order. `timings` gets every millisecond of them (for server-timing): the
 * parts a producer names (ProducerContext.timings: `capture`, `print`, ...), and the rest of its time under its field.
 */
export async function runProducers (outputs: Readonly<OutputOptions>, context: ProducerContext, timings: Record<string, number> = {}): Promise<Produced> {
  const produced: Produced = { files: {}, values: {} }
  const spent: Record<string, number> = {}
  for (const producer of PRODUCERS) {
    const settings = producer.settings(outputs)
    if (settings === false) continue
    const parts: Record<string, number> = {}
    const own = { ...context, timings: parts }
    const t = performance.now()
    if (producer.kind === 'file') produced.files[producer.field] = await producer.produce(settings, own)
    // Each value producer fills its own field (the pairing of field and value type is the ValueProducer's).
    else Object.assign(produced.values, { [producer.field]: await producer.produce(settings, own) })
    let named = 0
    for (const [name, ms] of Object.entries(parts)) {
      spent[name] = (spent[name] ?? 0) + ms
      named += ms
    }
    spent[producer.field] = performance.now() - t - named
  }
  // Like the page steps' entries, these are this run's (a retried render writes them again).
  Object.assign(timings, spent)
  return produced
}
