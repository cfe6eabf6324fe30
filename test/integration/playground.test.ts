// The /docs playground in a real Chromium: a person fills the form, sees the request URL and curl line, runs it
// on the listener that served the page, and sees the JSON, the screenshot or the PDF. Everything stays on
// loopback: the page's own requests are checked, and the service may only reach the fixture server.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { build, type Built } from '../helpers/build.ts'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'
import { launchTestBrowser } from '../helpers/chromium.ts'

let fx: FixtureServer
let app: Built
let browser: Browser
let freeUrl: string
let proUrl: string
const contexts: BrowserContext[] = []
/** Requests the playground's pages tried to send off loopback (aborted). */
const outside: string[] = []
/** Console errors, CSP violations included. */
const consoleErrors: string[] = []

beforeAll(async () => {
  fx = await startFixtureServer()
  app = await build({ ALLOW_PRIVATE_HOSTS: fx.host, API_KEYS: 'play-key', BROWSER_CONCURRENCY: '1' })
  freeUrl = await app.free.listen({ port: 0, host: '127.0.0.1' })
  proUrl = await app.pro.listen({ port: 0, host: '127.0.0.1' })
  browser = await launchTestBrowser()
})

afterAll(async () => {
  for (const context of contexts) await context.close()
  await browser?.close()
  await app?.close()
  await fx?.close()
})

async function openDocs (base: string): Promise<Page> {
  const context = await browser.newContext()
  contexts.push(context)
  await context.route('**/*', async (route) => {
    const url = new URL(route.request().url())
    // The browser's own resources (its PDF viewer: chrome://, chrome-extension://) are not network requests.
    const network = /^(https?|wss?):$/.test(url.protocol)
    if (!network || url.hostname === '127.0.0.1') { await route.continue(); return }
    outside.push(url.href)
    await route.abort()
  })
  const page = await context.newPage()
  page.on('console', (message) => { if (message.type() === 'error') consoleErrors.push(message.text()) })
  await page.goto(`${base}/docs`)
  return page
}

const article = (): string => `${fx.origin}/article/`

describe('the /docs playground', () => {
  it('is served with a CSP that allows only this origin and the page\'s own inline code', async () => {
    const res = await fetch(`${freeUrl}/docs`)
    const csp = res.headers.get('content-security-policy') ?? ''
    expect(csp).toContain("default-src 'none'")
    expect(csp).toMatch(/script-src 'sha256-[A-Za-z0-9+/=]+'(;|$)/)
    expect(csp).toContain("connect-src 'self'")
    expect(await res.text()).not.toMatch(/(src|href)="(https?:)?\/\//)
  })

  it('shows the request URL and the curl line as the user types', async () => {
    const page = await openDocs(freeUrl)
    await page.fill('input[name="url"]', article())
    expect(await page.textContent('#req')).toBe(`${freeUrl}/?url=${article()}`)
    await page.selectOption('select[name="screenshot"]', 'true')
    await page.click('summary:text-is("screenshot.*")')
    await page.selectOption('select[name="screenshot.type"]', 'jpeg')
    await page.fill('input[name="embed"]', 'screenshot.url')
    const expected = `${freeUrl}/?url=${article()}&screenshot&screenshot.type=jpeg&embed=screenshot.url`
    expect(await page.textContent('#req')).toBe(expected)
    expect(await page.textContent('#curl')).toBe(`curl '${expected}'`)
    // Pro-only parameters are shown but cannot be sent from the free listener.
    expect(await page.isDisabled('input[name="ttl"]')).toBe(true)
    expect(await page.locator('#key').count()).toBe(0)
  })

  it('URL-encodes free text typed as other parameters, so the curl line is one argument that runs', async () => {
    const page = await openDocs(freeUrl)
    await page.fill('input[name="url"]', article())
    await page.selectOption('select[name="meta"]', 'false')
    // A selector with a space (and a `#`, which would cut the query off), an escape typed by hand, and a bare name.
    await page.fill('#extra', '&data.heading.selector=article h1.post-title&data.heading.attr=text&data.id.selector=#x&data.pct.selector=a%2Cb&force')
    const req = await page.textContent('#req') ?? ''
    expect(req).not.toMatch(/[\s#']/)
    const params = new URL(req).searchParams
    expect(params.get('data.heading.selector')).toBe('article h1.post-title')
    expect(params.get('data.id.selector')).toBe('#x')
    expect(params.get('data.pct.selector')).toBe('a,b')
    expect(params.get('force')).toBe('')
    expect(await page.textContent('#curl')).toBe(`curl '${req}'`)
    await page.click('button[type="submit"]')
    await page.waitForSelector('#result pre')
    expect(await page.textContent('#status')).toMatch(/^HTTP 200/)
    expect(JSON.parse(await page.textContent('#result pre') ?? '').data.heading).toBe('Shipping faster')
  })

  it('runs a metadata request and shows the answer as JSON', async () => {
    const page = await openDocs(freeUrl)
    await page.fill('input[name="url"]', article())
    await page.click('button[type="submit"]')
    await page.waitForSelector('#result pre')
    expect(await page.textContent('#status')).toMatch(/^HTTP 200 · application\/json/)
    const body = JSON.parse(await page.textContent('#result pre') ?? '') as { status: string, data: { title: string } }
    expect(body.status).toBe('success')
    expect(body.data.title).toBe('Shipping faster')
  })

  it('runs a screenshot with embed=screenshot.url and shows the image', async () => {
    const page = await openDocs(freeUrl)
    await page.fill('input[name="url"]', article())
    await page.selectOption('select[name="meta"]', 'false')
    await page.selectOption('select[name="screenshot"]', 'true')
    await page.fill('input[name="embed"]', 'screenshot.url')
    expect(await page.textContent('#req')).toBe(`${freeUrl}/?url=${article()}&meta=false&screenshot&embed=screenshot.url`)
    await page.click('button[type="submit"]')
    const img = await page.waitForSelector('#result img')
    await page.waitForFunction(() => {
      const shown = document.querySelector<HTMLImageElement>('#result img')
      return shown !== null && shown.complete && shown.naturalWidth > 0
    }, undefined, { timeout: 20_000 })
    expect(await img.evaluate((el) => (el as HTMLImageElement).naturalWidth)).toBeGreaterThan(0)
    expect(await page.textContent('#status')).toMatch(/^HTTP 200 · image\/png/)
  })

  it('runs a PDF with embed=pdf.url and embeds it', async () => {
    const page = await openDocs(freeUrl)
    await page.fill('input[name="url"]', article())
    await page.selectOption('select[name="meta"]', 'false')
    await page.click('summary:text-is("pdf.*")')
    await page.selectOption('select[name="pdf.format"]', 'A5')
    await page.fill('input[name="embed"]', 'pdf.url')
    await page.click('button[type="submit"]')
    const frame = await page.waitForSelector('#result iframe', { timeout: 20_000 })
    expect(await frame.getAttribute('src')).toMatch(/^blob:/)
    expect(await page.textContent('#status')).toMatch(/^HTTP 200 · application\/pdf/)
  })

  it('on the pro listener, sends the key without showing it', async () => {
    const page = await openDocs(proUrl)
    await page.fill('#key', 'play-key')
    await page.fill('input[name="url"]', article())
    await page.fill('input[name="ttl"]', '1h')
    const expected = `${proUrl}/?url=${article()}&ttl=1h`
    expect(await page.textContent('#req')).toBe(expected)
    expect(await page.textContent('#curl')).toBe(`curl -H "x-api-key: $API_KEY" '${expected}'`)
    await page.click('button[type="submit"]')
    await page.waitForSelector('#result pre')
    expect(await page.textContent('#status')).toMatch(/^HTTP 200/)
    expect(JSON.parse(await page.textContent('#result pre') ?? '').data.title).toBe('Shipping faster')
    expect(await page.content()).not.toContain('play-key')
  })

  it('sent nothing off loopback and broke no rule of its CSP', () => {
    expect(outside).toEqual([])
    expect(consoleErrors).toEqual([])
  })
})
