import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { createKeyVerifier } from '../../src/http/auth.ts'
import { quotaSubject } from '../../src/http/client-ip.ts'

describe('createKeyVerifier', () => {
  it('accepts registered plain keys and sha256: digests, nothing else', () => {
    const digest = createHash('sha256').update('hashed-key').digest('hex')
    const verify = createKeyVerifier(['plain-key', `sha256:${digest}`])
    expect(verify('plain-key')).toBe(true)
    expect(verify('hashed-key')).toBe(true)
    expect(verify(`sha256:${digest}`)).toBe(false)
    expect(verify('plain-key ')).toBe(false)
    expect(verify('')).toBe(false)
    expect(verify(undefined)).toBe(false)
  })

  it('accepts nothing when no key is registered', () => {
    expect(createKeyVerifier([])('anything')).toBe(false)
  })
})

describe('quotaSubject', () => {
  it('counts IPv4 per address and folds IPv4-mapped IPv6', () => {
    expect(quotaSubject('203.0.113.7')).toBe('v4:203.0.113.7')
    expect(quotaSubject('::ffff:203.0.113.7')).toBe('v4:203.0.113.7')
  })

  it('counts IPv6 per /64', () => {
    expect(quotaSubject('2001:db8:1:2:aaaa::1')).toBe(quotaSubject('2001:db8:1:2:ffff:1:2:3'))
    expect(quotaSubject('2001:db8:1:2::1')).not.toBe(quotaSubject('2001:db8:1:3::1'))
  })
})
