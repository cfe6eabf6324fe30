// `insights.lighthouse` (docs/api.md §3.4) through the API, on loopback fixtures: a JSON report (the LHR) with
// numeric category scores, Lighthouse's own HTML and CSV reports, a preset, settings Lighthouse or pagecast refuses
// (400), every request of the run under the address guard (a page that references a loopback server outside
// ALLOW_PRIVATE_HOSTS: that server gets no connection), the run's Chromium started with the child environment only,
// the deadline (ETIMEOUT, and no Lighthouse Chromium left), and two requests at once running one after the other;
// the browser's HOME is the run's own, and its crash handlers and that folder are gone after the run.
import { existsSync, readFileSync } from 'node:fs'
import net from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CHILD_ENV_NAMES, CHILD_ENV_PREFIXES } from '../../src/config.ts'
import { LIGHTHOUSE_MARKER } from '../../src/browser/lighthouse/index.ts'
import { build, qs, type Built } from '../helpers/build.ts'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'
import { commandLine, crashHandlersIn, descendantsOf, isAlive, processTable } from '../helpers/processes.ts'

const SECRET_KEY = 'lighthouse-api-key-secret-91'
const UNLISTED = 'lighthouse-unlisted-secret-92'

/** The service's own environment, as server.ts gives it: a secret, and a variable outside the allowlist. */
const SERVICE_ENV: Record<string, string> = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: process.env.HOME ?? '/tmp',
  PAGECAST_UNLISTED_SETTING: UNLISTED,
  API_KEYS: `k,${SECRET_KEY}`,
  BROWSER_CONCURRENCY: '2',
  // Room for two runs one after the other on a busy machine (the requests below ask for it).
  MAX_TIMEOUT: '90s'
}

let fx: FixtureServer
let app: Built
/** A loopback server NOT in ALLOW_PRIVATE_HOSTS: the page references it; it must never be connected to. */
let blocked: net.Server
let blockedPort = 0
let blockedConnections = 0

function page (title: string, body = ''): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>` +
    '<meta name="viewport" content="width=device-width, initial-scale=1">' +
    `<meta name="description" content="A loopback fixture for Lighthouse: ${title}."></head>` +
    `<body><h1>${title}</h1><p>Some text for the audits to read, with <a href="/other">a descriptive link</a>.</p>${body}</body></html>`
}

beforeAll(async () => {
  blocked = net.createServer((socket) => {
    blockedConnections += 1
    socket.end('HTTP/1.1 200 OK\r\ncontent-type: image/png\r\ncontent-length: 0\r\nconnection: close\r\n\r\n')
  })
  await new Promise<void>((resolve) => { blocked.listen(0, '127.0.0.1', resolve) })
  blockedPort = (blocked.address() as net.AddressInfo).port
  // In the test process's own environment too: a browser given it by mistake would show it.
  process.env.PAGECAST_LIGHTHOUSE_TEST_SECRET = UNLISTED
  fx = await startFixtureServer()
  const html = (title: string, body?: string) => (_req: unknown, res: import('node:http').ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    res.end(page(title, body))
  }
  // The blocked references only for Lighthouse's page load (its mobile emulation), not for the page load before it.
  const refs = `<img src="http://127.0.0.1:${blockedPort}/pixel.png" alt="pixel" width="1" height="1">` +
    `<script>fetch('http://127.0.0.1:${blockedPort}/beacon').catch(() => {})</script>`
  fx.route('/guarded', (req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    res.end(page('Guarded', /Android/.test(req.headers['user-agent'] ?? '') ? refs : ''))
  })
  for (const name of ['one', 'two', 'desktop']) fx.route(`/${name}`, html(name))
  // Answers the page load before Lighthouse at once, and Lighthouse's own (its mobile emulation) only after 8 s.
  fx.route('/slow', (req, res) => {
    const send = (): void => { if (!res.destroyed) html('slow')(req, res) }
    if (/Android/.test(req.headers['user-agent'] ?? '')) setTimeout(send, 8000).unref()
    else send()
  })
  SERVICE_ENV.ALLOW_PRIVATE_HOSTS = fx.host
  app = await build(SERVICE_ENV)
}, 60_000)

afterAll(async () => {
  Reflect.deleteProperty(process.env, 'PAGECAST_LIGHTHOUSE_TEST_SECRET')
  await app?.close()
  await fx?.close()
  await new Promise<void>((resolve) => { blocked?.close(() => { resolve() }) })
})

async function get (query: Record<string, string | number | boolean>) {
  const res = await app.pro.inject({ method: 'GET', url: `/?${qs({ timeout: '90s', ...query, force: true })}`, headers: { 'x-api-key': 'k' } })
  return { res, body: res.json<{ status: string, code?: string, data: Record<string, any> }>() }
}

/**
 * The live processes of this test's Lighthouse Chromiums (each browser and its helpers, all under this process: other
 * test files run Lighthouse in their own workers at the same time), by the marker value of its tree.
 */
function lighthouseProcesses (): Map<number, string> {
  const table = processTable()
  const ours = new Set(descendantsOf(process.pid).map(p => p.pid))
  const found = new Map<number, string>()
  for (const { pid } of table) {
    if (!ours.has(pid)) continue
    const marker = commandLine(pid).find(arg => arg.includes(`${LIGHTHOUSE_MARKER}=`))
    if (marker !== undefined) found.set(pid, /--pagecast-lighthouse=[\w-]+/.exec(marker)?.[0] ?? marker)
  }
  // Helpers that retitled their command line belong to the tree of their browser.
  for (let grew = true; grew;) {
    grew = false
    for (const { pid, ppid } of table) {
      const marker = found.get(ppid)
      if (marker !== undefined && !found.has(pid)) { found.set(pid, marker); grew = true }
    }
  }
  return found
}


/**
 * Watches Lighthouse Chromiums while `work` runs: the markers seen, the most alive at once, their environments, the
 * HOME each browser started with, and the crash handlers (outside the browser's tree) that name a HOME of its own.
 */
async function watching<T> (work: Promise<T>) {
  const markers = new Set<string>()
  const environments = new Map<number, string[]>()
  const homes = new Set<string>()
  const handlers = new Set<number>()
  /** The browser of each tree: the first process seen with its marker (helpers start after it). */
  const roots = new Map<string, number>()
  let mostAtOnce = 0
  let done = false
  const poll = (async () => {
    while (!done) {
      const now = lighthouseProcesses()
      mostAtOnce = Math.max(mostAtOnce, new Set(now.values()).size)
      for (const [pid, marker] of now) roots.set(marker, Math.min(pid, roots.get(marker) ?? pid))
      for (const [pid, marker] of now) {
        markers.add(marker)
        if (!environments.has(pid)) {
          try {
            environments.set(pid, readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(entry => entry !== ''))
          } catch {}
        }
      }
      for (const root of roots.values()) {
        const home = environments.get(root)?.find(entry => entry.startsWith('HOME='))?.slice('HOME='.length)
        if (home === undefined) continue
        homes.add(home)
        // The service's HOME is shared with every other browser on the machine: only a HOME of the run's own tells
        // which handlers are its.
        if (home !== SERVICE_ENV.HOME) for (const pid of crashHandlersIn(home)) handlers.add(pid)
      }
      await new Promise(resolve => setTimeout(resolve, 40))
    }
  })()
  try {
    return { result: await work, markers, environments, roots, homes, handlers, mostAtOnce: () => mostAtOnce }
  } finally {
    done = true
    await poll
  }
}

const CATEGORIES = 'insights.lighthouse.onlyCategories'
/** Lighthouse settings that shorten a run on a page this small (its waits for quiet, and the full-page screenshot). */
const QUICK = {
  'insights.lighthouse.pauseAfterFcpMs': 100,
  'insights.lighthouse.pauseAfterLoadMs': 100,
  'insights.lighthouse.networkQuietThresholdMs': 100,
  'insights.lighthouse.cpuQuietThresholdMs': 100,
  'insights.lighthouse.disableFullPageScreenshot': true
}

describe('insights.lighthouse', () => {
  it('gives the report object with numeric scores; every request of the run passes the guard; the browser has the child environment only', async () => {
    const watched = await watching(get({
      url: `${fx.origin}/guarded`,
      meta: false,
      insights: true,
      'insights.technologies': false,
      [`${CATEGORIES}.0`]: 'seo',
      [`${CATEGORIES}.1`]: 'best-practices',
      ...QUICK
    }))
    const { res, body } = watched.result
    expect(res.statusCode, res.body.slice(0, 500)).toBe(200)
    expect(Object.keys(body.data.insights)).toEqual(['lighthouse'])
    const lhr = body.data.insights.lighthouse
    expect(lhr.lighthouseVersion).toMatch(/^\d+\.\d+\.\d+/)
    expect(lhr.requestedUrl).toBe(`${fx.origin}/guarded`)
    expect(lhr.runtimeError).toBeUndefined()
    expect(Object.keys(lhr.categories).sort()).toEqual(['best-practices', 'seo'])
    for (const category of Object.values<{ score: unknown }>(lhr.categories)) {
      expect(typeof category.score).toBe('number')
      expect(category.score).toBeGreaterThan(0)
      expect(category.score).toBeLessThanOrEqual(1)
    }
    expect(lhr.configSettings.formFactor).toBe('mobile')
    // The other keys went into Lighthouse's settings.
    expect(lhr.configSettings.disableFullPageScreenshot).toBe(true)
    expect(lhr.configSettings.onlyCategories).toEqual(['seo', 'best-practices'])
    expect(lhr.fullPageScreenshot).toBeUndefined()
    // The page's image and fetch to a loopback port outside ALLOW_PRIVATE_HOSTS were refused by the egress layer.
    expect(blockedConnections).toBe(0)
    const refusedInRun = app.logs.some(l => l.msg === 'browser egress refused' && String(l.url).includes(`:${blockedPort}`))
    expect(refusedInRun).toBe(true)

    // One Lighthouse Chromium ran; none of its processes holds a secret, and the browser itself started with the
    // allowlisted environment only (plus what Debian's launcher script and its shell add themselves).
    expect(watched.markers.size).toBe(1)
    expect(watched.environments.size).toBeGreaterThanOrEqual(2)
    for (const environ of watched.environments.values()) {
      const text = environ.join('\n')
      expect(text).not.toContain(SECRET_KEY)
      expect(text).not.toContain(UNLISTED)
    }
    const [root] = [...watched.roots.values()]
    const names = (watched.environments.get(root as number) ?? []).map(entry => entry.slice(0, entry.indexOf('=')))
    expect(names).toContain('PATH')
    // Of the service's variables (the test process's, which the service would have, and the app's), only the
    // allowlisted ones; Debian's launcher script adds its own (CHROME_*, GOOGLE_*), and its shell keeps PWD.
    const service = new Set([...Object.keys(process.env), ...Object.keys(SERVICE_ENV)])
    const foreign = names.filter(name => service.has(name) && !CHILD_ENV_NAMES.includes(name) &&
      !CHILD_ENV_PREFIXES.some(prefix => name.startsWith(prefix)) && !['PWD', 'OLDPWD', 'SHLVL', '_'].includes(name))
    expect(foreign).toEqual([])
    // Nothing of it is left: its crash handlers (outside its process group) and its HOME, crash database included,
    // went with it.
    expect(lighthouseProcesses().size).toBe(0)
    expect(watched.homes.size).toBe(1)
    const [home] = [...watched.homes]
    expect(home).not.toBe(SERVICE_ENV.HOME)
    expect(watched.handlers.size).toBeGreaterThan(0)
    expect([...watched.handlers].filter(isAlive)).toEqual([])
    expect(existsSync(home as string)).toBe(false)
  }, 120_000)

  it('runs two requests one after the other, giving html (with a preset) and csv reports unchanged', async () => {
    const both = Promise.all([
      get({ url: `${fx.origin}/desktop`, meta: false, 'insights.lighthouse.output': 'html', 'insights.lighthouse.preset': 'desktop', [`${CATEGORIES}.0`]: 'seo', ...QUICK }),
      get({ url: `${fx.origin}/two`, meta: false, 'insights.lighthouse.output': 'csv', [`${CATEGORIES}.0`]: 'seo', ...QUICK })
    ])
    let sawWaiting = false
    const spy = setInterval(() => { if (app.ctx.lighthouse.stats().waiting > 0) sawWaiting = true }, 20)
    const watched = await watching(both).finally(() => { clearInterval(spy) })
    const [html, csv] = watched.result
    expect(html.res.statusCode, html.res.body.slice(0, 500)).toBe(200)
    expect(csv.res.statusCode, csv.res.body.slice(0, 500)).toBe(200)
    // Two Lighthouse Chromiums, never two at once, and one run waited for the other.
    expect(watched.markers.size).toBe(2)
    expect(watched.mostAtOnce()).toBe(1)
    expect(sawWaiting).toBe(true)

    const report = html.body.data.insights.lighthouse
    expect(typeof report).toBe('string')
    // Lighthouse's own page, unchanged: its licence comment, then the document.
    expect(report).toMatch(/^<!--[\s\S]*?-->\s*<!doctype html>/i)
    // The LHR is embedded in Lighthouse's HTML report: the preset's form factor is in its settings.
    expect(report).toContain('"formFactor":"desktop"')
    expect(report).toContain(`${fx.origin}/desktop`)

    const table = csv.body.data.insights.lighthouse
    expect(typeof table).toBe('string')
    // Lighthouse's CSV: the run's URLs, then the category scores, then each audit.
    expect(table.startsWith('"requestedUrl","finalDisplayedUrl"')).toBe(true)
    expect(table).toContain(`"${fx.origin}/two","${fx.origin}/two"`)
    expect(table).toMatch(/category,score\r?\n"seo","(?:0(?:\.\d+)?|1)"/)
    expect(table).toContain('"seo","document-title","1"')
  }, 180_000)

  it('refuses an unknown preset, a setting pagecast keeps for itself and a setting Lighthouse refuses (400)', async () => {
    const preset = await get({ url: `${fx.origin}/one`, 'insights.lighthouse.preset': 'tablet' })
    expect(preset.res.statusCode).toBe(400)
    expect(preset.body.code).toBe('EINVALQUERY')
    expect(JSON.stringify(preset.body)).toContain('insights.lighthouse.preset')

    const reserved = await get({ url: `${fx.origin}/one`, 'insights.lighthouse.gatherMode': '/tmp/artifacts' })
    expect(reserved.res.statusCode).toBe(400)
    expect(reserved.body.code).toBe('EINVALQUERY')
    expect(JSON.stringify(reserved.body)).toContain('insights.lighthouse.gatherMode')

    const before = lighthouseProcesses().size
    const watched = await watching(get({ url: `${fx.origin}/one`, meta: false, [`${CATEGORIES}.0`]: 'speed' }))
    const { res, body } = watched.result
    expect(res.statusCode).toBe(400)
    expect(body.code).toBe('EINVALQUERY')
    expect(JSON.stringify(body)).toContain('unrecognized category')
    // Refused before any Lighthouse browser started.
    expect(watched.markers.size).toBe(before)
  }, 60_000)

  it('refuses a setting that names a page for its browser (blankPage): chrome://crash, file: and view-source: are never loaded (issue 20)', async () => {
    const before = lighthouseProcesses().size
    for (const blankPage of ['chrome://crash', 'file:///etc/passwd', `view-source:${fx.origin}/one`]) {
      const watched = await watching(get({ url: `${fx.origin}/one`, meta: false, [`${CATEGORIES}.0`]: 'seo', ...QUICK, 'insights.lighthouse.blankPage': blankPage }))
      const { res, body } = watched.result
      expect(res.statusCode, JSON.stringify(body).slice(0, 500)).toBe(400)
      expect(body.code).toBe('EINVALQUERY')
      expect(Object.keys(body.data)).toEqual(['insights.lighthouse.blankPage'])
      // Refused before any Lighthouse browser started.
      expect(watched.markers.size).toBe(before)
    }
  }, 180_000)

  it('stops at the deadline: ETIMEOUT, and no Lighthouse Chromium is left', async () => {
    // Lighthouse's modules loaded (a run refused by Lighthouse's own config check loads them), so that the deadline
    // comes while Lighthouse's browser waits for the page.
    const warm = await get({ url: `${fx.origin}/one`, meta: false, [`${CATEGORIES}.0`]: 'speed' })
    expect(warm.res.statusCode).toBe(400)
    const watched = await watching(get({ url: `${fx.origin}/slow`, meta: false, 'insights.lighthouse': true, timeout: '4s' }))
    const { res, body } = watched.result
    expect(res.statusCode, JSON.stringify(body).slice(0, 3000)).toBe(504)
    expect(body.code).toBe('ETIMEOUT')
    // The run had started its browser when the deadline came.
    expect(watched.markers.size).toBe(1)
    // The answer does not wait for the clean-up (as with any request past its deadline), which follows at once:
    // the browser's process group is killed, the worker thread ended, the slot and the turn given back.
    await expect.poll(() => lighthouseProcesses().size, { timeout: 2000, interval: 50 }).toBe(0)
    // Its crash handlers and HOME too.
    const [home] = [...watched.homes]
    expect(home).not.toBe(SERVICE_ENV.HOME)
    expect(watched.handlers.size).toBeGreaterThan(0)
    await expect.poll(() => [...watched.handlers].filter(isAlive), { timeout: 2000, interval: 50 }).toEqual([])
    await expect.poll(() => existsSync(home as string), { timeout: 2000, interval: 50 }).toBe(false)
    await expect.poll(() => app.ctx.browser.stats().active, { timeout: 2000, interval: 50 }).toBe(0)
    expect(app.ctx.lighthouse.stats()).toEqual({ running: false, waiting: 0 })
  }, 30_000)
})
