// deploy/haproxy.cfg run by a real HAProxy in front of two real instances: both take requests on both listeners,
// and one whose /ready answers 503 (draining) leaves the rotation while the other serves everything. Only the parts
// Docker provides are replaced: the bind addresses, and the DNS-filled server-template by the two instances'
// addresses. Needs an haproxy binary (HAPROXY_BIN, or haproxy in /usr/sbin); skipped without one, as on machines
// where it is not installed (the image's HAProxy 3.0 is never run here).
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { build, type Built } from '../helpers/build.ts'

const ROOT = path.resolve(import.meta.dirname, '../..')
const HAPROXY = process.env.HAPROXY_BIN ?? ['/usr/sbin/haproxy', '/usr/local/sbin/haproxy'].find((file) => existsSync(file))

async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => { resolve(typeof address === 'object' && address !== null ? address.port : 0) })
    })
  })
}

describe.skipIf(HAPROXY === undefined)('deploy/haproxy.cfg in front of two instances', () => {
  const instances: Array<{ app: Built, free: number, pro: number }> = []
  let haproxy: ChildProcess | undefined
  let dir = ''
  let lbFree = 0
  let lbPro = 0

  beforeAll(async () => {
    for (const name of ['a', 'b']) {
      const app = await build({ API_KEYS: 'k', REGION: name })
      const free = Number(new URL(await app.free.listen({ port: 0, host: '127.0.0.1' })).port)
      const pro = Number(new URL(await app.pro.listen({ port: 0, host: '127.0.0.1' })).port)
      instances.push({ app, free, pro })
    }
    lbFree = await freePort()
    lbPro = await freePort()
    const servers = (listener: 'free' | 'pro'): string =>
      instances.map((instance, i) => `server r${i} 127.0.0.1:${instance[listener]}`).join('\n    ')
    const config = readFileSync(path.join(ROOT, 'deploy/haproxy.cfg'), 'utf8')
      .replace('bind :3100', `bind 127.0.0.1:${lbFree}`)
      .replace('bind :3101', `bind 127.0.0.1:${lbPro}`)
      .replace(/server-template replica 1-\d+ replica:3000/, servers('free'))
      .replace(/server-template replica 1-\d+ replica:3001/, servers('pro'))
      .replace(' resolvers docker init-addr none', '')
    expect(config).not.toMatch(/^\s*server-template /m)
    dir = mkdtempSync(path.join(os.tmpdir(), 'pagecast-haproxy-'))
    writeFileSync(path.join(dir, 'haproxy.cfg'), config)
    haproxy = spawn(HAPROXY ?? 'haproxy', ['-db', '-f', path.join(dir, 'haproxy.cfg')], { stdio: ['ignore', 'ignore', 'pipe'] })
    // Up once it answers through both frontends.
    for (let i = 0; i < 100; i++) {
      const ok = await Promise.all([lbFree, lbPro].map(async (port) => await fetch(`http://127.0.0.1:${port}/health`).then((r) => r.ok, () => false)))
      if (ok.every(Boolean)) break
      await sleep(100)
    }
  }, 60_000)

  afterAll(async () => {
    haproxy?.kill('SIGTERM')
    for (const { app } of instances) await app.close()
    if (dir !== '') rmSync(dir, { recursive: true, force: true })
  })

  /** Requests through the balancer, and which instance logged each (by a tag in the URL). */
  async function spread (port: number, tag: string, count: number): Promise<number[]> {
    for (let i = 0; i < count; i++) {
      const res = await fetch(`http://127.0.0.1:${port}/openapi.json?${tag}=${i}`, { headers: { 'x-api-key': 'k' } })
      expect(res.status).toBe(200)
    }
    return instances.map(({ app }) => app.logs.filter((line) => line.msg === 'request' && String(line.url).includes(`?${tag}=`)).length)
  }

  it('spreads requests over both instances on both listeners', async () => {
    for (const [port, tag] of [[lbFree, 'spread-free'], [lbPro, 'spread-pro']] as const) {
      const counts = await spread(port, tag, 20)
      expect(counts.reduce((a, b) => a + b, 0), tag).toBe(20)
      for (const count of counts) expect(count, tag).toBeGreaterThan(0)
    }
  })

  it('takes an instance whose /ready answers 503 out of the rotation, and back once it answers 200', async () => {
    const [a] = instances
    if (a === undefined) throw new Error('no instance')
    // What SIGTERM sets first: /ready answers 503 while the instance still accepts connections.
    a.app.ctx.closing = true
    try {
      expect((await fetch(`http://127.0.0.1:${a.free}/ready`)).status).toBe(503)
      // Two failed checks 2 s apart, plus the check in progress.
      await sleep(5_500)
      expect(await spread(lbFree, 'drained-free', 20)).toEqual([0, 20])
      expect(await spread(lbPro, 'drained-pro', 20)).toEqual([0, 20])
    } finally {
      a.app.ctx.closing = false
    }
    await sleep(5_500)
    const counts = await spread(lbFree, 'back-free', 20)
    expect(counts[0]).toBeGreaterThan(0)
  }, 30_000)
})
