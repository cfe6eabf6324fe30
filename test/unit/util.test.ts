// The small helpers of src/util, each the one copy of its concept.
import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { defaultPort, effectivePort, isHttpUrl, toHttpUrl } from '../../src/util/url.ts'
import { escapeHtml } from '../../src/util/html.ts'
import { sha256 } from '../../src/util/hash.ts'
import { deepFreeze } from '../../src/util/freeze.ts'
import prettyMs from 'pretty-ms'
import { pretty } from '../../src/http/timing.ts'
import { redactCredentials, redactUrl } from '../../src/logger.ts'

describe('url', () => {
  it('toHttpUrl: an http(s) URL with a host, resolved against a base, as its href', () => {
    expect(toHttpUrl(' https://Example.test/a b ')).toBe('https://example.test/a%20b')
    expect(toHttpUrl('/img.png', 'http://example.test/page/')).toBe('http://example.test/img.png')
    expect(toHttpUrl('javascript:alert(1)', 'http://example.test/')).toBeUndefined()
    expect(toHttpUrl('data:image/png;base64,AAAA')).toBeUndefined()
    expect(toHttpUrl('ftp://example.test/')).toBeUndefined()
    expect(toHttpUrl('not a url')).toBeUndefined()
  })

  it('isHttpUrl: written out as an http(s) URL, not inline source', () => {
    expect(isHttpUrl('https://cdn.test/lib.js')).toBe(true)
    expect(isHttpUrl('  HTTP://cdn.test/style.css ')).toBe(true)
    expect(isHttpUrl('http:cdn.test')).toBe(false)
    expect(isHttpUrl('document.body.dataset.x = "https://cdn.test"')).toBe(false)
    expect(isHttpUrl('body { color: red }')).toBe(false)
    expect(isHttpUrl('#ff0000')).toBe(false)
  })

  it('defaultPort and effectivePort', () => {
    expect([defaultPort('http:'), defaultPort('https:'), defaultPort('ws:'), defaultPort('wss:'), defaultPort('ftp:')])
      .toEqual([80, 443, 80, 443, undefined])
    expect(effectivePort(new URL('https://example.test/'))).toBe(443)
    expect(effectivePort(new URL('http://example.test:8080/'))).toBe(8080)
    expect(effectivePort(new URL('ftp://example.test/'))).toBeUndefined()
  })
})

describe('escapeHtml', () => {
  it('escapes the five characters that can end text or a quoted attribute', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe('&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;')
    expect(escapeHtml('plain text')).toBe('plain text')
  })
})

describe('sha256', () => {
  it('is the hex digest of the UTF-8 bytes', () => {
    expect(sha256('héllo')).toBe(createHash('sha256').update(Buffer.from('héllo', 'utf8')).digest('hex'))
    expect(sha256('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855')
  })
})

describe('deepFreeze', () => {
  it('freezes members, items and Map values, through cycles', () => {
    const inner = { n: 1 }
    const value: Record<string, unknown> = { list: [inner], map: new Map([['k', { m: 2 }]]) }
    value.self = value
    expect(deepFreeze(value)).toBe(value)
    expect(Object.isFrozen(value)).toBe(true)
    expect(Object.isFrozen(value.list)).toBe(true)
    expect(Object.isFrozen(inner)).toBe(true)
    expect(Object.isFrozen((value.map as Map<string, object>).get('k'))).toBe(true)
  })

  it('leaves primitives alone and does not walk into what is frozen already', () => {
    expect(deepFreeze(3)).toBe(3)
    expect(deepFreeze(null)).toBe(null)
    const open = { x: 1 }
    const sealed = Object.freeze({ open })
    deepFreeze({ sealed })
    expect(Object.isFrozen(open)).toBe(false)
  })
})

describe('pretty (x-response-time, x-fetch-time)', () => {
  it('writes what pretty-ms writes for the rounded milliseconds, its own way under a second', () => {
    for (let ms = 0; ms < 2500; ms += 0.25) expect(pretty(ms)).toBe(prettyMs(Math.round(ms)))
    expect(pretty(-3)).toBe('0ms')
    expect(pretty(999.4)).toBe('999ms')
    expect(pretty(999.5)).toBe('1s')
    expect(pretty(61_000)).toBe('1m 1s')
  })
})

describe('redactUrl (the access line)', () => {
  // Every pair split and checked: what redactUrl answers whether or not its quick test lets the URL through unsplit.
  const SECRET = /^(headers([._].*)?|proxy([._].*)?|signature)$/i
  const reference = (url: string): string => {
    const q = url.indexOf('?')
    if (q === -1) return url
    return `${url.slice(0, q)}?${url.slice(q + 1).split('&').map(pair => {
      const eq = pair.indexOf('=')
      const rawKey = eq === -1 ? pair : pair.slice(0, eq)
      let key = rawKey
      try { key = decodeURIComponent(rawKey.replace(/\+/g, ' ')) } catch {}
      return SECRET.test(key.trim()) && eq !== -1 ? `${rawKey}=[redacted]` : pair
    }).join('&')}`
  }

  it('redacts headers.*, proxy and a signed link\'s signature however they are spelled, and leaves every other pair as it is', () => {
    const urls = [
      '/?url=https%3A%2F%2Fa.test%2F&prerender=false&palette&pdf=true&ping=false',
      '/markdown?url=x&headers.cookie=a&proxy=http://u:p@h:1',
      '/?url=x&HEADERS_Cookie=a&Proxy=b&headers=c&proxy.x=d',
      '/?url=x&h%65aders.cookie=a&%70roxy=b&+proxy=c&%20headers.x=d&headers+=e&pro%78y=f',
      '/?url=x&headersx=a&proxyz=b&xheaders=c&head+ers=d&%ZZ=e&headers.a',
      '/markdown/https://a.test/?headers.cookie=a&q=1',
      '/?', '/', '/?&&=&headers.=1',
      '/?url=x&keyId=acme&expires=1795824000&signature=9f86d081884c7d659a2feaa0c55ad015',
      '/markdown?url=x&keyId=acme&SIGNATURE=ab&%73ignature=cd&signatures=ef'
    ]
    for (const url of urls) expect(redactUrl(url), url).toBe(reference(url))
    expect(redactUrl('/?url=x&h%65aders.cookie=a')).toBe('/?url=x&h%65aders.cookie=[redacted]')
    expect(redactUrl('/?url=x&prerender=false')).toBe('/?url=x&prerender=false')
    expect(redactUrl('/?url=x&keyId=acme&signature=9f86d0')).toBe('/?url=x&keyId=acme&signature=[redacted]')
  })
})

describe('redactCredentials and redactUrl (URL userinfo)', () => {
  it('redacts userinfo however the URL spells it, as the URL parser reads it', () => {
    expect(redactCredentials('http://alice:pw@host/x', true)).toBe('http://[redacted]@host/x')
    // The last @ before the authority's end ends the userinfo (the parser's reading).
    expect(redactCredentials('http://a@b:p w&x@host/', true)).toBe('http://[redacted]@host/')
    expect(redactCredentials('http:alice:pw@host', true)).toBe('http:[redacted]@host')
    expect(redactCredentials('http:\\\\alice:pw@host', true)).toBe('http:\\\\[redacted]@host')
    expect(redactCredentials('navigating to "http://alice:pw@host/x", waiting')).toBe('navigating to "http://[redacted]@host/x", waiting')
    // Nothing that is not a URL's userinfo.
    expect(redactCredentials('mail bob@example.com or see /files/a@b')).toBe('mail bob@example.com or see /files/a@b')
    expect(redactCredentials('http://host/path@x', true)).toBe('http://host/path@x')
  })

  it('redacts it in the access line: raw, percent-encoded, in the path form, and leaves other URLs as they are', () => {
    expect(redactUrl('/?url=http://u:p@h/&x=1')).toBe('/?url=http://[redacted]@h/&x=1')
    expect(redactUrl('/?url=http%3A%2F%2Fu%3Ap%40h%2F')).toBe(`/?url=${encodeURIComponent('http://[redacted]@h/')}`)
    expect(redactUrl('/markdown/http://u:p@h/x?y=1')).toBe('/markdown/http://[redacted]@h/x?y=1')
    expect(redactUrl('/markdown/http%3A%2F%2Fu%3Ap%40h%2Fx')).toBe('/markdown/http://[redacted]@h/x')
    expect(redactUrl('/?url=http://h/?q=a@b')).toBe('/?url=http://h/?q=a@b')
  })

  it('takes linear time on hostile text', () => {
    const hostile = 'a:'.repeat(200_000) + '@'
    const t = performance.now()
    redactCredentials(hostile)
    redactCredentials(hostile, true)
    redactUrl(`/?url=${hostile}`)
    // Generous: a quadratic pass over this would take minutes.
    expect(performance.now() - t).toBeLessThan(5000)
  })
})
