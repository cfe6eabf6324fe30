import { describe, expect, it } from 'vitest'
import { quotaSubject } from '../../src/http/client-ip.ts'

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
