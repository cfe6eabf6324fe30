// Issue 20, finding 4: the memos of parsed queries hold what a query makes (its options, a `function` source among
// them), so they are bounded by size as well as by count: a client sending distinct queries with large sources
// cannot make them hold gigabytes.
import { describe, expect, it } from 'vitest'
import { createQueries } from '../../src/query/index.ts'

const KiB = 1024

/** A query of about 3.5 KB, distinct by `n`, whose `function` source is 3 KB. */
function query (n: number): string {
  const source = `() => ${n} + ${'0'.repeat(3000)}`
  return `url=${encodeURIComponent(`https://example.com/${n}`)}&function=${encodeURIComponent(source)}`
}

describe('memos of parsed queries bounded by size', () => {
  it('the parsed-query memo lets the least recently used go once its bytes are spent', () => {
    const memo = createQueries({ maxTimeout: 28_000, maxBytes: 100 * KiB })
    for (let n = 0; n < 40; n++) memo.parse('pro', query(n), {})
    expect(memo.peek('pro', query(0), {})).toBeUndefined()
    expect(memo.peek('pro', query(39), {})?.options.function?.source).toContain('() => 39')
  })
})
