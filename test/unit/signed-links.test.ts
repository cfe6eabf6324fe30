// The signed-link check of docs/api.md §16 on its own (src/tenants/signed-links.ts): which links verify, and the part
// each refusal names. The request path (a real listener, Chromium, the cache) is test/integration/signed-links.test.ts.
import { createHmac } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { isSignedLink, signQuery, signatureOf, verifySignedLink } from '../../src/tenants/signed-links.ts'
import type { Tenant, TenantDirectory } from '../../src/tenants/types.ts'
import { AppError } from '../../src/errors.ts'
import { parseQuery } from '../../src/schemas/query.ts'
import { cacheKeyOf } from '../../src/cache/key.ts'

const tenants: Tenant[] = [
  { name: 'acme', plan: {}, signing: ['old-secret', 'new-secret'] },
  { name: 'no secrets', plan: {}, signing: [] }
]
const directory: TenantDirectory = {
  byKey: () => undefined,
  byName: (name) => tenants.find(t => t.name === name),
  size: tenants.length,
  close () {}
}
const NOW = Date.UTC(2026, 10, 27, 12)
const LATER = NOW / 1000 + 3600

function refusal (raw: string): { code: string, data: Record<string, unknown> } {
  try {
    verifySignedLink(raw, directory, NOW)
  } catch (err) {
    if (err instanceof AppError) return { code: err.code, data: err.data }
    throw err
  }
  throw new Error('the link verified')
}

describe('signed links', () => {
  it('signs the raw query before &signature= with HMAC-SHA256 in lower-case hex', () => {
    const link = signQuery('url=https%3A%2F%2Fexample.com&screenshot&embed=screenshot.url', 'acme', 'new-secret', LATER)
    const signed = `url=https%3A%2F%2Fexample.com&screenshot&embed=screenshot.url&keyId=acme&expires=${LATER}`
    const hex = createHmac('sha256', 'new-secret').update(signed).digest('hex')
    expect(link).toBe(`${signed}&signature=${hex}`)
    expect(signatureOf(signed, 'new-secret')).toBe(hex)
    expect(verifySignedLink(link, directory, NOW).name).toBe('acme')
  })

  it('accepts every secret of the tenant (a rotation) and no expiry', () => {
    for (const secret of ['old-secret', 'new-secret']) {
      expect(verifySignedLink(signQuery('url=https%3A%2F%2Fexample.com', 'acme', secret), directory, NOW).name).toBe('acme')
    }
  })

  it('refuses one changed byte, naming the signature', () => {
    const link = signQuery('url=https%3A%2F%2Fexample.com&screenshot', 'acme', 'new-secret', LATER)
    expect(refusal(link.replace('example', 'exbmple'))).toMatchObject({ code: 'ESIGNATURE', data: { signature: expect.any(String) } })
    const flipped = link.slice(0, -1) + (link.endsWith('0') ? '1' : '0')
    expect(refusal(flipped).data).toHaveProperty('signature')
    // An expiry moved later without re-signing is a signature that does not verify.
    expect(refusal(link.replace(`expires=${LATER}`, `expires=${LATER + 1}`)).data).toHaveProperty('signature')
    // Upper-case hex, a short signature, a signature that is not last.
    expect(refusal(link.replace(/[0-9a-f]{64}$/, (h) => h.toUpperCase())).data).toHaveProperty('signature')
    expect(refusal(link.slice(0, -2)).data).toHaveProperty('signature')
    expect(refusal(`${link}&meta=false`).data).toHaveProperty('signature')
    expect(refusal('url=https%3A%2F%2Fexample.com&keyId=acme').data).toHaveProperty('signature')
  })

  it('refuses a past expires, naming expires', () => {
    const link = signQuery('url=https%3A%2F%2Fexample.com', 'acme', 'new-secret', NOW / 1000 - 1)
    expect(refusal(link)).toMatchObject({ code: 'ESIGNATURE', data: { expires: expect.stringContaining('expired') } })
    expect(refusal(signQuery('url=x', 'acme', 'new-secret').replace('keyId=acme', 'keyId=acme&expires=soon').replace(/[0-9a-f]{64}$/, '')).data)
      .toHaveProperty('signature')
  })

  it('refuses an unknown keyId, a tenant without secrets and a misplaced keyId, naming keyId', () => {
    expect(refusal(signQuery('url=x', 'nobody', 'new-secret'))).toMatchObject({ code: 'ESIGNATURE', data: { keyId: expect.any(String) } })
    expect(refusal(signQuery('url=x', 'no secrets', 'anything')).data).toHaveProperty('keyId')
    const link = signQuery('url=x', 'acme', 'new-secret')
    expect(refusal(link.replace('url=x&keyId=acme', 'keyId=acme&url=x')).data).toHaveProperty('keyId')
  })

  it('tells a signed link from an ordinary query by its parameter names', () => {
    expect(isSignedLink('url=x&keyId=acme&signature=00')).toBe(true)
    expect(isSignedLink('keyId=acme')).toBe(true)
    expect(isSignedLink('url=x&data.keyId.selector=h1')).toBe(false)
    expect(isSignedLink('url=https%3A%2F%2Fx.com%2F%3FkeyId%3D1')).toBe(false)
  })

  it('keeps keyId, expires and signature out of the cache key and out of function arguments', () => {
    const ctx = { plan: 'pro' as const, headers: {}, maxTimeout: 28_000 }
    const base = 'url=https%3A%2F%2Fexample.com&screenshot&function=(%7Bv%7D)%3D%3Ev'
    const keys = [NOW / 1000 + 60, NOW / 1000 + 120].map((expires) => {
      const options = parseQuery(signQuery(base, 'acme', 'new-secret', expires), ctx)
      expect(options.args).toEqual({})
      return cacheKeyOf(options)
    })
    expect(keys[0]).toBe(keys[1])
    expect(keys[0]).toBe(cacheKeyOf(parseQuery(base, ctx)))
  })
})
