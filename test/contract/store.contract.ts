// One contract, run against every Store backend.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Store } from '../../src/store/index.ts'

export function storeContract (name: string, make: () => Promise<Store>): void {
  describe(`store contract: ${name}`, () => {
    let store: Store
    const ns = `t${Math.random().toString(36).slice(2)}:`
    beforeAll(async () => { store = await make() })
    afterAll(async () => { await store.close() })

    it('gets what was set, and nothing for unknown keys', async () => {
      await store.set(`${ns}a`, 'value-a', 60_000)
      expect(await store.get(`${ns}a`)).toBe('value-a')
      expect(await store.get(`${ns}missing`)).toBeNull()
    })

    it('keeps unicode and newlines intact', async () => {
      const value = '{"a":1}\n{"title":"日本語 ✓ \\u0000"}'
      await store.set(`${ns}u`, value, 60_000)
      expect(await store.get(`${ns}u`)).toBe(value)
    })

    it('expires values after their ttl', async () => {
      await store.set(`${ns}short`, 'x', 60)
      expect(await store.get(`${ns}short`)).toBe('x')
      await new Promise(r => setTimeout(r, 120))
      expect(await store.get(`${ns}short`)).toBeNull()
    })

    it('deletes', async () => {
      await store.set(`${ns}d`, 'x', 60_000)
      await store.del(`${ns}d`)
      expect(await store.get(`${ns}d`)).toBeNull()
    })

    it('counts hits in a window that starts at the first hit, and refuses past the limit without counting', async () => {
      const before = Date.now()
      const first = await store.hitWindow(`${ns}q`, 3, 10_000)
      expect(first).toMatchObject({ allowed: true, count: 1 })
      expect(first.resetAt).toBeGreaterThanOrEqual(before + 9_900)
      expect(first.resetAt).toBeLessThanOrEqual(Date.now() + 10_100)
      expect((await store.hitWindow(`${ns}q`, 3, 10_000)).count).toBe(2)
      expect((await store.hitWindow(`${ns}q`, 3, 10_000))).toMatchObject({ allowed: true, count: 3 })
      const refused = await store.hitWindow(`${ns}q`, 3, 10_000)
      expect(refused).toMatchObject({ allowed: false, count: 3 })
      // The window does not slide with later hits.
      expect(Math.abs(refused.resetAt - first.resetAt)).toBeLessThan(200)
    })

    it('never lets concurrent hits past the limit', async () => {
      const results = await Promise.all(Array.from({ length: 40 }, async () => await store.hitWindow(`${ns}race`, 25, 10_000)))
      expect(results.filter(r => r.allowed)).toHaveLength(25)
      expect(Math.max(...results.map(r => r.count))).toBe(25)
    })

    it('starts a new window once the old one is over', async () => {
      await store.hitWindow(`${ns}w`, 1, 80)
      expect((await store.hitWindow(`${ns}w`, 1, 80)).allowed).toBe(false)
      await new Promise(r => setTimeout(r, 130))
      expect(await store.hitWindow(`${ns}w`, 1, 80)).toMatchObject({ allowed: true, count: 1 })
    })

    it('gives a lock to one caller at a time, releases only with the owner token, and lets it lapse', async () => {
      const token = await store.acquireLock(`${ns}lock`, 200)
      expect(token).toEqual(expect.any(String))
      expect(await store.acquireLock(`${ns}lock`, 200)).toBeNull()
      await store.releaseLock(`${ns}lock`, 'not-the-owner')
      expect(await store.acquireLock(`${ns}lock`, 200)).toBeNull()
      await store.releaseLock(`${ns}lock`, token!)
      const again = await store.acquireLock(`${ns}lock`, 60)
      expect(again).toEqual(expect.any(String))
      await new Promise(r => setTimeout(r, 110))
      expect(await store.acquireLock(`${ns}lock`, 60)).toEqual(expect.any(String))
    })

    it('renews a lock only for its owner, and not once it lapsed', async () => {
      const token = await store.acquireLock(`${ns}lease`, 300)
      expect(token).toEqual(expect.any(String))
      expect(await store.renewLock(`${ns}lease`, 'not-the-owner', 5_000)).toBe(false)
      expect(await store.renewLock(`${ns}lease`, token!, 1_500)).toBe(true)
      // Past the first lease, still held thanks to the renewal.
      await new Promise(r => setTimeout(r, 400))
      expect(await store.acquireLock(`${ns}lease`, 300)).toBeNull()
      // Past the renewed lease: gone, and not renewable any more.
      await new Promise(r => setTimeout(r, 1_300))
      expect(await store.renewLock(`${ns}lease`, token!, 1_500)).toBe(false)
      expect(await store.acquireLock(`${ns}lease`, 300)).toEqual(expect.any(String))
    })

    it('hands a contested lock to exactly one of many concurrent callers', async () => {
      const tokens = await Promise.all(Array.from({ length: 20 }, async () => await store.acquireLock(`${ns}contested`, 5_000)))
      expect(tokens.filter(t => t !== null)).toHaveLength(1)
    })

    it('reads a value or takes a lock in one step: a value takes no lock, no value takes it once', async () => {
      // The two keys share a hash tag, as an entry and its lock do (one Cluster slot).
      const key = `${ns}{rl}:value`
      const lock = `${ns}{rl}:lock`
      const taken = await store.readOrLock(key, lock, 5_000)
      expect(taken).toEqual({ value: null, token: expect.any(String) })
      expect(await store.readOrLock(key, lock, 5_000)).toEqual({ value: null, token: null })
      expect(await store.acquireLock(lock, 5_000)).toBeNull()
      // The lock is an ordinary one: released with its token, it can be taken again.
      await store.releaseLock(lock, (taken as { token: string }).token)
      await store.set(key, 'stored', 60_000)
      expect(await store.readOrLock(key, lock, 5_000)).toEqual({ value: 'stored' })
      // The value was found, so the lock is still free.
      const after = await store.acquireLock(lock, 5_000)
      expect(after).toEqual(expect.any(String))
      // A value is read while another holds the lock too.
      expect(await store.readOrLock(key, lock, 5_000)).toEqual({ value: 'stored' })
    })

    it('hands the lock of a missing value to exactly one of many concurrent readers, and lets it lapse', async () => {
      // The lease outlives the 20 calls even on a loaded machine (80 ms did not, with both cores busy).
      const results = await Promise.all(Array.from({ length: 20 }, async () => await store.readOrLock(`${ns}{rc}:value`, `${ns}{rc}:lock`, 1_500)))
      expect(results.filter(r => r.value === null && r.token !== null)).toHaveLength(1)
      expect(results.filter(r => r.value === null && r.token === null)).toHaveLength(19)
      await new Promise(r => setTimeout(r, 1_600))
      expect(await store.readOrLock(`${ns}{rc}:value`, `${ns}{rc}:lock`, 1_500)).toEqual({ value: null, token: expect.any(String) })
    })

    it('stores a value and releases a lock in one step, the lock only for its owner', async () => {
      const key = `${ns}{sr}:value`
      const lock = `${ns}{sr}:lock`
      const token = await store.acquireLock(lock, 5_000)
      await store.setAndRelease(key, 'first', 60_000, lock, 'not-the-owner')
      expect(await store.get(key)).toBe('first')
      expect(await store.acquireLock(lock, 5_000)).toBeNull()
      await store.setAndRelease(key, 'second', 60_000, lock, token!)
      expect(await store.get(key)).toBe('second')
      expect(await store.readOrLock(key, lock, 5_000)).toEqual({ value: 'second' })
      expect(await store.acquireLock(lock, 5_000)).toEqual(expect.any(String))
      await store.setAndRelease(`${ns}{sr}:short`, 'x', 60, lock, 'none')
      await new Promise(r => setTimeout(r, 120))
      expect(await store.get(`${ns}{sr}:short`)).toBeNull()
    })

    it('counts a tenant\'s day and month together, exactly, and counts neither when one is at its limit', async () => {
      const keys = (daily: number, monthly: number) => ({ dayKey: `${ns}{u}:d`, monthKey: `${ns}{u}:m`, daily, monthly, dayTtlMs: 60_000, monthTtlMs: 60_000 })
      const results = await Promise.all(Array.from({ length: 30 }, async () => await store.countUsage(keys(20, 100))))
      expect(results.filter(r => r.refused === undefined).map(r => r.day).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1))
      expect(results.filter(r => r.refused === 'daily')).toHaveLength(10)
      expect(await store.readCounts([`${ns}{u}:d`, `${ns}{u}:m`, `${ns}{u}:absent`])).toEqual([20, 20, 0])
      // The month refuses when it is the one spent; the day is then not counted either.
      expect(await store.countUsage(keys(0, 20))).toEqual({ refused: 'monthly', day: 20, month: 20 })
      expect(await store.countUsage(keys(0, 0))).toEqual({ day: 21, month: 21 })
    })

    it('leases concurrency slots: at most `limit` held, given back on release or when the lease lapses', async () => {
      const key = `${ns}{c}:slots`
      const taken = await Promise.all(['a', 'b', 'c', 'd'].map(async token => await store.takeSlot(key, token, 2, 60_000)))
      expect(taken.filter(Boolean)).toHaveLength(2)
      expect(await store.slotsHeld(key)).toBe(2)
      const holder = ['a', 'b', 'c', 'd'][taken.indexOf(true)]!
      expect(await store.renewSlot(key, holder, 60_000)).toBe(true)
      expect(await store.renewSlot(key, 'never-held', 60_000)).toBe(false)
      await store.releaseSlot(key, holder)
      expect(await store.slotsHeld(key)).toBe(1)
      expect(await store.takeSlot(key, 'e', 2, 60_000)).toBe(true)
      expect(await store.takeSlot(key, 'f', 2, 60_000)).toBe(false)

      // A holder that never releases (a crashed instance): its lease lapses and the slot is free again.
      const short = `${ns}{c}:short`
      expect(await store.takeSlot(short, 'crashed', 1, 150)).toBe(true)
      expect(await store.takeSlot(short, 'next', 1, 150)).toBe(false)
      await new Promise(resolve => setTimeout(resolve, 300))
      expect(await store.slotsHeld(short)).toBe(0)
      expect(await store.renewSlot(short, 'crashed', 150)).toBe(false)
      expect(await store.takeSlot(short, 'next', 1, 60_000)).toBe(true)
    })

    it('reports health', async () => {
      expect(await store.health()).toBe(true)
    })
  })
}
