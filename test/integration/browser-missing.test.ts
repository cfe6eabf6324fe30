// Chromium missing or unlaunchable (issue 25 item 4, docs/api.md §12.3): the real service (test/helpers/build.ts)
// with a CHROMIUM_PATH that names no file, or a file that exits at once. A request that needs the browser answers
// 503 EBROWSER, saying what to install or set, with retry-after; a request that needs none is served; /ready says
// the browser is the failing check; a launch is not tried per request but after a backoff, so a browser installed
// afterwards is picked up.
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { build, qs, type Built } from '../helpers/build.ts'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'
import { browserProcesses, isAlive } from '../helpers/processes.ts'

let fx: FixtureServer
let app: Built | undefined
let dir: string

beforeAll(async () => { fx = await startFixtureServer() })
afterAll(async () => { await fx?.close() })
afterEach(async () => {
  await app?.close()
  app = undefined
  rmSync(dir, { recursive: true, force: true })
})

async function newApp (chromiumPath: string): Promise<Built> {
  app = await build({ ALLOW_PRIVATE_HOSTS: fx.host, API_KEYS: 'k', CHROMIUM_PATH: chromiumPath, LOG_LEVEL: 'warn' })
  return app
}

async function shot (built: Built, tag: string): Promise<{ status: number, body: Record<string, unknown>, retryAfter: string | undefined, raw: string }> {
  const res = await built.pro.inject({ url: `/?${qs({ url: `${fx.origin}/red/?${tag}`, screenshot: true, waitUntil: 'load' })}`, headers: { 'x-api-key': 'k' } })
  const retryAfter = res.headers['retry-after']
  return { status: res.statusCode, body: res.json(), retryAfter: typeof retryAfter === 'string' ? retryAfter : undefined, raw: res.body }
}

/** The launch attempts the pool logged (one line per failed start). */
function failedStarts (built: Built): number {
  return built.logs.filter(line => line.msg === 'browser failed to start; requests that need it get EBROWSER until the next attempt').length
}

function expectEbrowser (answer: Awaited<ReturnType<typeof shot>>): void {
  expect(answer.status).toBe(503)
  expect(answer.body).toMatchObject({ status: 'error', code: 'EBROWSER' })
  expect(String(answer.body.message)).toMatch(/install Chromium/)
  expect(String(answer.body.message)).toMatch(/CHROMIUM_PATH/)
  expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1)
  // The path tried stays in the log: the client sees no file name and no stack.
  expect(answer.raw).not.toContain(dir)
  expect(answer.raw).not.toMatch(/\n\s+at /)
}

describe('a missing or unlaunchable Chromium', () => {
  it('CHROMIUM_PATH names no file: 503 EBROWSER, metadata served, one launch per backoff, and the browser installed later is used', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'pagecast-nochromium-'))
    const chromium = path.join(dir, 'chromium')
    const built = await newApp(chromium)

    expectEbrowser(await shot(built, 'first'))
    expect(failedStarts(built)).toBe(1)
    // Within the backoff (1 s after the first failure): answered at once, no new attempt.
    for (const tag of ['a', 'b', 'c']) expectEbrowser(await shot(built, tag))
    expect(failedStarts(built)).toBe(1)

    // What needs no browser is served.
    const meta = await built.pro.inject({ url: `/?${qs({ url: `${fx.origin}/red/?meta` })}`, headers: { 'x-api-key': 'k' } })
    expect(meta.statusCode).toBe(200)
    expect(meta.json().data.title).toBe('Red')
    // /ready: degraded (200: a load balancer keeps sending metadata here), the browser named as the failing check.
    const ready = await built.pro.inject('/ready')
    expect(ready.statusCode).toBe(200)
    expect(ready.json()).toEqual({ status: 'degraded', checks: { browser: 'error', store: 'ok', storage: 'ok' } })
    expect((await built.pro.inject('/health')).statusCode).toBe(200)

    // Chromium installed afterwards: the first request after the backoff launches it.
    symlinkSync('/usr/bin/chromium', chromium)
    let served: Awaited<ReturnType<typeof shot>> | undefined
    for (let i = 0; i < 120 && served?.status !== 200; i++) {
      served = await shot(built, `after${i}`)
      if (served.status !== 200) {
        expectEbrowser(served)
        await new Promise(resolve => setTimeout(resolve, 250))
      }
    }
    expect(served?.status).toBe(200)
    expect(served?.body).toMatchObject({ status: 'success', data: { screenshot: { type: 'png' } } })
    expect((await built.pro.inject('/ready')).json()).toEqual({ status: 'ok', checks: { browser: 'ok', store: 'ok', storage: 'ok' } })
  }, 90_000)

  it('CHROMIUM_PATH is a program that exits at once: 503 EBROWSER, and metadata served', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'pagecast-badchromium-'))
    const chromium = path.join(dir, 'chromium')
    writeFileSync(chromium, '#!/bin/sh\nexit 1\n', { mode: 0o755 })
    const built = await newApp(chromium)

    expectEbrowser(await shot(built, 'first'))
    expect(failedStarts(built)).toBe(1)
    expect(built.logs.find(line => line.msg === 'browser failed to start; requests that need it get EBROWSER until the next attempt'))
      .toMatchObject({ level: 50, attempt: 1, retryInMs: 1000 })
    const meta = await built.pro.inject({ url: `/?${qs({ url: `${fx.origin}/red/?meta` })}`, headers: { 'x-api-key': 'k' } })
    expect(meta.statusCode).toBe(200)
    expect(meta.json().data.title).toBe('Red')
    expect(app!.ctx.browser.readiness()).toBe('down')
  }, 90_000)

  it('a Chromium slow to start: closing stops the launch rather than wait for it, and logs no failure', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'pagecast-slowchromium-'))
    const chromium = path.join(dir, 'chromium')
    // Writes its pid, then takes a minute before it is Chromium: a launch that a shutdown would otherwise wait out.
    writeFileSync(chromium, `#!/bin/sh\necho $$ > ${dir}/pid\nsleep 60\nexec /usr/bin/chromium "$@"\n`, { mode: 0o755 })
    const built = await newApp(chromium)
    const warming = built.ctx.browser.warm()
    warming.catch(() => {})
    const pidFile = path.join(dir, 'pid')
    for (let i = 0; i < 600 && !(existsSync(pidFile) && readFileSync(pidFile, 'utf8').endsWith('\n')); i++) await new Promise(resolve => setTimeout(resolve, 50))
    const pid = Number(readFileSync(pidFile, 'utf8'))
    // The launcher and its sleep (which the shell starts just after writing its pid).
    for (let i = 0; i < 200 && browserProcesses(pid).filter(isAlive).length < 2; i++) await new Promise(resolve => setTimeout(resolve, 50))
    expect(browserProcesses(pid).filter(isAlive).length).toBeGreaterThanOrEqual(2)

    const started = performance.now()
    await built.close()
    app = undefined
    // The launch would take 60 s; 20 s leaves a loaded machine room.
    expect(performance.now() - started).toBeLessThan(20_000)
    expect(browserProcesses(pid).filter(isAlive)).toEqual([])
    await expect(warming).rejects.toMatchObject({ code: 'EBUSY' })
    expect(failedStarts(built)).toBe(0)
    expect(built.logs.filter(line => Number(line.level) >= 50)).toEqual([])
  }, 90_000)
})
