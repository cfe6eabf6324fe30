// loadPage against a real Chromium and loopback fixture pages: navigation results, the budget rules, and every
// step of docs/api.md §3.6's browser order.
import { launchTestBrowser, servePages } from '../helpers/chromium.ts'
import path from 'node:path'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Browser, BrowserContextOptions, Page } from 'playwright-core'
import { startFixtureServer } from '../helpers/fixture-server.ts'
import type { FixtureServer } from '../helpers/fixture-server.ts'
import { parseQuery } from '../../src/schemas/query.ts'
import type { ExtractOptions } from '../../src/schemas/options.ts'
import { AppError } from '../../src/errors.ts'
import { createBudget } from '../../src/browser/page/budget.ts'
import type { Budget } from '../../src/browser/page/budget.ts'
import { loadPage } from '../../src/browser/steps/index.ts'
import { loadAdblocker } from '../../src/adblock/index.ts'
import { evaluatorOf } from '../../src/browser/page/evaluate.ts'
import { PageCdpSession } from '../../src/browser/page/cdp-session.ts'

const PAGES = path.resolve(import.meta.dirname, '../fixtures/browser-pages')

let browser: Browser
let server: FixtureServer
/** Requests the tests hold open; answered or dropped at the end. */
const held: http.ServerResponse[] = []

beforeAll(async () => {
  browser = await launchTestBrowser()
  server = await startFixtureServer()
  await servePages(server, PAGES)
  server.route('/hop1', (_req, res) => { res.writeHead(301, { location: '/hop2' }); res.end() })
  server.route('/hop2', (_req, res) => { res.writeHead(302, { location: `${server.origin}/final` }); res.end() })
  server.route('/final', (_req, res) => {
    res.setHeader('x-repeat', ['a', 'b'])
    res.setHeader('X-Mixed-Case', 'yes')
    res.setHeader('content-type', 'text/html; charset=utf-8')
    res.statusCode = 404
    res.end('<!doctype html><title>Final</title><p>final page</p>')
  })
  server.route('/never', (_req, res) => { held.push(res) })
  server.route('/stalled', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    res.end('<!doctype html><title>Stalled</title><p>visible text</p><img src="/never" alt="">')
  })
  for (let i = 0; i < 12; i++) {
    server.route(`/loop${i}`, (_req, res) => { res.writeHead(302, { location: `/loop${i + 1}` }); res.end() })
  }
  server.route('/loop12', (_req, res) => { res.writeHead(200, { 'content-type': 'text/html' }); res.end('<p>end</p>') })
  server.route('/slow-data', (req, res) => {
    const i = new URL(req.url ?? '/', 'http://x').searchParams.get('i') ?? '0'
    setTimeout(() => { res.writeHead(200, { 'content-type': 'text/plain' }); res.end(`data-${i}`) }, 300)
  })
})

afterAll(async () => {
  for (const res of held) res.destroy()
  await server?.close()
  await browser?.close()
})

function optionsFor (pathname: string, extra = '', overrides: Partial<ExtractOptions> = {}): ExtractOptions {
  const query = `url=${encodeURIComponent(server.origin + pathname)}${extra === '' ? '' : `&${extra}`}`
  return { ...parseQuery(query, { plan: 'pro', headers: {}, maxTimeout: 28_000 }), ...overrides }
}

function budget (ms = 10_000): Budget {
  return createBudget(ms, new AbortController().signal)
}

async function withPage<T> (fn: (page: Page) => Promise<T>, contextOptions: BrowserContextOptions = {}): Promise<T> {
  const context = await browser.newContext({ viewport: { width: 800, height: 600 }, deviceScaleFactor: 1, ...contextOptions })
  try {
    return await fn(await context.newPage())
  } finally {
    await context.close()
  }
}

async function errorOf (work: Promise<unknown>): Promise<AppError> {
  try {
    await work
  } catch (err) {
    if (err instanceof AppError) return err
    throw err
  }
  throw new Error('expected an AppError')
}

describe('navigation', () => {
  it('records the final status, the headers and the redirect chain', async () => {
    await withPage(async (page) => {
      const loaded = await loadPage(page, optionsFor('/hop1'), budget())
      expect(loaded.url).toBe(`${server.origin}/final`)
      expect(loaded.statusCode).toBe(404)
      expect(loaded.redirects).toEqual([
        { statusCode: 301, url: `${server.origin}/hop1` },
        { statusCode: 302, url: `${server.origin}/hop2` }
      ])
      expect(loaded.headers['x-repeat']).toBe('a, b')
      expect(loaded.headers['x-mixed-case']).toBe('yes')
      expect(loaded.headers['content-type']).toBe('text/html; charset=utf-8')
      expect(Object.keys(loaded.headers).every(name => name === name.toLowerCase())).toBe(true)
      expect(loaded.html).toContain('final page')
    })
  })

  it('gives EINVALURL when the target cannot be reached', async () => {
    const closed = http.createServer()
    await new Promise<void>(resolve => closed.listen(0, '127.0.0.1', resolve))
    const { port } = closed.address() as AddressInfo
    await new Promise(resolve => closed.close(resolve))
    await withPage(async (page) => {
      const url = `http://127.0.0.1:${port}/`
      const err = await errorOf(loadPage(page, { ...optionsFor('/'), url }, budget()))
      expect(err.code).toBe('EINVALURL')
      expect(String(err.data.url)).toContain(url)
    })
  })

  it('gives EBRWSRTIMEOUT when the navigation never commits', async () => {
    await withPage(async (page) => {
      const err = await errorOf(loadPage(page, optionsFor('/never'), budget(1500)))
      expect(err.code).toBe('EBRWSRTIMEOUT')
      expect(err.status).toBe(504)
    })
  })

  it('goes on with a committed page that never finishes loading', async () => {
    await withPage(async (page) => {
      const loaded = await loadPage(page, optionsFor('/stalled'), budget(2500))
      expect(loaded.statusCode).toBe(200)
      expect(loaded.html).toContain('visible text')
    })
  })

  it('gives EMAXREDIRECTS past 10 redirects', async () => {
    await withPage(async (page) => {
      const err = await errorOf(loadPage(page, optionsFor('/loop0'), budget()))
      expect(err.code).toBe('EMAXREDIRECTS')
    })
  })

  it('gives EMAXREDIRECTS past the maxRedirects it is given (MAX_REDIRECTS), sooner than the default', async () => {
    await withPage(async (page) => {
      // loop8 -> loop12: four redirects, within the default 10.
      const loaded = await loadPage(page, optionsFor('/loop8'), budget())
      expect(loaded.redirects).toHaveLength(4)
      const err = await errorOf(loadPage(page, optionsFor('/loop8'), budget(), { maxRedirects: 3 }))
      expect(err.code).toBe('EMAXREDIRECTS')
      expect(err.data.url).toBe(`The URL \`${server.origin}/loop8\` redirected more than 3 times.`)
      const exact = await loadPage(page, optionsFor('/loop8'), budget(), { maxRedirects: 4 })
      expect(exact.statusCode).toBe(200)
    })
  })

  it('runs the afterNavigation hook on the loaded page', async () => {
    await withPage(async (page) => {
      const seen: string[] = []
      const loaded = await loadPage(page, optionsFor('/box.html'), budget(), {
        afterNavigation: async (hooked) => {
          seen.push(hooked.url())
          await hooked.evaluate('document.body.dataset.hook = "ran"')
        }
      })
      expect(seen).toEqual([`${server.origin}/box.html`])
      expect(loaded.html).toContain('data-hook="ran"')
    })
  })

  it('aborts with the signal\'s reason', async () => {
    await withPage(async (page) => {
      const controller = new AbortController()
      const reason = new AppError('ETIMEOUT')
      setTimeout(() => controller.abort(reason), 300)
      await expect(loadPage(page, optionsFor('/never'), createBudget(10_000, controller.signal))).rejects.toBe(reason)
    })
  })
})

describe('waits', () => {
  it('waitForSelector waits for a late element; a missing one is not an error', async () => {
    await withPage(async (page) => {
      const loaded = await loadPage(page, optionsFor('/delayed.html', 'waitForSelector=%23late&waitUntil=domcontentloaded'), budget())
      expect(loaded.html).toContain('late content')
    })
    await withPage(async (page) => {
      const loaded = await loadPage(page, optionsFor('/delayed.html', 'waitForSelector=%23missing'), budget(2000))
      expect(loaded.html).toContain('early content')
    })
  })

  it('waitForTimeout waits before reading the page', async () => {
    await withPage(async (page) => {
      const loaded = await loadPage(page, optionsFor('/delayed.html', 'waitForTimeout=900&waitUntil=domcontentloaded'), budget())
      expect(loaded.html).toContain('late content')
    })
  })

  it('networkidle0 waits for a request started after load', async () => {
    await withPage(async (page) => {
      const loaded = await loadPage(page, optionsFor('/idle.html?n=1', 'waitUntil=networkidle0'), budget())
      expect(loaded.html).toContain('data-0')
    })
  })

  it('auto waits for load and then for at most two requests in flight', async () => {
    await withPage(async (page) => {
      const loaded = await loadPage(page, optionsFor('/idle.html?n=3'), budget())
      expect(loaded.html).toContain('data-0 data-1 data-2')
    })
  })
})

describe('page changes', () => {
  it('applies the print media type and stops animations and transitions', async () => {
    await withPage(async (page) => {
      await loadPage(page, optionsFor('/animated.html', 'mediaType=print'), budget())
      const state = await page.evaluate(`({
        print: matchMedia('print').matches,
        width: getComputedStyle(document.getElementById('grow')).width,
        transition: getComputedStyle(document.getElementById('fade')).transitionDuration
      })`)
      expect(state).toEqual({ print: true, width: '300px', transition: '0s' })
    })
  })

  it("evaluates its own expressions through the page's CDP session, never through Playwright's page.evaluate", async () => {
    // Playwright compiles its utility script into each new document on a page's first page.evaluate (page/evaluate.ts):
    // the default steps (animations, adblock) and the serialization must not call it. Counted, not made to throw: the
    // adblock step takes a failed evaluation for a page that went away and goes on.
    const adblocker = await loadAdblocker()
    await withPage(async (page) => {
      const evaluate = page.evaluate.bind(page)
      let calls = 0
      page.evaluate = (async (...args: Parameters<Page['evaluate']>) => { calls += 1; return await evaluate(...args) }) as Page['evaluate']
      const loaded = await loadPage(page, optionsFor('/animated.html', 'adblock=true'), budget(), { adblocker })
      page.evaluate = evaluate
      expect(calls).toBe(0)
      expect(loaded.html).toContain('fading')
      expect(await page.evaluate(`getComputedStyle(document.getElementById('grow')).width`)).toBe('300px')
    })
  })

  it('evaluates as Playwright does: values as JSON, promises awaited, a throw in the page as an error, page scripts off too', async () => {
    for (const javaScriptEnabled of [true, false]) {
      await withPage(async (page) => {
        await page.goto(`${server.origin}/box.html`)
        const evaluate = evaluatorOf(new PageCdpSession(page))
        expect(await evaluate('({ title: document.title, n: [1, 2], missing: undefined })')).toEqual({ title: 'Box', n: [1, 2] })
        expect(await evaluate('Promise.resolve(7)')).toBe(7)
        await expect(evaluate('(() => { throw new TypeError("no such thing") })()')).rejects.toThrow(/TypeError: no such thing/)
      }, { javaScriptEnabled })
    }
  })

  it('leaves animations alone with animations=true and the screen media type by default', async () => {
    await withPage(async (page) => {
      await loadPage(page, optionsFor('/animated.html', 'animations=true'), budget())
      const state = await page.evaluate(`({
        print: matchMedia('print').matches,
        width: parseFloat(getComputedStyle(document.getElementById('grow')).width)
      })`) as { print: boolean, width: number }
      expect(state.print).toBe(false)
      expect(state.width).toBeLessThan(300)
    })
  })

  it('injects modules, scripts and styles, inline and by URL, skipping ones that fail', async () => {
    await withPage(async (page) => {
      const options = optionsFor('/box.html', '', {
        modules: ['document.body.dataset.module = "inline"', `${server.origin}/injected.mjs`],
        scripts: ['document.body.dataset.script = "inline"', `${server.origin}/injected.js`, `${server.origin}/missing.js`],
        styles: ['body { color: rgb(1, 2, 3); }', `${server.origin}/injected.css`, `${server.origin}/missing.css`]
      })
      await loadPage(page, options, budget())
      await page.waitForFunction('document.body.dataset.module === "inline" && document.body.dataset.moduleUrl === "loaded"', undefined, { timeout: 5000 })
      const state = await page.evaluate(`({
        script: document.body.dataset.script,
        scriptUrl: document.body.dataset.scriptUrl,
        color: getComputedStyle(document.body).color,
        background: getComputedStyle(document.body).backgroundColor
      })`)
      expect(state).toEqual({ script: 'inline', scriptUrl: 'loaded', color: 'rgb(1, 2, 3)', background: 'rgb(0, 200, 0)' })
    })
  })

  it('clicks each selector in turn, skipping missing ones', async () => {
    await withPage(async (page) => {
      const loaded = await loadPage(page, optionsFor('/button.html', 'timeout=5500', { click: ['#missing', '#make-red'] }), budget())
      expect(loaded.html).toContain('clicked')
      expect(await page.evaluate('getComputedStyle(document.body).backgroundColor')).toBe('rgb(255, 0, 0)')
    })
  })

  it('scrolls the element into view', async () => {
    await withPage(async (page) => {
      await loadPage(page, optionsFor('/scroll.html', 'scroll=%23target'), budget())
      expect(await page.evaluate('window.scrollY')).toBeGreaterThan(4000)
    })
  })

  it('works with JavaScript off: styles are injected and waits end', async () => {
    await withPage(async (page) => {
      const options = optionsFor('/box.html', 'javascript=false&waitForSelector=%23box', {
        styles: ['body { color: rgb(4, 5, 6); }', `${server.origin}/injected.css`],
        scripts: ['document.body.dataset.script = "inline"']
      })
      const loaded = await loadPage(page, options, budget())
      expect(loaded.statusCode).toBe(200)
      const state = await page.evaluate(`({
        color: getComputedStyle(document.body).color,
        background: getComputedStyle(document.body).backgroundColor,
        script: document.body.dataset.script ?? null
      })`)
      expect(state).toEqual({ color: 'rgb(4, 5, 6)', background: 'rgb(0, 200, 0)', script: null })
    }, { javaScriptEnabled: false })
  })
})
