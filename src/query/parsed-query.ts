// What a parsed query is, and what it weighs in the memos that keep it (index.ts's, and templates.ts's templates):
// shared by the two, so neither imports the other back.
import type { ExtractOptions } from '../schemas/options.ts'

export interface ParsedQuery {
  options: Readonly<ExtractOptions>
  cacheKey: string
}

/** Queries longer than this are rare and would make large keys: they are parsed every time, and get no template. */
export const MAX_MEMO_QUERY = 4096

/** What the memos of parsed queries may hold in all (memoSize), by default. */
export const MEMO_MAX_BYTES = 64 * 1024 * 1024

/**
 * What one memoized query is counted as: its key (the raw query and forwarded header values) twice, for the key
 * and the options read from it, and the `function` source, which a short compressed query may decode to 64 KiB.
 */
export function memoSize (key: string, options: Readonly<ExtractOptions>): number {
  return 2 * key.length + (options.function?.source.length ?? 0) + 512
}
