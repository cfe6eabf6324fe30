// Issue 4: every limit configurable and enforced through the API (HTML body, probe read, redirects, full-page
// height, jobs per browser, the request's deadline, URL and query length), and hostile targets that each end
// within their deadline with a coded error or a result, the next request being served normally.
import { readFileSync, readdirSync } from 'node:fs'
import type http from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { build, qs, type Built } from '../helpers/build.ts'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'
import { imageInfo, solidPng } from '../helpers/images.ts'
import { ConfigError, loadConfig } from '../../src/config.ts'
import { ERROR_CODES } from '../../src/errors.ts'

const MiB = 1024 * 1024

let fx: FixtureServer
/** Defaults everywhere. */
let plain: Built
/** Every limit lowered. */
let low: Built
/** MAX_TIMEOUT lowered to 3 s. */
let short: Built
/** For the hostile pages: more pages at once, so they do not wait for each other. */
let hostile: Built

/** Per path: the socket of the last request, to see whether the client closed it (a kept-alive one stays open). */
const sockets = new Map<string, import('node:net').Socket>()
const ranges = new Map<string, string | undefined>()
const timers = new Set<NodeJS.Timeout>()

function track (pathname: string, res: http.ServerResponse): void {
  sockets.set(pathname, res.req.socket)
}

/** Whether the client closed the connection of the last request on `pathname` (polled for up to a second). */
async function closedByClient (pathname: string): Promise<boolean> {
  for (let i = 0; i < 20; i++) {
    if (sockets.get(pathname)?.destroyed === true) return true
    await new Promise(resolve => setTimeout(resolve, 50))
  }
  return false
}

function html (title: string, size: number): Buffer {
  const head = Buffer.from(`<!doctype html><html><head><title>${title}</title></head><body><p>`)
  return Buffer.concat([head, Buffer.alloc(Math.max(0, size - head.length), 'a')])
}

const PNG = solidPng(300, 200, [0, 0, 255, 255])
const PADDED_PNG = Buffer.concat([PNG, Buffer.alloc(300_000)])

beforeAll(async () => {
  fx = await startFixtureServer()
  // Bodies: sized by the query (?size=N), HTML or not.
  fx.route('/sized', (req, res) => {
    const url = new URL(req.url ?? '/', 'http://x')
    const size = Number(url.searchParams.get('size'))
    track('/sized', res)
    const body = url.searchParams.has('binary') ? Buffer.alloc(size, 7) : html('Sized', size)
    res.writeHead(200, { 'content-type': url.searchParams.has('binary') ? 'application/octet-stream' : 'text/html' })
    res.end(body)
  })
  // A page whose og:image ignores the range asked and sends 300 KB.
  fx.route('/with-image', (req, res) => {
    const tag = new URL(req.url ?? '/', 'http://x').search
    res.writeHead(200, { 'content-type': 'text/html' })
    res.end(`<!doctype html><title>Img</title><meta property="og:image" content="/img.png${tag}">`)
  })
  fx.route('/img.png', (req, res) => {
    ranges.set('/img.png', req.headers.range)
    track('/img.png', res)
    res.writeHead(200, { 'content-type': 'image/png', 'content-length': PADDED_PNG.length })
    res.end(PADDED_PNG)
  })
  fx.route('/chain', (req, res) => {
    const n = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('n'))
    if (n === 0) { res.writeHead(200, { 'content-type': 'text/html' }); res.end('<title>End of chain</title>'); return }
    res.writeHead(302, { location: `/chain?n=${n - 1}` }); res.end()
  })
  fx.route('/loop', (_req, res) => { res.writeHead(302, { location: '/loop' }); res.end() })
  fx.route('/tall', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' })
    res.end('<!doctype html><title>Tall</title><body style="margin:0"><div style="height:10000px;background:red"></div>')
  })
  // Hostile targets.
  fx.route('/never', () => {})
  fx.route('/drip', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' })
    res.write('<!doctype html><title>Drip</title>')
    const timer = setInterval(() => { res.write('.') }, 1000)
    timers.add(timer)
    res.on('close', () => { clearInterval(timer); timers.delete(timer) })
  })
  const page = (body: string) => (_req: http.IncomingMessage, res: http.ServerResponse): void => {
    res.writeHead(200, { 'content-type': 'text/html' })
    res.end(`<!doctype html><html><head><title>Hostile</title></head><body>${body}</body></html>`)
  }
  fx.route('/spin', page('<p>spinning</p><script>while (true) {}</script>'))
  fx.route('/popups', page('<script>setInterval(() => { window.open("/red/?popup=" + Math.random()) }, 20)</script>'))
  fx.route('/alerts', page('<script>for (let i = 0; ; i++) alert(i)</script>'))
  fx.route('/reload', page('<script>location.reload()</script>'))
  fx.route('/away', page('<script>setInterval(() => { location.href = "/away?" + Math.random() }, 50)</script>'))
  fx.route('/download', (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-disposition': 'attachment; filename="x.bin"' })
    res.end(Buffer.alloc(100_000, 1))
  })

  const base = { ALLOW_PRIVATE_HOSTS: fx.host, FREE_DAILY_LIMIT: '0', LOG_LEVEL: 'warn' }
  ;[plain, low, short, hostile] = await Promise.all([
    build({ ...base, BROWSER_CONCURRENCY: '2' }),
    build({
      ...base,
      BROWSER_CONCURRENCY: '2',
      MAX_HTML_BYTES: '100000',
      MAX_PROBE_BYTES: '4096',
      MAX_REDIRECTS: '3',
      MAX_FULLPAGE_HEIGHT: '2000',
      BROWSER_MAX_JOBS: '2'
    }),
    build({ ...base, MAX_TIMEOUT: '3s' }),
    build({ ...base, BROWSER_CONCURRENCY: '6', BROWSER_QUEUE_LIMIT: '100' })
  ])
}, 120_000)

afterAll(async () => {
  for (const timer of timers) clearInterval(timer)
  await Promise.all([plain?.close(), low?.close(), short?.close(), hostile?.close()])
  await fx?.close()
})

async function get (app: Built, query: Record<string, string | number | boolean>) {
  const started = performance.now()
  const res = await app.free.inject({ method: 'GET', url: `/?${qs(query)}` })
  return { res, ms: performance.now() - started }
}

describe('configuration', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({})
    expect(config).toMatchObject({
      maxHtmlBytes: 10 * MiB,
      maxProbeBytes: 64 * 1024,
      maxRedirects: 10,
      maxFullPageHeight: 16_384,
      browserMaxJobs: 1000,
      maxTimeout: 28_000
    })
  })

  it('refuses bad values, naming the variable', () => {
    for (const [name, value] of [['MAX_HTML_BYTES', '10MB'], ['MAX_PROBE_BYTES', '-1'], ['MAX_REDIRECTS', '101'],
      ['MAX_FULLPAGE_HEIGHT', '20000'], ['BROWSER_MAX_JOBS', '0']] as const) {
      expect(() => loadConfig({ [name]: value })).toThrow(ConfigError)
      expect(() => loadConfig({ [name]: value })).toThrow(name)
    }
  })
})

describe('the largest HTML body read', () => {
  it('refuses an HTML body over 10 MiB by default with 400 EINVALURL, and closes the connection', async () => {
    const { res } = await get(plain, { url: `${fx.origin}/sized?size=${10 * MiB + 1}`, prerender: false })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ code: 'EINVALURL', data: { url: expect.stringMatching(/larger than 10485760 bytes/) } })
    // Well past the limit, the read stops and the connection is closed rather than drained.
    const far = await get(plain, { url: `${fx.origin}/sized?size=${16 * MiB}`, prerender: false })
    expect(far.res.statusCode).toBe(400)
    expect(await closedByClient('/sized')).toBe(true)
    const exact = await get(plain, { url: `${fx.origin}/sized?size=${10 * MiB}`, prerender: false })
    expect(exact.res.statusCode).toBe(200)
    expect(exact.res.json().data.title).toBe('Sized')
  })

  it('follows MAX_HTML_BYTES, and prerender=auto does not hand the refused page to the browser', async () => {
    const before = fx.hitsOf('/sized')
    const { res } = await get(low, { url: `${fx.origin}/sized?size=100001&auto` })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ code: 'EINVALURL', data: { url: expect.stringMatching(/larger than 100000 bytes/) } })
    expect(fx.hitsOf('/sized') - before).toBe(1)
    expect(low.ctx.browser.stats().jobs).toBe(0)
    const exact = await get(low, { url: `${fx.origin}/sized?size=100000`, prerender: false })
    expect(exact.res.statusCode).toBe(200)
  })

  it('keeps the head of a larger body that is not HTML', async () => {
    const { res } = await get(low, { url: `${fx.origin}/sized?size=500000&binary`, prerender: false })
    expect(res.statusCode).toBe(200)
    expect(await closedByClient('/sized')).toBe(true)
  })
})

describe('the largest probe read', () => {
  it('asks for 64 KiB by default and stops reading there', async () => {
    const { res } = await get(plain, { url: `${fx.origin}/with-image?plain`, prerender: false })
    expect(res.statusCode).toBe(200)
    expect(res.json().data.image).toMatchObject({ type: 'png', width: 300, height: 200, size: PADDED_PNG.length })
    expect(ranges.get('/img.png')).toBe('bytes=0-65535')
    expect(await closedByClient('/img.png')).toBe(true)
  })

  it('follows MAX_PROBE_BYTES', async () => {
    const { res } = await get(low, { url: `${fx.origin}/with-image?low`, prerender: false })
    expect(res.statusCode).toBe(200)
    expect(res.json().data.image).toMatchObject({ type: 'png', width: 300, height: 200, size: PADDED_PNG.length })
    expect(ranges.get('/img.png')).toBe('bytes=0-4095')
    expect(await closedByClient('/img.png')).toBe(true)
  })
})

describe('redirects', () => {
  it('follows 10 by default and refuses the 11th with EMAXREDIRECTS', async () => {
    expect((await get(plain, { url: `${fx.origin}/chain?n=10`, prerender: false })).res.json().data.title).toBe('End of chain')
    const { res } = await get(plain, { url: `${fx.origin}/chain?n=11`, prerender: false })
    expect(res.statusCode).toBe(400)
    expect(res.json().code).toBe('EMAXREDIRECTS')
  })

  it('follows MAX_REDIRECTS', async () => {
    expect((await get(low, { url: `${fx.origin}/chain?n=3`, prerender: false })).res.statusCode).toBe(200)
    const { res } = await get(low, { url: `${fx.origin}/chain?n=4`, prerender: false })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ code: 'EMAXREDIRECTS', data: { url: expect.stringMatching(/more than 3 times/) } })
  })

  it('follows MAX_REDIRECTS in the browser too', async () => {
    const browser = { prerender: true, waitUntil: 'load', meta: false }
    expect((await get(plain, { url: `${fx.origin}/chain?n=4`, ...browser })).res.statusCode).toBe(200)
    expect((await get(low, { url: `${fx.origin}/chain?n=3`, ...browser })).res.statusCode).toBe(200)
    const { res } = await get(low, { url: `${fx.origin}/chain?n=4`, ...browser })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ code: 'EMAXREDIRECTS', data: { url: expect.stringMatching(/more than 3 times/) } })
  })
})

describe('the browser', () => {
  it('cuts a full page at MAX_FULLPAGE_HEIGHT', async () => {
    const { res } = await get(low, {
      url: `${fx.origin}/tall?h`, screenshot: true, 'screenshot.fullPage': true, 'screenshot.type': 'jpeg',
      'viewport.deviceScaleFactor': 1, waitUntil: 'load', meta: false
    })
    expect(res.statusCode).toBe(200)
    const { screenshot } = res.json().data
    expect(screenshot).toMatchObject({ width: 1280, height: 2000 })
    const file = await low.free.inject(new URL(screenshot.url).pathname)
    expect(imageInfo(file.rawPayload)).toEqual({ type: 'jpg', width: 1280, height: 2000 })
  })

  it('relaunches the browser after BROWSER_MAX_JOBS jobs, and keeps serving', async () => {
    const before = low.ctx.browser.stats()
    const pids: Array<number | undefined> = []
    for (let i = 0; i < 5; i++) {
      const { res } = await get(low, { url: `${fx.origin}/red/?job=${i}`, prerender: true, waitUntil: 'load' })
      expect(res.statusCode).toBe(200)
      expect(res.json().data.title).toBe('Red')
      pids.push(low.ctx.browser.browserPid())
    }
    // 5 jobs at 2 per browser: at least 2 relaunches, while the defaults (1000) never relaunched.
    const after = low.ctx.browser.stats()
    expect(after.jobs - before.jobs).toBe(5)
    expect(after.launches - before.launches).toBeGreaterThanOrEqual(2)
    expect(new Set(pids).size).toBeGreaterThanOrEqual(2)
    expect(plain.ctx.browser.stats().launches).toBeLessThanOrEqual(1)
  }, 90_000)
})

describe('the request deadline', () => {
  it('ends at `timeout`, and at MAX_TIMEOUT when timeout asks for more', async () => {
    const asked = await get(plain, { url: `${fx.origin}/never?a`, prerender: false, timeout: '1500ms' })
    expect(asked.res.statusCode).toBe(504)
    expect(asked.res.json().code).toBe('ETIMEOUT')
    expect(asked.ms).toBeGreaterThanOrEqual(1400)
    expect(asked.ms).toBeLessThan(3000)
    const capped = await get(short, { url: `${fx.origin}/never?b`, prerender: false, timeout: '20s' })
    expect(capped.res.statusCode).toBe(504)
    expect(capped.ms).toBeGreaterThanOrEqual(2900)
    expect(capped.ms).toBeLessThan(4500)
  })
})

describe('URL and query length (32 KiB, docs/api.md)', () => {
  it('takes a query of 32 KiB and refuses one byte more with EINVALQUERY', async () => {
    const prefix = `url=${encodeURIComponent(`${fx.origin}/article/`)}&prerender=false&meta.title&x=`
    const fits = `/?${prefix}${'a'.repeat(32 * 1024 - prefix.length)}`
    expect(fits.length - 2).toBe(32 * 1024)
    const ok = await plain.free.inject({ method: 'GET', url: fits })
    expect(ok.statusCode).toBe(200)
    const over = await plain.free.inject({ method: 'GET', url: `${fits}a` })
    expect(over.statusCode).toBe(400)
    expect(over.json().code).toBe('EINVALQUERY')
  })

  it('refuses a target URL that makes the query too long', async () => {
    const url = `${fx.origin}/article/?${'q'.repeat(33 * 1024)}`
    const res = await plain.free.inject({ method: 'GET', url: `/?${qs({ url })}` })
    expect(res.statusCode).toBe(400)
    expect(res.json().code).toBe('EINVALQUERY')
  })
})

/** Clock ticks (1/100 s) of CPU the Chromium processes under this process used during `ms`. */
async function chromiumTicks (ms: number): Promise<number> {
  const read = (): Map<number, number> => {
    const all = new Map<number, { ppid: number, ticks: number, chromium: boolean }>()
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
        const chromium = /chrom/i.test(readFileSync(`/proc/${entry}/cmdline`, 'utf8'))
        all.set(Number(entry), { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]), chromium })
      } catch {}
    }
    const tree = new Set([process.pid])
    let grew = true
    while (grew) {
      grew = false
      for (const [pid, p] of all) if (tree.has(p.ppid) && !tree.has(pid)) { tree.add(pid); grew = true }
    }
    const ticks = new Map<number, number>()
    for (const pid of tree) { const p = all.get(pid); if (p?.chromium === true) ticks.set(pid, p.ticks) }
    return ticks
  }
  const before = read()
  await new Promise(resolve => setTimeout(resolve, ms))
  let used = 0
  for (const [pid, ticks] of read()) used += ticks - (before.get(pid) ?? ticks)
  return used
}

/** Less than a tenth of a core over 2 s: nothing left spinning. */
const QUIET_TICKS = 20

describe('hostile targets', () => {
  const TIMEOUT = 8000
  /**
   * What a request may take past its timeout: answering, on a 2-core machine that this test's own twelve pages load
   * (a spinning script, dialog, popup and reload storms: 9.0-9.3 s for an 8 s timeout on a quiet machine, against
   * 8.03-8.05 s for one such request alone) and the rest of the suite loads more (10.6 s, and once 12.8 s, in full
   * runs). A request the deadline did not end would run to MAX_TIMEOUT (28 s) or hang.
   */
  const SLACK = 5000
  const cases: Array<[name: string, path: string, prerender: boolean]> = [
    ['never answers (fetch)', '/never?f', false],
    ['never answers (browser)', '/never?p', true],
    ['drips a byte a second (fetch)', '/drip?f', false],
    ['drips a byte a second (browser)', '/drip?p', true],
    ['redirects in a loop (fetch)', '/loop', false],
    ['redirects in a loop (browser)', '/loop?p', true],
    ['runs while(true){}', '/spin', true],
    ['opens popups', '/popups', true],
    ['alerts in a loop', '/alerts', true],
    ['downloads a file', '/download', true],
    ['reloads itself forever', '/reload', true],
    ['navigates away repeatedly', '/away', true]
  ]

  it('each ends within its deadline with a coded error or a result, and the next request is served', async () => {
    const outcomes = await Promise.all(cases.map(async ([name, path, prerender]) => {
      const { res, ms } = await get(hostile, { url: `${fx.origin}${path}`, prerender, screenshot: prerender, timeout: `${TIMEOUT}ms` })
      const body = res.json()
      // The next request, as a client sends it: an EBUSY (the other hostile pages still hold the slots, and a loaded
      // machine makes them slow to give back) is tried again after its retry-after, a few times. A poisoned service
      // would stay busy, or answer something else.
      const refusals: string[] = []
      let next = await get(hostile, { url: `${fx.origin}/red/?after=${encodeURIComponent(name)}`, prerender: true, waitUntil: 'load' })
      for (let attempt = 1; attempt < 4 && next.res.statusCode === 503 && next.res.json().code === 'EBUSY'; attempt++) {
        const { jobMs, paceMs, resetMs, active, queued } = hostile.ctx.browser.stats()
        refusals.push(`${JSON.stringify(next.res.json().data)} with the pool at ${JSON.stringify({ jobMs, paceMs, resetMs, active, queued })}`)
        await new Promise(resolve => setTimeout(resolve, Math.min(5, Number(next.res.headers['retry-after'])) * 1000))
        next = await get(hostile, { url: `${fx.origin}/red/?after=${encodeURIComponent(name)}&attempt=${attempt}`, prerender: true, waitUntil: 'load' })
      }
      const { jobMs, paceMs, resetMs, active, queued } = hostile.ctx.browser.stats()
      return { name, status: res.statusCode, code: body.code as string | undefined, ms: Math.round(ms), next: next.res.statusCode, nextCode: next.res.json().code as string | undefined, nextMessage: `${JSON.stringify(next.res.json().data)}, pool after: ${JSON.stringify({ jobMs, paceMs, resetMs, active, queued })}; refused before: ${refusals.join('; ') || 'none'}`, nextTitle: next.res.json().data?.title }
    }))
    for (const o of outcomes) {
      expect.soft(o.ms, o.name).toBeLessThan(TIMEOUT + SLACK)
      if (o.status !== 200) {
        expect.soft(ERROR_CODES as readonly string[], o.name).toContain(o.code)
      }
      expect.soft(o.next, `${o.name}: the next request (${o.nextCode ?? 'no code'}: ${o.nextMessage ?? ''})`).toBe(200)
      expect.soft(o.nextTitle, `${o.name}: the next request`).toBe('Red')
    }
    const by = Object.fromEntries(outcomes.map(o => [o.name, o]))
    expect(by['never answers (fetch)']).toMatchObject({ status: 504, code: 'ETIMEOUT' })
    expect(by['drips a byte a second (fetch)']).toMatchObject({ status: 504, code: 'ETIMEOUT' })
    expect(by['redirects in a loop (fetch)']).toMatchObject({ status: 400, code: 'EMAXREDIRECTS' })
    expect(by['never answers (browser)']!.status).toBe(504)
    expect(hostile.ctx.browser.health()).toBe(true)
    // No runaway page is left: once the pool has cleaned up, this process's Chromium goes quiet.
    let busy = Number.POSITIVE_INFINITY
    for (let i = 0; i < 15 && busy >= QUIET_TICKS; i++) busy = await chromiumTicks(2000)
    expect(busy).toBeLessThan(QUIET_TICKS)
  }, 150_000)
})
