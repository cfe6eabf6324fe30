// A tenant's plan across three real instances (three processes) on one Redis of their own (docs/api.md §16): the
// daily limit is exact whichever instance a request lands on, and `concurrency: 1` never lets two of the tenant's
// computations run at once anywhere (a fixture page records how many of its requests are open at the same time).
import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'
import { startRedisNode } from '../helpers/redis-topology.ts'
import { startInstance, stopInstances, type Instance } from '../helpers/instances.ts'

const KEYS = { daily: 'daily-tenant-key-41c9', single: 'single-tenant-key-8e02' }
const hashed = (key: string): string => `sha256:${createHash('sha256').update(key).digest('hex')}`

let fx: FixtureServer
let redis: Awaited<ReturnType<typeof startRedisNode>>
let dir: string
const instances: Instance[] = []
// The slow page's requests open now, and the most seen open at once.
let open = 0
let most = 0

beforeAll(async () => {
  fx = await startFixtureServer()
  redis = await startRedisNode()
  dir = mkdtempSync(path.join(os.tmpdir(), 'pagecast-tenants-'))
  const file = path.join(dir, 'keys.yaml')
  writeFileSync(file, [
    'tenants:',
    '  daily:',
    `    keys: ["${hashed(KEYS.daily)}"]`,
    '    plan: {daily: 20}',
    '  single:',
    `    keys: ["${hashed(KEYS.single)}"]`,
    '    plan: {concurrency: 1}',
    ''
  ].join('\n'))
  fx.route('/busy', (_req, res) => {
    open += 1
    most = Math.max(most, open)
    setTimeout(() => {
      open -= 1
      res.writeHead(200, { 'content-type': 'text/html' })
      res.end('<!doctype html><title>Busy</title><p>Answered after 300 ms.</p>')
    }, 300)
  })
  const env = { ALLOW_PRIVATE_HOSTS: fx.host, REDIS_URL: redis.url, KEYS_FILE: file, BROWSER_CONCURRENCY: '1', STORAGE_SCOPE: 'instance', STORAGE_DIR: dir }
  instances.push(...await Promise.all([startInstance(env), startInstance(env), startInstance(env)]))
}, 120_000)

afterAll(async () => {
  await stopInstances(instances)
  await redis?.close()
  await fx?.close()
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
})

async function proGet (instance: Instance, key: string, query: Record<string, string>): Promise<{ status: number, code?: string, headers: Headers }> {
  const res = await fetch(`${instance.pro}/?${new URLSearchParams({ prerender: 'false', ...query }).toString()}`, { headers: { 'x-api-key': key } })
  const body = await res.json() as { code?: string }
  return { status: res.status, headers: res.headers, ...(body.code === undefined ? {} : { code: body.code }) }
}

describe('a tenant\'s plan across three instances on one Redis', () => {
  it('gives a tenant with daily: 20 exactly 20 answers of 30 concurrent requests, the rest ERATE', async () => {
    const answers = await Promise.all(Array.from({ length: 30 }, async (_, i) =>
      await proGet(instances[i % 3]!, KEYS.daily, { url: `${fx.origin}/plain/?n=${i % 4}` })))
    expect(answers.filter(a => a.status === 200)).toHaveLength(20)
    expect(answers.filter(a => a.code === 'ERATE')).toHaveLength(10)
    const remaining = answers.filter(a => a.status === 200).map(a => Number(a.headers.get('x-rate-limit-remaining'))).sort((a, b) => a - b)
    expect(remaining).toEqual(Array.from({ length: 20 }, (_, i) => i))
    const usage = await (await fetch(`${instances[1]!.pro}/usage`, { headers: { 'x-api-key': KEYS.daily } })).json() as { data: { day: { used: number, remaining: number } } }
    expect(usage.data.day).toMatchObject({ used: 20, remaining: 0 })
  })

  it('never runs two computations of a tenant with concurrency: 1 at once; the others wait for the slot', async () => {
    open = 0
    most = 0
    const answers = await Promise.all(Array.from({ length: 6 }, async (_, i) =>
      await proGet(instances[i % 3]!, KEYS.single, { url: `${fx.origin}/busy?n=${i}`, timeout: '25s' })))
    expect(answers.map(a => a.status)).toEqual([200, 200, 200, 200, 200, 200])
    expect(most).toBe(1)
    // Cache hits take no slot: the same six again are answered at once, in parallel.
    const again = await Promise.all(Array.from({ length: 6 }, async (_, i) =>
      await proGet(instances[i % 3]!, KEYS.single, { url: `${fx.origin}/busy?n=${i}`, timeout: '25s' })))
    expect(again.map(a => a.headers.get('x-cache-status'))).toEqual(Array(6).fill('HIT'))
  })

  it('answers ECONCURRENCY with Retry-After: 1 when no slot frees before the request\'s deadline', async () => {
    const slow = proGet(instances[0]!, KEYS.single, { url: `${fx.origin}/busy?n=long&x=1`, timeout: '20s' })
    // The first holds the slot for 300 ms at least; a request of 1 s elsewhere waits, gets it or gives up.
    fx.route('/held', (_req, res) => { setTimeout(() => { res.writeHead(200, { 'content-type': 'text/html' }); res.end('<title>Held</title>') }, 3000) })
    const holder = proGet(instances[1]!, KEYS.single, { url: `${fx.origin}/held`, timeout: '20s' })
    await new Promise(resolve => setTimeout(resolve, 800))
    const refused = await fetch(`${instances[2]!.pro}/?${new URLSearchParams({ url: `${fx.origin}/busy?n=refused`, prerender: 'false', timeout: '1s' }).toString()}`, { headers: { 'x-api-key': KEYS.single } })
    expect(refused.status).toBe(429)
    expect(((await refused.json()) as { code: string }).code).toBe('ECONCURRENCY')
    expect(refused.headers.get('retry-after')).toBe('1')
    expect((await slow).status).toBe(200)
    expect((await holder).status).toBe(200)
  })
})
