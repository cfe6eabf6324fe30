// The supervised browser: concurrency, the bounded queue, aborts, crashes and relaunches, close(), and pages that
// try to hang a job (dialogs, downloads, popups). Real Chromium, loopback fixture servers only. No timings are
// asserted (other suites share the two cores); "at once" means "before anything else was let go".
import { execFile } from 'node:child_process'
import { existsSync, readdirSync, statSync } from 'node:fs'
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import type http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { AppError, isAppError } from '../../src/errors.ts'
import { createAddressGuard } from '../../src/net/guard.ts'
import type { AddressGuard } from '../../src/net/guard.ts'
import { createBrowserPool } from '../../src/browser/pool/index.ts'
import type { BrowserPool, JobInfo } from '../../src/browser/pool/index.ts'
import type { Emulation } from '../../src/browser/emulation.ts'
import { BrowserError, isRetryable, toBrowserError } from '../../src/browser/errors.ts'
import { DISABLED_FEATURES, findChromium } from '../../src/browser/chromium.ts'
import { desktopUserAgent } from '../../src/schemas/devices.ts'
import { startFixtureServer } from '../helpers/fixture-server.ts'
import type { FixtureServer } from '../helpers/fixture-server.ts'
import { crashHandlersIn, homeOf, isAlive } from '../helpers/processes.ts'

const run = promisify(execFile)
const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/browser')

const EMULATION: Emulation = {
  viewport: { width: 800, height: 600 },
  deviceScaleFactor: 1,
  isMobile: false,
  hasTouch: false,
  userAgent: 'pagecast-pool-test',
  javaScriptEnabled: true,
  colorScheme: 'no-preference',
  reducedMotion: false,
  extraHTTPHeaders: {}
}

let server: FixtureServer
let guard: AddressGuard
let pool: BrowserPool

function job<T> (target: BrowserPool, fn: (page: Page, info: JobInfo) => Promise<T>, signal: AbortSignal = AbortSignal.timeout(20_000)): Promise<T> {
  return target.run(fn, { signal, emulation: EMULATION })
}

async function settled (promise: Promise<unknown>): Promise<unknown> {
  return await promise.then(() => undefined, (err: unknown) => err)
}

/** Live members of a process group, as `pgrep` sees them (zombies excluded). */
async function groupMembers (pgid: number): Promise<number[]> {
  try {
    const { stdout } = await run('pgrep', ['-g', String(pgid)])
    const pids = stdout.split('\n').filter((line) => line.trim() !== '').map(Number)
    const live: number[] = []
    for (const pid of pids) {
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '')
      const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]
      if (state !== '' && state !== 'Z' && state !== undefined) live.push(pid)
    }
    return live
  } catch {
    return []
  }
}

/** A gate a job waits on, opened by the test. */
function gate (): { wait: Promise<void>, open: () => void } {
  let open = (): void => {}
  const wait = new Promise<void>((resolve) => { open = resolve })
  return { wait, open }
}

beforeAll(async () => {
  server = await startFixtureServer()
  for (const file of ['plain.html', 'dialogs.html', 'download.html', 'popup.html']) {
    const body = await readFile(path.join(FIXTURES, file))
    server.route(`/${file.replace(/\?.*$/, '')}`, (_req: http.IncomingMessage, res: http.ServerResponse) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      res.end(body)
    })
  }
  server.route('/file.bin', (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-disposition': 'attachment; filename="file.bin"' })
    res.end(Buffer.alloc(64 * 1024, 1))
  })
  server.route('/attachment', (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/zip', 'content-disposition': 'attachment; filename="a.zip"' })
    res.end(Buffer.alloc(1024, 2))
  })
  guard = createAddressGuard({ allowPrivateHosts: [server.host] })
  pool = await createBrowserPool({ concurrency: 2, queueLimit: 4 }, { guard })
})

afterAll(async () => {
  await pool?.close()
  await server?.close()
})

describe('scheduling', () => {
  it('runs at most `concurrency` jobs at once, and all of them', async () => {
    let inFlight = 0
    let highest = 0
    const results = await Promise.all(Array.from({ length: 6 }, async (_, i) => await job(pool, async (page) => {
      inFlight += 1
      highest = Math.max(highest, inFlight)
      try {
        await page.goto(`${server.origin}/plain.html?job=${i}`)
        await page.waitForTimeout(150)
        return await page.title()
      } finally {
        inFlight -= 1
      }
    })))
    expect(results).toEqual(Array(6).fill('Plain fixture'))
    expect(highest).toBe(2)
  })

  it('answers EBUSY with retry-after at once when the queue is full, and an aborted queued job never runs', async () => {
    const hold = gate()
    const started: number[] = []
    const holders = [0, 1].map(async (i) => await job(pool, async () => { started.push(i); await hold.wait; return i }))
    await vi.waitFor(() => { expect(started.length).toBe(2) })
    const queued = [2, 3, 4].map(async (i) => await job(pool, async () => { started.push(i); return i }))
    const abort = new AbortController()
    const abandoned = job(pool, async () => { started.push(99); return 99 }, abort.signal)
    expect(pool.stats().queued).toBe(4)

    const busy = await settled(job(pool, async () => { started.push(100); return 100 }))
    expect(isAppError(busy)).toBe(true)
    expect((busy as AppError).code).toBe('EBUSY')
    expect((busy as AppError).status).toBe(503)
    // retry-after is the measured wait of the place it asked for: the release that frees a slot, then the queue of
    // four, one release each (five releases at the measured pace).
    expect((busy as AppError).headers['retry-after']).toBe(String(Math.max(1, Math.ceil(5 * pool.stats().paceMs / 1000))))
    expect(pool.stats().refused.full).toBeGreaterThan(0)
    // Rejected while the holders still hold: nothing was let go to make room.
    expect(started.sort()).toEqual([0, 1])

    abort.abort(new AppError('ETIMEOUT'))
    const aborted = await settled(abandoned)
    expect((aborted as AppError).code).toBe('ETIMEOUT')
    expect(pool.stats().queued).toBe(3)

    hold.open()
    expect(await Promise.all([...holders, ...queued])).toEqual([0, 1, 2, 3, 4])
    expect(started).not.toContain(99)
    expect(started).not.toContain(100)
  })

  it('closes the page of a job that hangs when its signal aborts, and the slot serves again', async () => {
    let jobError: unknown
    let jobSettled = false
    let navigated = false
    const controller = new AbortController()
    const hung = job(pool, async (page) => {
      await page.goto(`${server.origin}/plain.html`)
      navigated = true
      try {
        // Never resolves by itself.
        await page.evaluate('new Promise(() => {})')
      } catch (err) {
        jobError = err
      } finally {
        jobSettled = true
      }
    }, controller.signal)
    await vi.waitFor(() => { expect(navigated).toBe(true) }, { timeout: 10_000 })
    await new Promise((resolve) => setTimeout(resolve, 200))
    controller.abort(new AppError('ETIMEOUT'))
    const error = await settled(hung)
    expect((error as AppError).code).toBe('ETIMEOUT')
    // The pending Playwright call was rejected by the page closing.
    await vi.waitFor(() => { expect(jobSettled).toBe(true) }, { timeout: 10_000 })
    expect(String(jobError)).toMatch(/closed/i)
    const titles = await Promise.all([1, 2, 3].map(async () => await job(pool, async (page) => {
      await page.goto(`${server.origin}/plain.html`)
      return await page.title()
    })))
    expect(titles).toEqual(['Plain fixture', 'Plain fixture', 'Plain fixture'])
  })

  it('runSlot() takes a slot like a job (no page): jobs queue behind it, it queues behind them, EBUSY beyond', async () => {
    const hold = gate()
    const order: string[] = []
    const slots = [0, 1].map(async (i) => await pool.runSlot(async (signal) => { order.push(`slot${i}`); await hold.wait; return signal.aborted }, { signal: AbortSignal.timeout(20_000) }))
    await vi.waitFor(() => { expect(order.length).toBe(2) })
    expect(pool.stats().active).toBe(2)
    const queuedJob = job(pool, async () => { order.push('job') })
    const queuedSlot = pool.runSlot(async () => { order.push('slot2') }, { signal: AbortSignal.timeout(20_000) })
    expect(pool.stats().queued).toBe(2)
    const fillers = [1, 2].map(async () => await job(pool, async () => {}))
    expect(pool.stats().queued).toBe(4)
    const busy = await settled(pool.runSlot(async () => { order.push('never') }, { signal: AbortSignal.timeout(20_000) }))
    expect((busy as AppError).code).toBe('EBUSY')
    hold.open()
    expect(await Promise.all(slots)).toEqual([false, false])
    await Promise.all([queuedJob, queuedSlot, ...fillers])
    // Both waited for the slot work to let go (a job's own start then takes a page first).
    expect(order.slice(0, 2)).toEqual(['slot0', 'slot1'])
    expect(order.slice(2).sort()).toEqual(['job', 'slot2'])
    await vi.waitFor(() => { expect(pool.stats().active).toBe(0) })
    const failing = await settled(pool.runSlot(async () => { throw new Error('slot work failed') }, { signal: AbortSignal.timeout(20_000) }))
    expect(String(failing)).toContain('slot work failed')
    await vi.waitFor(() => { expect(pool.stats().active).toBe(0) })
  })

  it('sends its own default user agent, the desktop one of the Chromium it runs, to a job that names none', async () => {
    const { userAgent: _named, ...unnamed } = EMULATION
    const seen = await pool.run(async (page) => await page.evaluate(() => navigator.userAgent), { signal: AbortSignal.timeout(20_000), emulation: unnamed })
    expect(seen).toBe(desktopUserAgent(pool.chromiumVersion()))
    expect(seen).toMatch(/Chrome\/\d+\.0\.0\.0 Safari/)
    // A job that names one sends it.
    expect(await job(pool, async (page) => await page.evaluate(() => navigator.userAgent))).toBe('pagecast-pool-test')
  })

  it('starts a job sent right after an answer once the last job\'s reset is over, not beside it (resets before jobs)', async () => {
    // Two leases of this profile, both idle: a job beside a reset would not have to wait for a new context either.
    await Promise.all([0, 1].map(async (i) => await job(pool, async (page) => { await page.goto(`${server.origin}/plain.html?warm=${i}`) })))
    await vi.waitFor(() => { expect(pool.stats().active).toBe(0) })
    // One at a time, each sent as soon as the last one answered: its reset is under way, and a slot is free.
    const seen: number[] = []
    for (let i = 0; i < 8; i++) {
      seen.push(await job(pool, async (page) => {
        const active = pool.stats().active
        await page.goto(`${server.origin}/plain.html?back=${i}`)
        return active
      }))
    }
    // Beside the reset, a job finds two slots taken (its own and the reset's). The hold ends at twice the measured
    // reset time, so on a loaded machine a slow reset may still end after the next job began: most, not all.
    expect(seen.filter(active => active === 1).length).toBeGreaterThanOrEqual(5)
  })

  it('rejects a job whose signal is already aborted without running it', async () => {
    let ran = false
    const error = await settled(job(pool, async () => { ran = true }, AbortSignal.abort(new AppError('ETIMEOUT'))))
    expect((error as AppError).code).toBe('ETIMEOUT')
    expect(ran).toBe(false)
  })
})

describe('pages that try to hang a job', () => {
  it('dismisses alert, confirm and prompt loops', async () => {
    const result = await job(pool, async (page) => {
      await page.goto(`${server.origin}/dialogs.html`)
      return { title: await page.title(), answers: await page.evaluate('window.__answers') as unknown[] }
    })
    expect(result.title).toBe('dialogs done')
    expect(result.answers).toHaveLength(40)
    // Dismissed: confirm() is false, prompt() is null.
    expect(new Set(result.answers)).toEqual(new Set([false, null]))
  })

  it('refuses downloads without hanging', async () => {
    const result = await job(pool, async (page) => {
      await page.goto(`${server.origin}/download.html`)
      await page.click('#download')
      await page.click('#attachment')
      await page.waitForTimeout(300)
      return { url: page.url(), title: await page.title() }
    })
    expect(result).toEqual({ url: `${server.origin}/download.html`, title: 'Download' })
    expect(server.hitsOf('/file.bin') + server.hitsOf('/attachment')).toBeGreaterThan(0)
    const direct = await settled(job(pool, async (page) => { await page.goto(`${server.origin}/file.bin`) }))
    expect(isAppError(direct)).toBe(true)
    expect((direct as AppError).code).toBe('EINVALURL')
  })

  it('closes popups as they open', async () => {
    const result = await job(pool, async (page) => {
      let appeared = 0
      page.context().on('page', () => { appeared += 1 })
      await page.goto(`${server.origin}/popup.html`)
      await page.click('#blank')
      for (let i = 0; i < 50 && (appeared < 4 || page.context().pages().length > 1); i++) await page.waitForTimeout(100)
      return { appeared, open: page.context().pages().length, opened: await page.evaluate('window.__opened') }
    })
    // Three window.open() calls and one target=_blank link: each opened, each closed.
    expect(result.opened).toEqual([true, true, true])
    expect(result.appeared).toBe(4)
    expect(result.open).toBe(1)
  })

  it('denies permission prompts', async () => {
    const answers = await job(pool, async (page) => {
      await page.goto(`${server.origin}/plain.html`)
      return await page.evaluate(`(async () => ({
        notification: await Notification.requestPermission(),
        geolocation: await new Promise((resolve) => navigator.geolocation.getCurrentPosition(() => resolve('granted'), (e) => resolve('error ' + e.code), { timeout: 5000 }))
      }))()`)
    })
    expect(answers).toEqual({ notification: 'denied', geolocation: 'error 1' })
  })
})

describe('supervision', () => {
  let relaunching: BrowserPool

  beforeAll(async () => {
    relaunching = await createBrowserPool({ concurrency: 1, queueLimit: 4, maxJobsPerBrowser: 3 }, { guard })
  })

  afterAll(async () => {
    await relaunching?.close()
  })

  it("starts Chromium with Playwright's disabled features and DISABLED_FEATURES in its one --disable-features, and no launcher variable", async () => {
    await job(relaunching, async (page) => { await page.goto(`${server.origin}/plain.html?features`) })
    const pid = relaunching.browserPid() as number
    const args = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0')
    const switches = args.filter((arg) => arg.startsWith('--disable-features='))
    expect(switches).toHaveLength(1)
    const features = switches[0]!.slice('--disable-features='.length).split(',')
    // PaintHolding: one of Playwright's own.
    expect(features).toEqual(expect.arrayContaining([...DISABLED_FEATURES, 'PaintHolding']))
    expect(path.basename(await readFile(`/proc/${pid}/comm`, 'utf8').then(s => s.trim()))).not.toBe('chromium-exec.sh')
    const environ = (await readFile(`/proc/${pid}/environ`, 'utf8')).split('\0')
    expect(environ.filter((entry) => entry.startsWith('PAGECAST_'))).toEqual([])
  })

  it('fails the running job with a retryable code when Chromium is killed, then relaunches', async () => {
    const pid = relaunching.browserPid()
    expect(pid).toBeGreaterThan(0)
    const home = homeOf(pid as number) as string
    const handlers = crashHandlersIn(home)
    expect(handlers.length).toBeGreaterThan(0)
    const launches = relaunching.stats().launches
    let navigated = false
    const running = job(relaunching, async (page) => {
      await page.goto(`${server.origin}/plain.html?kill`)
      navigated = true
      await page.waitForTimeout(20_000)
    })
    await vi.waitFor(() => { expect(navigated).toBe(true) }, { timeout: 10_000 })
    process.kill(pid as number, 'SIGKILL')
    const error = await settled(running)
    expect(isAppError(error)).toBe(true)
    expect((error as AppError).code).toBe('EFATAL')
    expect(isRetryable(error)).toBe(true)
    const title = await job(relaunching, async (page) => {
      await page.goto(`${server.origin}/plain.html`)
      return await page.title()
    })
    expect(title).toBe('Plain fixture')
    expect(relaunching.stats().launches).toBe(launches + 1)
    expect(relaunching.browserPid()).not.toBe(pid)
    expect(relaunching.health()).toBe(true)
    await vi.waitFor(async () => { expect(await groupMembers(pid as number)).toEqual([]) })
    // The killed browser's crash handlers (outside its group) and HOME went too; the new browser has another HOME.
    await vi.waitFor(() => {
      expect(handlers.filter(isAlive)).toEqual([])
      expect(existsSync(home)).toBe(false)
    }, { timeout: 10_000 })
    const newHome = homeOf(relaunching.browserPid() as number) as string
    expect(newHome).not.toBe(home)
    expect(crashHandlersIn(newHome).length).toBeGreaterThan(0)
  })

  it('replaces the browser after maxJobsPerBrowser jobs, once its running jobs are done', async () => {
    const firstPid = relaunching.browserPid() as number
    const firstHome = homeOf(firstPid) as string
    const firstHandlers = crashHandlersIn(firstHome)
    expect(firstHandlers.length).toBeGreaterThan(0)
    const launches = relaunching.stats().launches
    const titles: string[] = []
    for (let i = 0; i < 4; i++) {
      titles.push(await job(relaunching, async (page) => {
        await page.goto(`${server.origin}/plain.html?n=${i}`)
        return await page.title()
      }))
    }
    expect(titles).toEqual(Array(4).fill('Plain fixture'))
    expect(relaunching.stats().launches).toBeGreaterThan(launches)
    expect(relaunching.browserPid()).not.toBe(firstPid)
    await vi.waitFor(async () => { expect(await groupMembers(firstPid)).toEqual([]) }, { timeout: 10_000 })
    await vi.waitFor(() => {
      expect(firstHandlers.filter(isAlive)).toEqual([])
      expect(existsSync(firstHome)).toBe(false)
    }, { timeout: 10_000 })
  })

  it('close() lets the running job finish, rejects the queued one, and leaves no Chromium process', async () => {
    const closing = await createBrowserPool({ concurrency: 1, queueLimit: 4 }, { guard })
    const pid = closing.browserPid() as number
    expect(await groupMembers(pid)).not.toEqual([])
    const hold = gate()
    const running = job(closing, async (page) => {
      await page.goto(`${server.origin}/plain.html`)
      await hold.wait
      return await page.title()
    })
    await vi.waitFor(() => { expect(closing.stats().active).toBe(1) })
    let queuedRan = false
    const queued = job(closing, async () => { queuedRan = true })
    const closed = closing.close()
    const queuedError = await settled(queued)
    expect((queuedError as AppError).code).toBe('EBUSY')
    expect(closing.health()).toBe(false)
    hold.open()
    expect(await running).toBe('Plain fixture')
    await closed
    expect(queuedRan).toBe(false)
    expect(await groupMembers(pid)).toEqual([])
    const after = await settled(job(closing, async () => 'late'))
    expect((after as AppError).code).toBe('EBUSY')
  })
})

describe('a browser that will not close', () => {
  it('is killed, with every process of its tree, when close() times out', async () => {
    const stuck = await createBrowserPool({ concurrency: 1, queueLimit: 1, closeTimeoutMs: 1000 }, { guard })
    const pid = stuck.browserPid() as number
    const home = homeOf(pid) as string
    const handlers = crashHandlersIn(home)
    expect(handlers.length).toBeGreaterThan(0)
    expect(await job(stuck, async (page) => { await page.goto(`${server.origin}/plain.html`); return await page.title() })).toBe('Plain fixture')
    const members = await groupMembers(pid)
    expect(members.length).toBeGreaterThan(1)
    // A stopped browser never answers Browser.close.
    process.kill(pid, 'SIGSTOP')
    await stuck.close()
    await vi.waitFor(async () => { expect(await groupMembers(pid)).toEqual([]) }, { timeout: 10_000 })
    expect(handlers.filter(isAlive)).toEqual([])
    expect(existsSync(home)).toBe(false)
  })
})

describe("Chromium's crash reporter", () => {
  // It cannot be turned off (src/browser/chromium.ts): its handlers run outside the browser's process group, and
  // their database holds minidumps (a crashed process's memory, the page it rendered included).
  it("keeps its handlers and dumps in a HOME of the launch's own, all gone once the pool has closed", async () => {
    // The service's own HOME, as the child environment would pass it on.
    const serviceHome = await mkdtemp(path.join(os.tmpdir(), 'pagecast-service-home-'))
    const crashing = await createBrowserPool({ concurrency: 1, queueLimit: 1, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: serviceHome } }, { guard })
    try {
      const pid = crashing.browserPid() as number
      const home = homeOf(pid) as string
      expect(home).toBeDefined()
      // A private folder made for this launch.
      expect(path.dirname(home)).toBe(os.tmpdir())
      expect(statSync(home).mode & 0o777).toBe(0o700)
      const handlers = crashHandlersIn(home)
      expect(handlers.length).toBeGreaterThan(0)
      // A renderer that crashes leaves a minidump in the crash database.
      const crashed = await settled(job(crashing, async (page) => {
        await page.goto(`${server.origin}/plain.html?crash`)
        const cdp = await page.context().newCDPSession(page)
        await cdp.send('Page.crash').catch(() => {})
        await page.waitForTimeout(20_000)
      }))
      expect((crashed as AppError).code).toBe('EPAGECRASH')
      const pending = path.join(home, '.config', 'chromium', 'Crash Reports', 'pending')
      await vi.waitFor(() => { expect(readdirSync(pending).filter(name => name.endsWith('.dmp')).length).toBeGreaterThan(0) }, { timeout: 10_000 })
      // Still rendering after that.
      expect(await job(crashing, async (page) => { await page.goto(`${server.origin}/plain.html`); return await page.title() })).toBe('Plain fixture')
      await crashing.close()
      expect(handlers.filter(isAlive)).toEqual([])
      expect(existsSync(home)).toBe(false)
      expect(readdirSync(serviceHome)).toEqual([])
    } finally {
      await crashing.close()
      await rm(serviceHome, { recursive: true, force: true })
    }
  })
})

describe('toBrowserError', () => {
  it('maps Playwright failures to public codes', () => {
    const timeout = Object.assign(new Error('page.goto: Timeout 1000ms exceeded.'), { name: 'TimeoutError' })
    expect(toBrowserError(timeout, 'navigation').code).toBe('EBRWSRTIMEOUT')
    expect(toBrowserError(timeout, 'capture').code).toBe('EBRWSRTIMEOUT')
    const closed = toBrowserError(new Error('page.evaluate: Target page, context or browser has been closed'), 'evaluate')
    expect(closed.code).toBe('EFATAL')
    expect(isRetryable(closed)).toBe(true)
    expect(isRetryable(toBrowserError(new Error('Protocol error (Runtime.callFunctionOn): Session closed.'), 'capture'))).toBe(true)
    expect(isRetryable(toBrowserError(new Error('Navigation failed because page crashed!'), 'navigation'))).toBe(true)
    const unreachable = toBrowserError(new Error('page.goto: net::ERR_NAME_NOT_RESOLVED at http://nowhere.test/'), 'navigation')
    expect(unreachable.code).toBe('EINVALURL')
    expect(isRetryable(unreachable)).toBe(false)
    const reset = toBrowserError(new Error('page.goto: net::ERR_CONNECTION_RESET at http://x.test/'), 'navigation')
    expect(reset.code).toBe('EINVALURL')
    expect(isRetryable(reset)).toBe(true)
    const own = new AppError('EFORBIDDENURL')
    expect(toBrowserError(own, 'navigation')).toBe(own)
    const odd = toBrowserError(new Error('something else entirely'), 'capture')
    expect(odd.code).toBe('EFATAL')
    expect(odd).toBeInstanceOf(BrowserError)
    expect(isRetryable(odd)).toBe(false)
  })
})

describe('findChromium', () => {
  it('takes CHROMIUM_PATH as given, else the first known name on PATH', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'pagecast-chromium-'))
    try {
      const fake = path.join(dir, 'chromium-browser')
      await writeFile(fake, '#!/bin/sh\n')
      await chmod(fake, 0o755)
      expect(findChromium({ searchPath: `/nonexistent:${dir}` })).toBe(fake)
      expect(findChromium({ chromiumPath: fake })).toBe(fake)
      expect(() => findChromium({ chromiumPath: path.join(dir, 'missing') })).toThrow(/CHROMIUM_PATH/)
      expect(() => findChromium({ searchPath: '/nonexistent' })).toThrow(/no Chromium found/)
      expect(findChromium({})).toMatch(/chrom/)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
