// The quota's hits, batched: while the store counts hits of one counter, the hits of that counter that arrive
// meanwhile wait and then go as one call of n hits (an atomic script that counts them as n calls of one would);
// each caller gets the answer its own call would have had. A lone request goes at once, as without batching; a
// burst from one client costs about one round trip per round trip's worth of requests instead of one per request,
// each of them waiting at most for the call in flight before its own.
import type { WindowHit } from './types.ts'

/** Counts `hits` hits at once; returns how many were allowed, the count after them and the window's ms left. */
export type CountHits = (key: string, limit: number, windowMs: number, hits: number) => Promise<[allowed: number, count: number, pttl: number]>

interface Waiting {
  resolve: (hit: WindowHit) => void
  reject: (err: unknown) => void
}

interface Counter {
  key: string
  limit: number
  windowMs: number
  /** Hits that arrived while a call was in flight. */
  waiting: Waiting[]
}

/** The answers of n single hits, in the order they were asked, from the answer of one call of n hits. */
export function spread (answer: [allowed: number, count: number, pttl: number], hits: number, now: number): WindowHit[] {
  const [allowed, after, pttl] = answer
  const resetAt = now + pttl
  const before = after - allowed
  return Array.from({ length: hits }, (_, i) => i < allowed
    ? { allowed: true, count: before + i + 1, resetAt }
    : { allowed: false, count: after, resetAt })
}

export function batchHits (count: CountHits): (key: string, limit: number, windowMs: number) => Promise<WindowHit> {
  /** Counters with a call in flight, by counter and terms (one listener asks with one limit and window). */
  const busy = new Map<string, Counter>()

  function send (id: string, counter: Counter, hits: Waiting[]): void {
    const settled = (): void => {
      const next = counter.waiting
      if (next.length === 0) {
        busy.delete(id)
        return
      }
      counter.waiting = []
      send(id, counter, next)
    }
    let call: ReturnType<CountHits>
    try {
      call = count(counter.key, counter.limit, counter.windowMs, hits.length)
    } catch (err) {
      // A counter that throws rather than rejects fails these callers, and does not keep the counter busy for ever.
      call = Promise.reject(err)
    }
    call.then((answer) => {
      const results = spread(answer, hits.length, Date.now())
      for (let i = 0; i < hits.length; i++) hits[i]!.resolve(results[i]!)
      settled()
    }, (err: unknown) => {
      for (const hit of hits) hit.reject(err)
      settled()
    })
  }

  return function hitWindow (key, limit, windowMs) {
    return new Promise<WindowHit>((resolve, reject) => {
      const id = `${limit} ${windowMs} ${key}`
      const counter = busy.get(id)
      if (counter !== undefined) {
        counter.waiting.push({ resolve, reject })
        return
      }
      const idle: Counter = { key, limit, windowMs, waiting: [] }
      busy.set(id, idle)
      send(id, idle, [{ resolve, reject }])
    })
  }
}
