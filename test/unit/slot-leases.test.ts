// Leased slots over the Store (src/store/slot-leases.ts), on the in-memory Store: the limit, a local release waking
// a waiter at once, another instance's release found by polling, giving up at a time, abort, and a crashed holder's
// lease lapsing.
import { describe, expect, it } from 'vitest'
import { createMemoryStore } from '../../src/store/memory.ts'
import { createSlotLeases } from '../../src/store/slot-leases.ts'

const forever = (): AbortSignal => new AbortController().signal

describe('slot leases', () => {
  it('holds `limit` slots; a release lets the next waiter take one', async () => {
    const store = createMemoryStore({ maxEntries: 10 })
    const leases = createSlotLeases(store)
    const a = await leases.acquire('k', 2, forever())
    await leases.acquire('k', 2, forever())
    let third = false
    const waiting = leases.acquire('k', 2, forever()).then((lease) => { third = true; return lease })
    // Long enough for several polls: still held.
    await new Promise((resolve) => setTimeout(resolve, 400))
    expect(third).toBe(false)
    expect(await store.slotsHeld('k')).toBe(2)
    a.release()
    a.release()
    const lease = await waiting
    expect(third).toBe(true)
    expect(await store.slotsHeld('k')).toBe(2)
    lease.release()
    leases.close()
  })

  it('finds a slot another instance released (no local wake-up) by polling', async () => {
    const store = createMemoryStore({ maxEntries: 10 })
    const one = createSlotLeases(store)
    const two = createSlotLeases(store)
    const held = await one.acquire('k', 1, forever())
    const waiting = two.acquire('k', 1, forever())
    await new Promise((resolve) => setTimeout(resolve, 100))
    held.release()
    const taken = await waiting
    expect(await store.slotsHeld('k')).toBe(1)
    taken.release()
    one.close()
    two.close()
  })

  it('gives up at its time (undefined), and rejects with the reason when its signal aborts', async () => {
    const store = createMemoryStore({ maxEntries: 10 })
    const leases = createSlotLeases(store)
    const held = await leases.acquire('k', 1, forever())
    expect(await leases.acquireBy('k', 1, forever(), Date.now() + 150)).toBeUndefined()
    const controller = new AbortController()
    const waiting = leases.acquire('k', 1, controller.signal)
    controller.abort(new Error('gone'))
    await expect(waiting).rejects.toThrow('gone')
    // The aborted waiter took nothing.
    expect(await store.slotsHeld('k')).toBe(1)
    held.release()
    leases.close()
  })

  it('renews a held lease; a holder that stops renewing (a crashed instance) loses it after the lease', async () => {
    const store = createMemoryStore({ maxEntries: 10 })
    const crashed = createSlotLeases(store, { leaseMs: 1200 })
    const live = createSlotLeases(store, { leaseMs: 1200 })
    const kept = await live.acquire('kept', 1, forever())
    await crashed.acquire('lost', 1, forever())
    crashed.close()
    await new Promise((resolve) => setTimeout(resolve, 3000))
    // Renewed every 400 ms: still held after more than two leases.
    expect(await store.slotsHeld('kept')).toBe(1)
    expect(await store.slotsHeld('lost')).toBe(0)
    expect(await live.acquireBy('lost', 1, forever(), Date.now() + 2000)).toBeDefined()
    kept.release()
    live.close()
  })
})
