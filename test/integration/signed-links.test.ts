// Signed links end to end (docs/api.md §16, docs/tenants.md#signed-links): a tenant declared in a real KEYS_FILE, the
// pro listener on loopback, a signed `<img>` on a page of another origin in a real Chromium, the refusals, a rotation,
// the cache entry two links share, the recipes of docs/tenants.md and `npm run keys -- sign` run as they are written,
// and no secret in a log line, a metric, an error or a browser process.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { PNG } from 'pngjs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Browser } from 'playwright-core'
import { build, qs, type Built } from '../helpers/build.ts'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'
import { launchTestBrowser } from '../helpers/chromium.ts'
import { browserProcesses, commandLine, environOf } from '../helpers/processes.ts'
import { signQuery } from '../../src/tenants/signed-links.ts'
import { runKeys } from '../../scripts/keys.ts'

const OLD_SECRET = 'ss_old-signing-secret-5c1d'
const NEW_SECRET = 'ss_new-signing-secret-77e0'
const SECRETS = [OLD_SECRET, NEW_SECRET]

let fx: FixtureServer
/** The other origin: the page that shows the `<img>`. */
let site: FixtureServer
let app: Built
let proUrl: string
let dir: string
let keysFile: string
let browser: Browser | undefined
const bodies: string[] = []

function writeKeys (signing: readonly string[]): void {
  writeFileSync(keysFile, JSON.stringify({ tenants: { acme: { keys: [], plan: { daily: 1000 }, signing }, quiet: { keys: [] } } }))
}

beforeAll(async () => {
  fx = await startFixtureServer()
  site = await startFixtureServer()
  dir = mkdtempSync(path.join(os.tmpdir(), 'pagecast-signed-'))
  keysFile = path.join(dir, 'keys.json')
  writeKeys(SECRETS)
  app = await build({ ALLOW_PRIVATE_HOSTS: fx.host, KEYS_FILE: keysFile, BROWSER_CONCURRENCY: '1' })
  proUrl = await app.pro.listen({ port: 0, host: '127.0.0.1' })
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await app?.close()
  await fx?.close()
  await site?.close()
  rmSync(dir, { recursive: true, force: true })
})

const now = (): number => Math.floor(Date.now() / 1000)

/** A plain-fetch query (no browser), different per test so each starts with its own cache entry. */
const plain = (tag: string): string => qs({ url: `${fx.origin}/plain/?${tag}`, 'meta.title': true, prerender: false })

async function get (query: string, headers: Record<string, string> = {}): Promise<Response> {
  const res = await fetch(`${proUrl}/?${query}`, { headers })
  bodies.push(await res.clone().text())
  return res
}

async function refusal (query: string): Promise<{ status: number, code: string, data: Record<string, unknown> }> {
  const res = await get(query)
  const body = await res.json() as { code: string, data: Record<string, unknown> }
  return { status: res.status, code: body.code, data: body.data }
}

describe('signed links', () => {
  it('a signed <img> on a page of another origin loads in Chromium and shows the screenshot', async () => {
    const query = qs({ url: `${fx.origin}/red/?signed-img`, screenshot: true, meta: false, waitUntil: 'load', embed: 'screenshot.url' })
    const src = `${proUrl}/?${signQuery(query, 'acme', NEW_SECRET, now() + 600)}`
    site.route('/gallery', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      res.end(`<!doctype html><body style="margin:0;background:#fff"><img id="shot" src="${src.replace(/&/g, '&amp;')}" style="width:400px;height:250px"></body>`)
    })
    browser = await launchTestBrowser()
    const page = await browser.newPage({ viewport: { width: 400, height: 300 } })
    const loads: string[] = []
    page.on('requestfinished', (request) => { loads.push(new URL(request.url()).origin) })
    await page.goto(`${site.origin}/gallery`)
    expect(new URL(page.url()).origin).not.toBe(new URL(proUrl).origin)
    await page.waitForFunction(() => (document.getElementById('shot') as HTMLImageElement).complete, undefined, { timeout: 40_000 })
    const natural = await page.$eval('#shot', (img: HTMLImageElement) => [img.naturalWidth, img.naturalHeight])
    expect(natural).toEqual([2560, 1600])
    const shot = PNG.sync.read(await page.screenshot())
    // The fixture page is red, so the middle of the <img> (x 200, y 125) is too.
    const i = (125 * shot.width + 200) * 4
    expect([shot.data[i], shot.data[i + 1], shot.data[i + 2]]).toEqual([200, 0, 0])
    expect(loads).toContain(new URL(proUrl).origin)
  }, 60_000)

  it('refuses one changed byte, a past expires, an unknown keyId and a tenant without secrets, naming the part', async () => {
    const link = signQuery(plain('refusals'), 'acme', NEW_SECRET, now() + 600)
    expect((await get(link)).status).toBe(200)
    const changed = link.replace('refusals', 'refusalt')
    expect(await refusal(changed)).toMatchObject({ status: 403, code: 'ESIGNATURE', data: { signature: expect.any(String) } })
    expect(await refusal(signQuery(plain('refusals'), 'acme', NEW_SECRET, now() - 5)))
      .toMatchObject({ status: 403, code: 'ESIGNATURE', data: { expires: expect.any(String) } })
    expect(await refusal(signQuery(plain('refusals'), 'nobody', NEW_SECRET)))
      .toMatchObject({ status: 403, code: 'ESIGNATURE', data: { keyId: expect.any(String) } })
    expect(await refusal(signQuery(plain('refusals'), 'quiet', NEW_SECRET)))
      .toMatchObject({ status: 403, code: 'ESIGNATURE', data: { keyId: expect.any(String) } })
    expect(await refusal(`${link}&meta=false`)).toMatchObject({ status: 403, code: 'ESIGNATURE', data: { signature: expect.any(String) } })
    // Without a key or a link, the pro listener still answers EAUTH.
    expect((await refusal(plain('refusals'))).code).toBe('EAUTH')
  })

  it('two links that differ only in expires share one cache entry, both counted for the tenant', async () => {
    const first = await get(signQuery(plain('shared'), 'acme', NEW_SECRET, now() + 600))
    const second = await get(signQuery(plain('shared'), 'acme', OLD_SECRET, now() + 1200))
    expect([first.status, second.status]).toEqual([200, 200])
    expect(first.headers.get('x-cache-status')).toBe('MISS')
    expect(second.headers.get('x-cache-status')).toBe('HIT')
    // Served as the tenant: its plan's day is counted, the hit included.
    expect(first.headers.get('x-rate-limit-limit')).toBe('1000')
    expect(Number(first.headers.get('x-rate-limit-remaining')) - Number(second.headers.get('x-rate-limit-remaining'))).toBe(1)
    expect(fx.hitsOf('/plain/')).toBeGreaterThan(0)
  })

  it('takes both secrets during a rotation, and refuses the removed one within the reload', async () => {
    const withOld = signQuery(plain('rotation'), 'acme', OLD_SECRET, now() + 600)
    const withNew = signQuery(plain('rotation'), 'acme', NEW_SECRET, now() + 600)
    expect((await get(withOld)).status).toBe(200)
    expect((await get(withNew)).status).toBe(200)
    writeKeys([NEW_SECRET])
    const deadline = Date.now() + 5000
    let refused = await refusal(withOld)
    while (refused.status === 200 && Date.now() < deadline) {
      await new Promise(resolve => setTimeout(resolve, 100))
      refused = await refusal(withOld)
    }
    expect(refused).toMatchObject({ status: 403, code: 'ESIGNATURE', data: { signature: expect.any(String) } })
    expect((await get(withNew)).status).toBe(200)
    // Both again for the tests after this one, once the file is read again.
    writeKeys(SECRETS)
    while ((await get(withOld)).status !== 200 && Date.now() < deadline + 5000) await new Promise(resolve => setTimeout(resolve, 100))
  })

  it('the Node and shell recipes of docs/tenants.md, and npm run keys -- sign, make links the service takes', async () => {
    const doc = readFileSync(path.resolve(import.meta.dirname, '../../docs/tenants.md'), 'utf8')
    const blocks = [...doc.matchAll(/```(js|python|sh)\n([\s\S]*?)```/g)].map(([, lang, code]) => ({ lang: lang!, code: code! }))
    const recipe = (lang: string): string => {
      const found = blocks.filter(b => b.lang === lang && b.code.includes('SIGNING_SECRET')).at(-1)
      expect(found, `a ${lang} recipe`).toBeDefined()
      // The recipe as written, pointed at the fixture page and this listener.
      return found!.code
        .replaceAll("'https://example.com'", `'${fx.origin}/plain/?recipe'`)
        .replaceAll('https%3A%2F%2Fexample.com', encodeURIComponent(`${fx.origin}/plain/?recipe`))
        .replaceAll('https://pagecast.example.com:3001', proUrl)
    }
    const env = { PATH: process.env.PATH!, SIGNING_SECRET: NEW_SECRET }
    const links = [
      execFileSync(process.execPath, ['--input-type=module', '-e', recipe('js')], { env, encoding: 'utf8' }),
      execFileSync('sh', ['-c', recipe('sh')], { env, encoding: 'utf8' })
    ].map(out => out.trim())
    let cli = ''
    runKeys(['sign', 'acme', qs({ url: `${fx.origin}/plain/?recipe` }), '--expires-in', '1h'], { env: { KEYS_FILE: keysFile }, out: (text) => { cli += text } })
    links.push(`${proUrl}/?${cli.trim()}`)
    for (const link of links) {
      expect(link).toMatch(/&keyId=acme&expires=\d+&signature=[0-9a-f]{64}$/)
      const res = await fetch(link)
      bodies.push(await res.clone().text())
      expect(res.status, link).toBe(200)
      // The recipes embed a screenshot (their second link on is a cache hit); the CLI's query is the JSON answer.
      expect(res.headers.get('content-type')).toMatch(link.includes('embed=screenshot.url') ? /^image\/png/ : /^application\/json/)
    }
  }, 30_000)

  it('/openapi.json describes the signed link as a way in for GET / and the content query form, which takes one', async () => {
    const doc = await (await fetch(`${proUrl}/openapi.json`)).json() as {
      components: { securitySchemes: Record<string, { in: string, name: string }> }
      paths: Record<string, { get: { security: Array<Record<string, unknown>> } }>
    }
    expect(doc.components.securitySchemes.signedLink).toMatchObject({ in: 'query', name: 'signature' })
    for (const route of ['/', '/markdown']) expect(doc.paths[route]!.get.security).toContainEqual({ signedLink: [] })
    expect(doc.paths['/markdown/{target}']!.get.security).not.toContainEqual({ signedLink: [] })
    const markdown = await fetch(`${proUrl}/markdown?${signQuery(qs({ url: `${fx.origin}/article/` }), 'acme', NEW_SECRET, now() + 600)}`)
    expect(markdown.status).toBe(200)
    expect(markdown.headers.get('content-type')).toMatch(/^text\/markdown/)
    expect(await markdown.text()).toContain('Shipping faster')
    const wrong = await fetch(`${proUrl}/markdown?${signQuery(qs({ url: `${fx.origin}/article/` }), 'acme', 'not-a-secret-of-acme')}`)
    expect([wrong.status, (await wrong.json() as { code: string }).code]).toEqual([403, 'ESIGNATURE'])
  })

  it('puts no secret in a log line, a metric, an error or a browser process', async () => {
    const metrics = await (await app.pro.inject({ url: '/metrics' })).body
    const pid = app.ctx.browser.browserPid()
    const processes = pid === undefined ? [] : browserProcesses(pid).flatMap((p) => {
      try { return [...commandLine(p), ...environOf(p)] } catch { return [] }
    })
    expect(bodies.length).toBeGreaterThan(10)
    for (const secret of SECRETS) {
      expect(app.rawLogs.join('\n')).not.toContain(secret)
      expect(metrics).not.toContain(secret)
      for (const body of bodies) expect(body).not.toContain(secret)
      for (const entry of processes) expect(entry).not.toContain(secret)
    }
  })
})
