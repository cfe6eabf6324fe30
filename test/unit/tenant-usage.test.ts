// A plan without a daily or monthly limit refuses nothing, so its requests are counted in batches (src/tenants/
// limits.ts): many requests, a few store calls, and GET /usage still reads every one of them.
import pino from 'pino'
import { describe, expect, it } from 'vitest'
import { createMemoryStore } from '../../src/store/memory.ts'
import type { Store } from '../../src/store/types.ts'
import { createTenantLimits } from '../../src/tenants/limits.ts'
import type { Tenant } from '../../src/tenants/types.ts'

function countedStore (): { store: Store, calls: () => number } {
  const real = createMemoryStore({ maxEntries: 100 })
  let calls = 0
  const store = new Proxy(real, {
    get (target, name, receiver) {
      if (name !== 'countUsage') return Reflect.get(target, name, receiver)
      return async (...args: Parameters<Store['countUsage']>) => { calls++; return await target.countUsage(...args) }
    }
  })
  return { store, calls: () => calls }
}

const meter = { requested: 0, request () { this.requested++ }, browserSeconds () {} }

describe('usage of a plan without limits', () => {
  it('counts 500 requests in a few store calls; usage reads all 500 at once', async () => {
    const { store, calls } = countedStore()
    const limits = createTenantLimits({ store, log: pino({ level: 'silent' }), meter, failMode: 'open' })
    const tenant: Tenant = { name: 'acme', plan: {}, signing: [] }
    for (let i = 0; i < 500; i++) expect(await limits.count(tenant)).toEqual({})
    expect(calls()).toBeLessThan(5)
    const usage = await limits.usage(tenant)
    expect(usage.day.used).toBe(500)
    expect(usage.month.used).toBe(500)
    expect(meter.requested).toBe(500)
  })

  it('counts a plan with a daily limit one request at a time (it may refuse the next)', async () => {
    const { store, calls } = countedStore()
    const limits = createTenantLimits({ store, log: pino({ level: 'silent' }), meter, failMode: 'open' })
    const tenant: Tenant = { name: 'capped', plan: { daily: 3 }, signing: [] }
    for (let i = 0; i < 3; i++) await limits.count(tenant)
    expect(calls()).toBe(3)
    await expect(limits.count(tenant)).rejects.toMatchObject({ code: 'ERATE' })
  })
})
