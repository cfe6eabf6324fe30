// Real listeners: HTTP over sockets, the official @microlink/mql client, and the process's own
// start-up (.env, the re2 line) and graceful shutdown.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import mqlClient, { MicrolinkError } from '@microlink/mql'
import { build, type Built } from '../helpers/build.ts'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'
import { freePort } from '../setup/global-setup.ts'

const ROOT = path.resolve(import.meta.dirname, '../..')

interface MqlResult { status: string, statusCode: number, data: Record<string, unknown> }
// mql's own types pick the raw-response overload for option objects they do not know; call it plainly.
const mql = mqlClient as unknown as (url: string, opts: Record<string, unknown>) => Promise<MqlResult>

let fx: FixtureServer
let app: Built
let freeUrl: string
let proUrl: string
let closedPort: number

beforeAll(async () => {
  fx = await startFixtureServer()
  closedPort = await freePort()
  app = await build({ ALLOW_PRIVATE_HOSTS: `${fx.host},127.0.0.1:${closedPort}`, API_KEYS: 'mql-key', FREE_DAILY_LIMIT: '3' })
  freeUrl = await app.free.listen({ port: 0, host: '127.0.0.1' })
  proUrl = await app.pro.listen({ port: 0, host: '127.0.0.1' })
})

afterAll(async () => {
  await app.close()
  await fx.close()
})

describe('real listeners', () => {
  it('serve the API over HTTP with the envelope and headers', async () => {
    const res = await fetch(`${freeUrl}/?url=${encodeURIComponent(`${fx.origin}/article/`)}`)
    expect(res.status).toBe(200)
    expect(res.headers.get('x-pricing-plan')).toBe('free')
    expect(res.headers.get('x-cache-status')).toBe('MISS')
    const body = await res.json() as { status: string, data: { title: string } }
    expect(body.data.title).toBe('Shipping faster')
  })

  it('answer an oversized query with a JSON EINVALQUERY, below and above the header limit', async () => {
    const target = encodeURIComponent(`${fx.origin}/plain/`)
    const over32k = await fetch(`${freeUrl}/?url=${target}&v=${'a'.repeat(40 * 1024)}`)
    expect(over32k.status).toBe(400)
    expect(((await over32k.json()) as { code: string }).code).toBe('EINVALQUERY')
    const over64k = await fetch(`${freeUrl}/?url=${target}&v=${'a'.repeat(80 * 1024)}`)
    expect(over64k.status).toBe(400)
    expect(over64k.headers.get('x-request-id')).toMatch(/^local:/)
    expect(((await over64k.json()) as { code: string }).code).toBe('EINVALQUERY')
  })
})

describe('@microlink/mql pointed at pagecast', () => {
  it('gets metadata from the pro endpoint with apiKey', async () => {
    const result = await mql(`${fx.origin}/article/`, { endpoint: proUrl, apiKey: 'mql-key', meta: { title: true, image: true } })
    expect(result.status).toBe('success')
    expect(result.data.title).toBe('Shipping faster')
    expect((result.data.image as { width: number }).width).toBe(1200)
    expect(result.statusCode).toBe(200)
  })

  it('gets metadata from the free endpoint', async () => {
    const result = await mql(`${fx.origin}/plain/`, { endpoint: freeUrl })
    expect(result.status).toBe('success')
    expect(result.data.title).toBe('A plain page')
  })

  it('surfaces an invalid target as MicrolinkError with our code', async () => {
    const error = await mql('http://localhost/', { endpoint: proUrl, apiKey: 'mql-key' }).catch((err: unknown) => err)
    expect(error).toBeInstanceOf(MicrolinkError)
    expect(error).toMatchObject({ code: 'EFORBIDDENURL', status: 'fail', statusCode: 400 })
    const unreachable = await mql(`http://127.0.0.1:${closedPort}/`, { endpoint: proUrl, apiKey: 'mql-key' }).catch((err: unknown) => err)
    expect(unreachable).toBeInstanceOf(MicrolinkError)
    expect(unreachable).toMatchObject({ code: 'EINVALURL', statusCode: 400 })
    const wrongKey = await mql(`${fx.origin}/plain/`, { endpoint: proUrl, apiKey: 'wrong' }).catch((err: unknown) => err)
    expect(wrongKey).toMatchObject({ code: 'EAUTH', statusCode: 403 })
  })

  it('surfaces a spent quota as MicrolinkError ERATE', async () => {
    let error: unknown
    for (let i = 0; i < 5 && error === undefined; i++) {
      await mql(`${fx.origin}/plain/`, { endpoint: freeUrl, meta: false }).catch((err: unknown) => { error = err })
    }
    expect(error).toBeInstanceOf(MicrolinkError)
    expect(error).toMatchObject({ code: 'ERATE', statusCode: 429 })
  })
})

describe('the process', () => {
  it('stops at start with a message naming a bad variable', async () => {
    const child = spawn(process.execPath, ['src/server.ts'], { cwd: ROOT, env: { ...process.env, FREE_PORT: 'abc' }, stdio: ['ignore', 'pipe', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString() })
    const code = await new Promise<number | null>(resolve => child.on('exit', resolve))
    expect(code).toBe(1)
    expect(stderr).toContain('FREE_PORT')
  }, 90_000)

  /** Starts the service with `env` (besides HOST and the two ports given), and what it wrote to stderr by its exit. */
  async function startAndFail (env: Record<string, string>): Promise<{ code: number | null, stderr: string }> {
    const child = spawn(process.execPath, ['src/server.ts'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...env },
      stdio: ['ignore', 'ignore', 'pipe']
    })
    let stderr = ''
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString() })
    const code = await new Promise<number | null>(resolve => child.on('exit', resolve))
    return { code, stderr }
  }

  it.each(['FREE_PORT', 'PRO_PORT'] as const)('names %s in one line when its port is taken, and exits 1', async (variable) => {
    // A port this test holds.
    const holder = createServer()
    await new Promise<void>(resolve => holder.listen(0, '127.0.0.1', resolve))
    const taken = (holder.address() as AddressInfo).port
    try {
      const other = variable === 'FREE_PORT' ? 'PRO_PORT' : 'FREE_PORT'
      const { code, stderr } = await startAndFail({ [variable]: String(taken), [other]: String(await freePort()) })
      expect(code).toBe(1)
      expect(stderr.trim().split('\n'), stderr).toHaveLength(1)
      expect(stderr).toContain(`${variable} ${taken}: the port is in use on 127.0.0.1`)
      expect(stderr).not.toMatch(/^\s+at /m)
    } finally {
      holder.close()
    }
  }, 90_000)

  it('names HOST in one line when it is no address', async () => {
    const { code, stderr } = await startAndFail({ HOST: '127.0.0.256', FREE_PORT: String(await freePort()), PRO_PORT: String(await freePort()) })
    expect(code).toBe(1)
    expect(stderr.trim()).toBe('Invalid configuration: HOST must be an address of this machine to listen on, such as 0.0.0.0 (all) or 127.0.0.1 (got "127.0.0.256")')
  }, 90_000)

  it('reads .env from its working directory, the environment winning, and says whether re2 is active', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'pagecast-dotenv-'))
    const [fromFile, fromEnv, overridden] = [await freePort(), await freePort(), await freePort()]
    writeFileSync(path.join(dir, '.env'), `FREE_PORT=${fromFile}\nPRO_PORT=${overridden}\n`)
    const env: Record<string, string | undefined> = { ...process.env, PRO_PORT: String(fromEnv), HOST: '127.0.0.1', LOG_LEVEL: 'info' }
    delete env.FREE_PORT
    const child = spawn(process.execPath, [path.join(ROOT, 'src/server.ts')], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    child.stdout.on('data', (d: Buffer) => { stdout += d.toString() })
    const exited = new Promise<number | null>(resolve => child.on('exit', resolve))
    const up = async (port: number): Promise<boolean> => await fetch(`http://127.0.0.1:${port}/health`).then(r => r.ok, () => false)
    try {
      // Up to 60 s to start: a loaded 2-core machine takes well over 10.
      for (let i = 0; i < 600 && !await up(fromFile); i++) await new Promise(r => setTimeout(r, 100))
      expect(await up(fromFile)).toBe(true)
      expect(await up(fromEnv)).toBe(true)
      expect(await up(overridden)).toBe(false)
      const lines = stdout.split('\n').flatMap(line => { try { return [JSON.parse(line) as Record<string, unknown>] } catch { return [] } })
      expect(lines.find(line => 're2' in line)).toMatchObject({ re2: true, envFile: '.env', node: process.version })
    } finally {
      child.kill('SIGTERM')
      await exited
      rmSync(dir, { recursive: true, force: true })
    }
  }, 90_000)

  it('finishes requests in flight on SIGTERM, then exits', async () => {
    // In flight means the service is fetching the page: SIGTERM goes once the fixture has the request.
    let fetching!: () => void
    const fetched = new Promise<void>(resolve => { fetching = resolve })
    fx.route('/drain', (_req, res) => { fetching(); setTimeout(() => { res.writeHead(200, { 'content-type': 'text/html' }); res.end('<title>Drained</title>') }, 1200) })
    const [free, pro] = [await freePort(), await freePort()]
    const child = spawn(process.execPath, ['src/server.ts'], {
      cwd: ROOT,
      env: { ...process.env, FREE_PORT: String(free), PRO_PORT: String(pro), HOST: '127.0.0.1', ALLOW_PRIVATE_HOSTS: fx.host, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe']
    })
    const exited = new Promise<number | null>(resolve => child.on('exit', resolve))
    // What the process wrote, shown if it does not exit cleanly.
    let output = ''
    child.stderr.on('data', (d: Buffer) => { output += d.toString() })
    child.stdout.on('data', (d: Buffer) => { output += d.toString() })
    try {
      for (let i = 0; i < 600; i++) {
        const ok = await fetch(`http://127.0.0.1:${free}/health`).then(r => r.ok, () => false)
        if (ok) break
        await new Promise(r => setTimeout(r, 100))
      }
      const inFlight = fetch(`http://127.0.0.1:${free}/?url=${encodeURIComponent(`${fx.origin}/drain`)}`)
      await fetched
      child.kill('SIGTERM')
      const res = await inFlight
      expect(res.status).toBe(200)
      expect(((await res.json()) as { data: { title: string } }).data.title).toBe('Drained')
      expect(await exited, output).toBe(0)
      await expect(fetch(`http://127.0.0.1:${free}/health`)).rejects.toThrow()
    } finally {
      child.kill('SIGKILL')
    }
  }, 90_000)
})
