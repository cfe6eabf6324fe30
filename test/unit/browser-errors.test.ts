// The one Playwright-to-code mapper (src/browser/errors.ts): every net::ERR_* it knows, per phase; timeouts;
// closed targets; AppErrors passed through.
import { describe, expect, it } from 'vitest'
import { AppError } from '../../src/errors.ts'
import type { ErrorCode } from '../../src/errors.ts'
import {
  BLOCKED_NET_ERRORS, BrowserError, CHROMIUM_MAX_REDIRECTS, TRANSIENT_NET_ERRORS, UNREACHABLE_NET_ERRORS,
  isRetryable, isTargetClosed, isTimeoutError, toBrowserError, tooManyRedirects
} from '../../src/browser/errors.ts'
import type { BrowserPhase } from '../../src/browser/errors.ts'

const URL_SHOWN = 'http://target.test/page'

/** How Playwright words a failed navigation. */
function gotoError (code: string, url = URL_SHOWN): Error {
  return new Error(`page.goto: net::ERR_${code} at ${url}\nCall log:\n  - navigating to "${url}", waiting until "commit"\n`)
}

function timeoutError (): Error {
  return Object.assign(new Error('page.goto: Timeout 1000ms exceeded.'), { name: 'TimeoutError' })
}

/** Each net error the mapper knows, as Chromium names it, with what a navigation failing with it means. */
const NET_ERRORS: Array<[code: string, expected: ErrorCode, retryable: boolean]> = [
  // A transient network failure: worth a retry (docs/api.md §3.6 `retry`).
  ['CONNECTION_RESET', 'EINVALURL', true],
  ['CONNECTION_CLOSED', 'EINVALURL', true],
  ['CONNECTION_ABORTED', 'EINVALURL', true],
  ['EMPTY_RESPONSE', 'EINVALURL', true],
  ['NETWORK_CHANGED', 'EINVALURL', true],
  ['HTTP2_PROTOCOL_ERROR', 'EINVALURL', true],
  ['HTTP2_PING_FAILED', 'EINVALURL', true],
  ['SOCKET_NOT_CONNECTED', 'EINVALURL', true],
  ['NETWORK_IO_SUSPENDED', 'EINVALURL', true],
  ['INCOMPLETE_CHUNKED_ENCODING', 'EINVALURL', true],
  ['CONTENT_LENGTH_MISMATCH', 'EINVALURL', true],
  // The target cannot be reached: the URL's fault, never retried.
  ['NAME_NOT_RESOLVED', 'EINVALURL', false],
  ['NAME_RESOLUTION_FAILED', 'EINVALURL', false],
  ['CONNECTION_REFUSED', 'EINVALURL', false],
  ['CONNECTION_FAILED', 'EINVALURL', false],
  ['ADDRESS_UNREACHABLE', 'EINVALURL', false],
  ['ADDRESS_INVALID', 'EINVALURL', false],
  ['INTERNET_DISCONNECTED', 'EINVALURL', false],
  ['TUNNEL_CONNECTION_FAILED', 'EINVALURL', false],
  ['PROXY_CONNECTION_FAILED', 'EINVALURL', false],
  ['TIMED_OUT', 'EINVALURL', false],
  ['CONNECTION_TIMED_OUT', 'EINVALURL', false],
  ['SSL_PROTOCOL_ERROR', 'EINVALURL', false],
  ['SSL_VERSION_OR_CIPHER_MISMATCH', 'EINVALURL', false],
  ['CERT_AUTHORITY_INVALID', 'EINVALURL', false],
  ['CERT_DATE_INVALID', 'EINVALURL', false],
  ['CERT_COMMON_NAME_INVALID', 'EINVALURL', false],
  ['BAD_SSL_CLIENT_AUTH_CERT', 'EINVALURL', false],
  ['INVALID_RESPONSE', 'EINVALURL', false],
  ['INVALID_HTTP_RESPONSE', 'EINVALURL', false],
  ['RESPONSE_HEADERS_TOO_BIG', 'EINVALURL', false],
  ['RESPONSE_HEADERS_MULTIPLE_LOCATION', 'EINVALURL', false],
  ['UNSAFE_REDIRECT', 'EINVALURL', false],
  ['UNSAFE_PORT', 'EINVALURL', false],
  ['INVALID_URL', 'EINVALURL', false],
  ['INVALID_REDIRECT', 'EINVALURL', false],
  ['DISALLOWED_URL_SCHEME', 'EINVALURL', false],
  ['UNKNOWN_URL_SCHEME', 'EINVALURL', false],
  ['HTTP_RESPONSE_CODE_FAILURE', 'EINVALURL', false],
  // Refused by the browser: not allowed.
  ['BLOCKED_BY_CLIENT', 'EFORBIDDENURL', false],
  ['BLOCKED_BY_ADMINISTRATOR', 'EFORBIDDENURL', false],
  ['ACCESS_DENIED', 'EFORBIDDENURL', false],
  ['FILE_NOT_FOUND', 'EFORBIDDENURL', false],
  // Past Chromium's own redirect limit.
  ['TOO_MANY_REDIRECTS', 'EMAXREDIRECTS', false],
  // The navigation was cut off under us (a crash, a closing page): a browser failure.
  ['ABORTED', 'EFATAL', true],
  // One the mapper does not know: a failure of ours, not retried.
  ['SOMETHING_NEW', 'EFATAL', false]
]

const NAVIGATING: BrowserPhase[] = ['navigation', 'job']
const OTHER_PHASES: BrowserPhase[] = ['launch', 'context', 'interaction', 'evaluate', 'capture']
const ALL_PHASES = [...NAVIGATING, ...OTHER_PHASES]

describe('net::ERR_* in a navigation', () => {
  it('lists a case above for every code (or code family) the mapper knows', () => {
    const known = NET_ERRORS.map(([code]) => code)
    for (const entry of [...TRANSIENT_NET_ERRORS, ...UNREACHABLE_NET_ERRORS, ...BLOCKED_NET_ERRORS]) {
      expect(known.some(code => new RegExp(`^(${entry})$`).test(code)), entry).toBe(true)
    }
  })

  for (const phase of NAVIGATING) {
    it.each(NET_ERRORS)(`${phase}: net::ERR_%s -> %s, retryable %s`, (code, expected, retryable) => {
      const mapped = toBrowserError(gotoError(code), phase)
      expect(mapped).toBeInstanceOf(BrowserError)
      expect(mapped.code).toBe(expected)
      expect(isRetryable(mapped)).toBe(retryable)
      expect((mapped as BrowserError).retryable).toBe(retryable)
      if (expected !== 'EFATAL') expect(String(mapped.data.url)).toContain(URL_SHOWN)
      expect(mapped.cause).toBeInstanceOf(Error)
    })
  }

  it('an empty response is retried like a reset connection', () => {
    const empty = toBrowserError(gotoError('EMPTY_RESPONSE'), 'navigation')
    const reset = toBrowserError(gotoError('CONNECTION_RESET'), 'navigation')
    expect([empty.code, isRetryable(empty)]).toEqual([reset.code, isRetryable(reset)])
    expect(isRetryable(empty)).toBe(true)
  })

  it('names the URL asked for when given, else the one in the message', () => {
    const asked = 'http://asked.test/'
    const named = toBrowserError(gotoError('CONNECTION_REFUSED'), 'navigation', { url: asked, maxRedirects: 10 })
    expect(named.data.url).toBe(`The URL \`${asked}\` cannot be reached.`)
    expect(toBrowserError(gotoError('CONNECTION_REFUSED'), 'job').data.url).toBe(`The URL \`${URL_SHOWN}\` cannot be reached.`)
    expect(toBrowserError(new Error('net::ERR_CONNECTION_REFUSED'), 'job').data.url).toBe('The URL cannot be reached.')
    expect(toBrowserError(gotoError('BLOCKED_BY_CLIENT'), 'navigation').data.url).toBe(`The URL \`${URL_SHOWN}\` is not allowed.`)
  })

  it('says how many redirects were too many: MAX_REDIRECTS, or Chromium\'s own limit when that is lower', () => {
    const err = gotoError('TOO_MANY_REDIRECTS')
    expect(toBrowserError(err, 'navigation', { url: URL_SHOWN, maxRedirects: 10 }).data.url)
      .toBe(`The URL \`${URL_SHOWN}\` redirected more than 10 times.`)
    expect(toBrowserError(err, 'navigation', { url: URL_SHOWN, maxRedirects: 50 }).data.url)
      .toBe(`The URL \`${URL_SHOWN}\` redirected more than ${CHROMIUM_MAX_REDIRECTS} times.`)
    expect(toBrowserError(err, 'job').data.url).toBe(`The URL \`${URL_SHOWN}\` redirected more than ${CHROMIUM_MAX_REDIRECTS} times.`)
    const counted = tooManyRedirects(URL_SHOWN, 3)
    expect(counted).toMatchObject({ code: 'EMAXREDIRECTS', status: 400, data: { url: `The URL \`${URL_SHOWN}\` redirected more than 3 times.` } })
    expect(isRetryable(counted)).toBe(false)
  })

  it('a download or an invalid URL is the URL\'s fault', () => {
    const download = toBrowserError(new Error(`page.goto: Download is starting\nCall log:\n  - navigating to "${URL_SHOWN}"`), 'navigation', { url: URL_SHOWN, maxRedirects: 10 })
    expect(download.code).toBe('EINVALURL')
    expect(download.data.url).toBe(`The URL \`${URL_SHOWN}\` is a download, not a page.`)
    const invalid = toBrowserError(new Error('page.goto: Protocol error (Page.navigate): Cannot navigate to invalid URL'), 'navigation')
    expect(invalid.code).toBe('EINVALURL')
    expect(isRetryable(invalid)).toBe(false)
  })
})

describe('net::ERR_* outside a navigation', () => {
  for (const phase of OTHER_PHASES) {
    it(`${phase}: never the target's fault`, () => {
      for (const [code] of NET_ERRORS) {
        const mapped = toBrowserError(gotoError(code), phase)
        expect(mapped.code, code).toBe('EFATAL')
        // Starting a browser or a context may work the next time; a failed step on a page does not.
        expect(isRetryable(mapped), code).toBe(phase === 'launch' || phase === 'context')
      }
    })
  }
})

describe('timeouts', () => {
  it.each(ALL_PHASES)('%s: a Playwright timeout is EBRWSRTIMEOUT, not retried', (phase) => {
    const mapped = toBrowserError(timeoutError(), phase)
    expect(mapped.code).toBe('EBRWSRTIMEOUT')
    expect(mapped.status).toBe(504)
    expect(isRetryable(mapped)).toBe(false)
  })

  it('a navigation that never committed says so about the URL asked for', () => {
    const mapped = toBrowserError(timeoutError(), 'navigation', { url: URL_SHOWN, maxRedirects: 10 })
    expect(mapped.data.url).toBe(`The URL \`${URL_SHOWN}\` did not start loading in time.`)
  })

  it('isTimeoutError goes by the error\'s name only', () => {
    expect(isTimeoutError(timeoutError())).toBe(true)
    expect(isTimeoutError(new Error('Timeout 1000ms exceeded.'))).toBe(false)
    expect(isTimeoutError('TimeoutError')).toBe(false)
  })
})

describe('closed targets and broken browsers', () => {
  const GONE = [
    'page.evaluate: Target page, context or browser has been closed',
    'page.goto: Target closed',
    'Browser has been closed',
    'Browser closed'
  ]
  const BROKEN = [
    'browserContext.newPage: Browser has disconnected',
    'Protocol error (Runtime.callFunctionOn): Session closed.',
    'Connection closed',
    'WebSocket is not open: readyState 3 (CLOSED)',
    'frame was detached',
    'locator.click: Frame has been detached.',
    'page.evaluate: Execution context was destroyed, most likely because of a navigation'
  ]
  /** The page's renderer died, the browser went on (issue 20: the page's doing, a 4xx). */
  const CRASHED = ['Target crashed', 'page.content: Page crashed', 'page.goto: Navigation failed because page crashed!']

  it.each(ALL_PHASES)('%s: EFATAL and worth a retry', (phase) => {
    for (const message of [...GONE, ...BROKEN]) {
      const mapped = toBrowserError(new Error(message), phase)
      expect(mapped.code, message).toBe('EFATAL')
      expect(isRetryable(mapped), message).toBe(true)
    }
  })

  it.each(ALL_PHASES)('%s: a crashed page is EPAGECRASH (400), worth a retry', (phase) => {
    for (const message of CRASHED) {
      const mapped = toBrowserError(new Error(message), phase)
      expect(mapped.code, message).toBe('EPAGECRASH')
      expect(mapped.status).toBe(400)
      expect(isRetryable(mapped), message).toBe(true)
    }
  })

  it('isTargetClosed: only a page, context or browser that is gone ends an optional step', () => {
    for (const message of [...GONE, ...CRASHED.slice(0, 2)]) expect(isTargetClosed(new Error(message)), message).toBe(true)
    // A click that navigated destroys the old execution context: the page is still there.
    expect(isTargetClosed(new Error('page.evaluate: Execution context was destroyed, most likely because of a navigation'))).toBe(false)
    expect(isTargetClosed(new Error('locator.click: Timeout 100ms exceeded.'))).toBe(false)
    expect(isTargetClosed('Target closed')).toBe(false)
  })

  it('anything else: EFATAL, retried only when the browser or a context would not start', () => {
    for (const phase of ALL_PHASES) {
      const mapped = toBrowserError(new Error('something else entirely'), phase)
      expect(mapped.code).toBe('EFATAL')
      expect(mapped).toBeInstanceOf(BrowserError)
      expect((mapped as BrowserError).phase).toBe(phase)
      expect(isRetryable(mapped)).toBe(phase === 'launch' || phase === 'context')
    }
    expect(toBrowserError(undefined, 'capture').code).toBe('EFATAL')
    expect(toBrowserError('a string', 'capture').code).toBe('EFATAL')
  })
})

describe('AppErrors', () => {
  it.each(ALL_PHASES)('%s: passes an AppError through as it is', (phase) => {
    const own = new AppError('EFORBIDDENURL', { data: { url: 'no' } })
    expect(toBrowserError(own, phase)).toBe(own)
    const validation = new AppError('EINVALQUERY')
    expect(toBrowserError(validation, phase)).toBe(validation)
    expect(isRetryable(validation)).toBe(false)
    const decided = new BrowserError('EFATAL', 'job', true)
    expect(toBrowserError(decided, phase)).toBe(decided)
    expect(isRetryable(decided)).toBe(true)
  })

  it('isRetryable: only a BrowserError that says so', () => {
    expect(isRetryable(new AppError('EFATAL'))).toBe(false)
    expect(isRetryable(new Error('net::ERR_CONNECTION_RESET'))).toBe(false)
    expect(isRetryable(new BrowserError('EFATAL', 'capture', false))).toBe(false)
  })
})
