// The quota's batching (src/store/hit-batches.ts) against a counter of its own: when calls go, with how many hits,
// and what each caller gets. test/contract/store.test.ts runs it on a real redis-server.
import { describe, expect, it } from 'vitest'
import { batchHits, spread, type CountHits } from '../../src/store/hit-batches.ts'

/** A counter whose calls the test answers by hand. */
function handCounter (): { count: CountHits, calls: Array<{ hits: number, answer: (a: [number, number, number]) => void, fail: (err: Error) => void }> } {
  const calls: Array<{ hits: number, answer: (a: [number, number, number]) => void, fail: (err: Error) => void }> = []
  const count: CountHits = async (_key, _limit, _windowMs, hits) => await new Promise((resolve, reject) => { calls.push({ hits, answer: resolve, fail: reject }) })
  return { count, calls }
}

describe('quota hits in batches', () => {
  it('sends a lone hit at once, in the same turn', () => {
    const { count, calls } = handCounter()
    void batchHits(count)('k', 10, 1000)
    expect(calls.map(c => c.hits)).toEqual([1])
  })

  it('sends the hits that arrive while a call is in flight as one call once it is answered', async () => {
    const { count, calls } = handCounter()
    const hit = batchHits(count)
    const first = hit('k', 10, 1000)
    const rest = [hit('k', 10, 1000), hit('k', 10, 1000), hit('k', 10, 1000)]
    expect(calls.map(c => c.hits)).toEqual([1])
    calls[0]!.answer([1, 1, 1000])
    expect(await first).toMatchObject({ allowed: true, count: 1 })
    expect(calls.map(c => c.hits)).toEqual([1, 3])
    calls[1]!.answer([2, 3, 900])
    expect((await Promise.all(rest)).map(h => [h.allowed, h.count])).toEqual([[true, 2], [true, 3], [false, 3]])
  })

  it('keeps counters and terms apart, and starts over once a counter is idle', async () => {
    const { count, calls } = handCounter()
    const hit = batchHits(count)
    const a = hit('a', 10, 1000)
    const b = hit('b', 10, 1000)
    const other = hit('a', 5, 1000)
    expect(calls.map(c => c.hits)).toEqual([1, 1, 1])
    for (const c of calls) c.answer([1, 1, 1000])
    await Promise.all([a, b, other])
    const again = hit('a', 10, 1000)
    expect(calls.map(c => c.hits)).toEqual([1, 1, 1, 1])
    calls[3]!.answer([1, 2, 1000])
    expect(await again).toMatchObject({ allowed: true, count: 2 })
  })

  it('fails every caller of a failed call, and goes on with the next batch', async () => {
    const { count, calls } = handCounter()
    const hit = batchHits(count)
    const first = hit('k', 10, 1000)
    const waiting = [hit('k', 10, 1000), hit('k', 10, 1000)]
    calls[0]!.fail(new Error('down'))
    await expect(first).rejects.toThrow('down')
    calls[1]!.fail(new Error('still down'))
    const settled = await Promise.allSettled(waiting)
    expect(settled.map(r => r.status)).toEqual(['rejected', 'rejected'])
    const later = hit('k', 10, 1000)
    expect(calls.map(c => c.hits)).toEqual([1, 2, 1])
    calls[2]!.answer([1, 1, 1000])
    expect(await later).toMatchObject({ allowed: true, count: 1 })
  })

  it('spreads one answer of n hits as n answers of one, refusals last', () => {
    expect(spread([2, 7, 500], 4, 1_000)).toEqual([
      { allowed: true, count: 6, resetAt: 1_500 },
      { allowed: true, count: 7, resetAt: 1_500 },
      { allowed: false, count: 7, resetAt: 1_500 },
      { allowed: false, count: 7, resetAt: 1_500 }
    ])
  })
})

describe('a counter that throws', () => {
  it('fails its callers and leaves the counter free for the next hit', async () => {
    let calls = 0
    const hit = batchHits((_key, _limit, _windowMs, hits) => {
      calls++
      if (calls === 1) throw new Error('thrown')
      return Promise.resolve([hits, hits, 1000])
    })
    await expect(hit('k', 10, 1000)).rejects.toThrow('thrown')
    expect(await hit('k', 10, 1000)).toMatchObject({ allowed: true, count: 1 })
  })
})
