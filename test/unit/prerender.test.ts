import { describe, expect, it } from 'vitest'
import { loadModeOf, looksClientRendered, needsBrowser } from '../../src/pipeline/prerender.ts'
import { parseQuery } from '../../src/schemas/query.ts'

const opts = (q: string) => parseQuery(`url=https%3A%2F%2Fexample.com%2F&${q}`, { plan: 'pro', headers: {}, maxTimeout: 28_000 })

describe('needsBrowser', () => {
  it('is false for a metadata-only request', () => {
    expect(needsBrowser(opts(''))).toBe(false)
    expect(needsBrowser(opts('meta.title&filter=title&waitUntil=auto'))).toBe(false)
  })

  it.each([
    'screenshot', 'pdf', 'function=()%20%3D%3E%201', 'insights', 'click=button', 'scroll=%23x', 'scripts=alert(1)',
    'modules=x', 'styles=body%7B%7D', 'waitForSelector=h1', 'waitForTimeout=1s', 'waitUntil=load',
    'data.x.evaluate=document.title'
  ])('is true with %s', q => {
    expect(needsBrowser(opts(q))).toBe(true)
  })

  it('insights without lighthouse does not need the browser', () => {
    expect(needsBrowser(opts('insights.lighthouse=false'))).toBe(false)
  })
})

describe('loadModeOf', () => {
  it('follows prerender unless the browser is needed', () => {
    expect(loadModeOf(opts(''))).toBe('auto')
    expect(loadModeOf(opts('prerender=false'))).toBe('fetch')
    expect(loadModeOf(opts('prerender=true'))).toBe('prerender')
    expect(loadModeOf(opts('prerender=false&screenshot'))).toBe('prerender')
  })
})

describe('looksClientRendered', () => {
  it('is false for a server-rendered article', () => {
    expect(looksClientRendered('<!doctype html><html><head><title>Hi</title></head><body><h1>Hello</h1><script>x()</script></body></html>')).toBe(false)
    expect(looksClientRendered('<html><head><meta property="og:title" content="x"></head><body></body></html>')).toBe(false)
    expect(looksClientRendered('<title>Icons</title><svg><font-face></font-face></svg><p>text</p>')).toBe(false)
  })

  it('is true for custom elements, script-only bodies and pages without any title', () => {
    expect(looksClientRendered('<title>App</title><body><my-app></my-app></body>')).toBe(true)
    expect(looksClientRendered('<title>App</title><body><div id="root"></div><script src="/app.js"></script></body>')).toBe(true)
    expect(looksClientRendered('<html><body><p>No title anywhere</p></body></html>')).toBe(true)
  })
})
