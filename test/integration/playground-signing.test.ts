// The /docs playground signs a link in the page (docs/tenants.md#signed-links): given a tenant and one of its signing
// secrets, a real Chromium computes the signature with WebCrypto, the service verifies it (the same signature
// src/tenants/signed-links.ts computes), and no request the page sends carries the secret.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Browser } from 'playwright-core'
import { build, type Built } from '../helpers/build.ts'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'
import { launchTestBrowser } from '../helpers/chromium.ts'
import { signQuery } from '../../src/tenants/signed-links.ts'

const SECRET = 'ss_playground-secret-4b9e'

let fx: FixtureServer
let app: Built
let browser: Browser
let proUrl: string
let dir: string

beforeAll(async () => {
  fx = await startFixtureServer()
  dir = mkdtempSync(path.join(os.tmpdir(), 'pagecast-pg-signed-'))
  const keysFile = path.join(dir, 'keys.yaml')
  writeFileSync(keysFile, `tenants:\n  acme:\n    keys: []\n    signing: ["${SECRET}"]\n`)
  app = await build({ ALLOW_PRIVATE_HOSTS: fx.host, KEYS_FILE: keysFile, BROWSER_CONCURRENCY: '1' })
  proUrl = await app.pro.listen({ port: 0, host: '127.0.0.1' })
  browser = await launchTestBrowser()
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await app?.close()
  await fx?.close()
  rmSync(dir, { recursive: true, force: true })
})

describe('the playground\'s signed links', () => {
  it('signs in the page as the server verifies, and never sends the secret', async () => {
    const context = await browser.newContext()
    const sent: string[] = []
    await context.route('**/*', async (route) => {
      const request = route.request()
      const url = new URL(request.url())
      if (/^(https?|wss?):$/.test(url.protocol) && url.hostname !== '127.0.0.1') { await route.abort(); return }
      sent.push(request.url(), JSON.stringify(await request.allHeaders()), request.postData() ?? '')
      await route.continue()
    })
    const page = await context.newPage()
    const errors: string[] = []
    page.on('console', (message) => { if (message.type() === 'error') errors.push(message.text()) })
    await page.goto(`${proUrl}/docs`)
    const target = `${fx.origin}/plain/?playground`
    await page.fill('input[name="url"]', target)
    await page.fill('#key', 'not-a-registered-key')
    await page.click('#signing summary')
    await page.fill('#keyId', 'acme')
    await page.fill('#secret', SECRET)
    await page.fill('#expiresIn', '600')
    await page.waitForFunction(() => document.getElementById('req')?.textContent?.includes('&signature=') === true)
    const shown = await page.textContent('#req') ?? ''
    // The same link the server side signs, for the expiry the page chose.
    const query = shown.slice(shown.indexOf('?') + 1)
    const expires = Number(/&expires=(\d+)&/.exec(query)?.[1])
    expect(Math.abs(expires - (Date.now() / 1000 + 600))).toBeLessThan(120)
    const base = query.slice(0, query.indexOf('&keyId='))
    expect(new URLSearchParams(base).get('url')).toBe(target)
    expect(query).toBe(signQuery(base, 'acme', SECRET, expires))
    // The curl line is the link alone: no key header.
    expect(await page.textContent('#curl')).toBe(`curl '${shown}'`)
    expect(await page.textContent('#signnote')).toMatch(/secret is not sent/)

    await page.click('button[type="submit"]')
    await page.waitForSelector('#result pre')
    expect(await page.textContent('#status')).toMatch(/^HTTP 200 · application\/json/)
    expect(JSON.parse(await page.textContent('#result pre') ?? '').status).toBe('success')

    // The run went out as the signed link, without the (unregistered) key, and nothing carried the secret.
    const run = sent.findIndex((entry) => entry.includes('&signature='))
    expect(run).toBeGreaterThan(-1)
    expect(sent[run + 1]).not.toContain('x-api-key')
    for (const entry of sent) expect(entry).not.toContain(SECRET)
    expect(app.rawLogs.join('\n')).not.toContain(SECRET)
    expect(errors).toEqual([])
    await context.close()
  }, 60_000)

  it('a wrong secret gives a link the server refuses with ESIGNATURE', async () => {
    const page = await browser.newPage()
    await page.goto(`${proUrl}/docs`)
    await page.fill('input[name="url"]', `${fx.origin}/plain/?playground`)
    await page.click('#signing summary')
    await page.fill('#keyId', 'acme')
    await page.fill('#secret', 'not-the-secret')
    await page.waitForFunction(() => document.getElementById('req')?.textContent?.includes('&signature=') === true)
    await page.click('button[type="submit"]')
    await page.waitForSelector('#result pre')
    expect(await page.textContent('#status')).toMatch(/^HTTP 403/)
    expect(JSON.parse(await page.textContent('#result pre') ?? '')).toMatchObject({ code: 'ESIGNATURE', data: { signature: expect.any(String) } })
    await page.close()
  }, 60_000)
})
