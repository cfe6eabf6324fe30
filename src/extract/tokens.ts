// `x-markdown-tokens` (docs/api.md §14): the tokens a Markdown body holds for a typical LLM tokenizer, counted with
// gpt-tokenizer's o200k_base encoding (the GPT-4o family's). The encoding (2.4 MB of ranks) is loaded on first use,
// once per process; counts are kept per body, so a cache hit does not count again.
import { LRUCache } from 'lru-cache'

type Counter = (text: string) => number

let counter: Promise<Counter> | undefined

/** Bodies larger than this are not kept (counting them again is rare; keeping them is costly). */
const MAX_KEPT_CHARS = 1024 * 1024
const counts = new LRUCache<string, number>({ maxSize: 32 * 1024 * 1024, sizeCalculation: (_count, text) => text.length })

async function loadCounter (): Promise<Counter> {
  const { countTokens } = await import('gpt-tokenizer/encoding/o200k_base')
  return (text) => countTokens(text)
}

/** The token count of `text` under o200k_base. */
export async function countTokens (text: string): Promise<number> {
  if (text === '') return 0
  const kept = counts.get(text)
  if (kept !== undefined) return kept
  counter ??= loadCounter()
  // A failed load is tried again on the next call.
  const count = (await counter.catch((err: unknown) => { counter = undefined; throw err }))(text)
  if (text.length <= MAX_KEPT_CHARS) counts.set(text, count)
  return count
}
