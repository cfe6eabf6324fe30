import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { Redis } from 'ioredis'
import pino from 'pino'
import { storeContract } from './store.contract.ts'
import { createMemoryStore } from '../../src/store/memory.ts'
import { createRedisStore } from '../../src/store/redis.ts'
import type { Store } from '../../src/store/index.ts'
import { startRedisNode } from '../helpers/redis-topology.ts'

storeContract('memory', async () => createMemoryStore({ maxEntries: 1000 }))
storeContract('redis', async () => createRedisStore({ connection: { kind: 'node', url: inject('redisUrl') } }, { log: pino({ level: 'silent' }) }))

describe('redis store: quota hits of one turn', () => {
  let node: Awaited<ReturnType<typeof startRedisNode>>
  let store: Store
  let admin: Redis
  beforeAll(async () => {
    node = await startRedisNode()
    store = createRedisStore({ connection: { kind: 'node', url: node.url } }, { log: pino({ level: 'silent' }) })
    admin = new Redis(node.url)
  })
  afterAll(async () => {
    await store.close()
    admin.disconnect()
    await node.close()
  })

  /** Script calls the server ran so far (EVALSHA, and EVAL when the script was not loaded yet). */
  async function scriptCalls (): Promise<number> {
    const stats = await admin.info('commandstats')
    return [...stats.matchAll(/^cmdstat_eval(?:sha)?:calls=(\d+)/gm)].reduce((sum, m) => sum + Number(m[1]), 0)
  }

  it('counts a burst of one counter in two script calls (the first hit, then the rest), each caller getting its own count', async () => {
    await store.hitWindow('warm', 1, 10_000)
    const before = await scriptCalls()
    const hits = await Promise.all(Array.from({ length: 30 }, async () => await store.hitWindow('burst', 20, 10_000)))
    expect(await scriptCalls() - before).toBe(2)
    expect(hits.filter(h => h.allowed).map(h => h.count)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1))
    expect(hits.slice(20).every(h => !h.allowed && h.count === 20)).toBe(true)
    expect(await admin.get('pagecast:burst')).toBe('20')
    const ttl = await admin.pttl('pagecast:burst')
    expect(ttl).toBeGreaterThan(9_000)
    // One window for all: the two calls' answers differ only by the time between them.
    expect(Math.max(...hits.map(h => h.resetAt)) - Math.min(...hits.map(h => h.resetAt))).toBeLessThan(1_000)
  })

  it('keeps counters apart, and counts later bursts on top', async () => {
    const before = await scriptCalls()
    const [a, b] = await Promise.all([
      Promise.all(Array.from({ length: 3 }, async () => await store.hitWindow('a', 4, 10_000))),
      Promise.all(Array.from({ length: 2 }, async () => await store.hitWindow('b', 4, 10_000)))
    ])
    expect(await scriptCalls() - before).toBe(4)
    expect(a.map(h => h.count)).toEqual([1, 2, 3])
    expect(b.map(h => h.count)).toEqual([1, 2])
    const later = await Promise.all(Array.from({ length: 3 }, async () => await store.hitWindow('a', 4, 10_000)))
    expect(later.map(h => [h.allowed, h.count])).toEqual([[true, 4], [false, 4], [false, 4]])
    expect(await scriptCalls() - before).toBe(6)
  })

  it('fails every caller of a batch when the call fails', async () => {
    await admin.set('pagecast:not-a-number', 'x')
    const results = await Promise.allSettled(Array.from({ length: 3 }, async () => await store.hitWindow('not-a-number', 4, 10_000)))
    expect(results.map(r => r.status)).toEqual(['rejected', 'rejected', 'rejected'])
  })
})
