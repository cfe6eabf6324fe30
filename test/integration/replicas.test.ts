// Three real instances of the service (three processes, as three replicas) on one Redis of their own and one S3
// bucket behave as one service (docs/api.md §5, §7): one free quota, one cache, one computation for identical
// requests wherever they land, a forced recomputation seen by the others within about a second, generated files
// served by any of them; and when the instance computing a result dies, another takes the work over within a few
// seconds (the single-flight lock is a lease its holder renews).
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'
import { startRedisNode } from '../helpers/redis-topology.ts'
import { startInstance, stopInstances, type Instance } from '../helpers/instances.ts'
const KEY = 'replica-key'

let fx: FixtureServer
let redis: Awaited<ReturnType<typeof startRedisNode>>
const instances: Instance[] = []
const hits = new Map<string, number>()

function hit (url: string | undefined): number {
  const n = (hits.get(url ?? '') ?? 0) + 1
  hits.set(url ?? '', n)
  return n
}

async function start (): Promise<Instance> {
  const s3 = inject('s3')
  return await startInstance({
    ALLOW_PRIVATE_HOSTS: fx.host,
    REDIS_URL: redis.url,
    API_KEYS: KEY,
    FREE_DAILY_LIMIT: '50',
    BROWSER_CONCURRENCY: '1',
    S3_BUCKET: s3.bucket,
    S3_ENDPOINT: s3.endpoint,
    S3_ACCESS_KEY_ID: s3.accessKeyId,
    S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
    S3_FORCE_PATH_STYLE: 'true',
    CDN_URL: `${s3.endpoint}/${s3.bucket}`
  })
}

beforeAll(async () => {
  fx = await startFixtureServer()
  redis = await startRedisNode()
  // Answers after `delay` ms (first hit of each URL only, when `once` is set); counts every hit.
  fx.route('/slow', (req, res) => {
    const params = new URL(req.url ?? '/', 'http://x').searchParams
    const n = hit(req.url)
    const delay = params.has('once') && n > 1 ? 0 : Number(params.get('delay') ?? 0)
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'text/html' })
      res.end(`<!doctype html><title>Slow ${n}</title><p>Answered after ${delay} ms.</p>`)
    }, delay)
  })
  instances.push(...await Promise.all([start(), start(), start()]))
}, 120_000)

afterAll(async () => {
  await stopInstances(instances)
  await redis?.close()
  await fx?.close()
})

async function proGet (instance: Instance, query: Record<string, string>): Promise<Response> {
  return await fetch(`${instance.pro}/?${new URLSearchParams(query).toString()}`, { headers: { 'x-api-key': KEY } })
}

describe('three instances behave as one', () => {
  it('share one free quota: 100 concurrent requests against a limit of 50 give exactly 50 answers and 50 ERATE', async () => {
    const target = `${fx.origin}/plain/`
    const answers = await Promise.all(Array.from({ length: 100 }, async (_, i) => {
      const res = await fetch(`${instances[i % 3]!.free}/?url=${encodeURIComponent(target)}&prerender=false`)
      return res.status === 429 ? ((await res.json()) as { code: string }).code : String(res.status)
    }))
    expect(answers.filter(a => a === '200')).toHaveLength(50)
    expect(answers.filter(a => a === 'ERATE')).toHaveLength(50)
  })

  it('compute identical requests once, wherever they land, and share the cache', async () => {
    const url = `${fx.origin}/slow?delay=800&case=once-for-twelve`
    const answers = await Promise.all(Array.from({ length: 12 }, async (_, i) => {
      const res = await proGet(instances[i % 3]!, { url, prerender: 'false' })
      return { status: res.status, cache: res.headers.get('x-cache-status'), title: ((await res.json()) as { data: { title: string } }).data.title }
    }))
    expect(hits.get('/slow?delay=800&case=once-for-twelve')).toBe(1)
    expect(answers.every(a => a.status === 200 && a.title === 'Slow 1')).toBe(true)
    // Later requests on any instance are hits of the same entry.
    for (const instance of instances) {
      const again = await proGet(instance, { url, prerender: 'false' })
      expect(again.headers.get('x-cache-status')).toBe('HIT')
    }
  })

  it('see a forced recomputation made on another instance within about a second', async () => {
    const url = `${fx.origin}/slow?case=forced`
    const first = await proGet(instances[0]!, { url, prerender: 'false' })
    const before = first.headers.get('x-timestamp')
    expect((await proGet(instances[1]!, { url, prerender: 'false' })).headers.get('x-timestamp')).toBe(before)
    const forced = await proGet(instances[2]!, { url, prerender: 'false', force: 'true' })
    expect(forced.headers.get('x-cache-status')).toBe('BYPASS')
    const after = forced.headers.get('x-timestamp')
    expect(after).not.toBe(before)
    await sleep(1200)
    expect((await proGet(instances[1]!, { url, prerender: 'false' })).headers.get('x-timestamp')).toBe(after)
  })

  it('serve a screenshot made on one instance from another', async () => {
    const url = `${fx.origin}/plain/?case=shared-file`
    const made = await proGet(instances[0]!, { url, screenshot: 'true', meta: 'false' })
    expect(made.status).toBe(200)
    const shot = ((await made.json()) as { data: { screenshot: { size: number } } }).data.screenshot
    const elsewhere = await proGet(instances[1]!, { url, screenshot: 'true', meta: 'false', embed: 'screenshot.url' })
    expect(elsewhere.status).toBe(200)
    expect(elsewhere.headers.get('x-cache-status')).toBe('HIT')
    expect(elsewhere.headers.get('content-type')).toBe('image/png')
    expect((await elsewhere.arrayBuffer()).byteLength).toBe(shot.size)
  }, 60_000)

  it('take over within a few seconds when the instance computing a result dies', async () => {
    // The first hit answers after 20 s, later ones at once: the holder is stuck on it when it is killed.
    const url = `${fx.origin}/slow?delay=20000&once&case=dead-holder`
    const [holder, follower] = [instances[0]!, instances[1]!]
    const abandoned = proGet(holder, { url, prerender: 'false', timeout: '25s' }).catch(() => undefined)
    while (hits.get('/slow?delay=20000&once&case=dead-holder') === undefined) await sleep(20)
    const started = Date.now()
    const waiting = proGet(follower, { url, prerender: 'false', timeout: '25s' })
    await sleep(300)
    holder.kill()
    const res = await waiting
    const took = Date.now() - started
    expect(res.status).toBe(200)
    expect(((await res.json()) as { data: { title: string } }).data.title).toBe('Slow 2')
    // Not the 27 s the lock would have lived without a lease (timeout + 2 s): the lease is 3 s.
    expect(took).toBeLessThan(15_000)
    await abandoned
  }, 60_000)
})
