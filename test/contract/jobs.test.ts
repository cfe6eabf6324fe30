// The job engine (src/jobs/) on both backends, in process and on Redis (BullMQ, one node and a Cluster): pages worked
// once each, links admitted once and up to `limit`, the per-host limit, cancel, paging by bytes, large documents on the
// storage, expiry. The page handler here GETs real fixture pages on loopback and follows their links; the Firecrawl
// routes over scrapeDocument are covered in test/integration/firecrawl-jobs.test.ts.
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.ts'
import { createJobs, type Jobs, type PageHandler } from '../../src/jobs/index.ts'
import { createAddressGuard } from '../../src/net/guard.ts'
import { createStorage, type Storage } from '../../src/storage/index.ts'
import { createStore, type Store } from '../../src/store/index.ts'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'
import { startCluster, startRedisNode } from '../helpers/redis-topology.ts'

const log = pino({ level: 'silent' })
let fx: FixtureServer
let inFlight = 0
let peak = 0
const served = new Map<string, number>()

/** A site of `n` pages, each linking to the next three (mod n) and to itself. */
const SITE_PAGES = 40

beforeAll(async () => {
  fx = await startFixtureServer()
  fx.route('/site', (req, res) => {
    const n = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('p') ?? 0)
    served.set(req.url ?? '', (served.get(req.url ?? '') ?? 0) + 1)
    inFlight += 1
    peak = Math.max(peak, inFlight)
    setTimeout(() => {
      inFlight -= 1
      const links = [n, n + 1, n + 2, n + 3].map(i => `<a href="/site?p=${i % SITE_PAGES}">${i}</a>`).join('')
      res.writeHead(200, { 'content-type': 'text/html' })
      res.end(`<!doctype html><title>Page ${n}</title>${links}`)
    }, 30)
  })
  // A hub linking to a redirect onto a page it also links (dropped), and a redirect onto a page nothing else links (kept).
  fx.route('/rhub', (req, res) => {
    const tag = new URL(req.url ?? '/', 'http://x').searchParams.get('t') ?? ''
    const links = [`/rgo?t=${tag}&to=1`, `/rend?t=${tag}&n=1`, `/rgo?t=${tag}&to=2`, `/rgo?t=${tag}&to=2&again`].map(href => `<a href="${href}">${href}</a>`).join('')
    res.writeHead(200, { 'content-type': 'text/html' })
    res.end(`<!doctype html><title>Hub</title>${links}`)
  })
  fx.route('/rgo', (req, res) => {
    const q = new URL(req.url ?? '/', 'http://x').searchParams
    res.writeHead(301, { location: `/rend?t=${q.get('t') ?? ''}&n=${q.get('to') ?? ''}` })
    res.end()
  })
  fx.route('/rend', (req, res) => {
    served.set(req.url ?? '', (served.get(req.url ?? '') ?? 0) + 1)
    res.writeHead(200, { 'content-type': 'text/html' })
    res.end('<!doctype html><title>End</title>')
  })
  fx.route('/big', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' })
    res.end('x'.repeat(300 * 1024))
  })
})
afterAll(async () => { await fx?.close() })

/** GETs the page; a crawl follows every same-origin link. */
const handler: PageHandler = async (job, task, signal) => {
  const response = await fetch(task.url, { signal })
  const body = await response.text()
  const document = { markdown: body, metadata: { sourceURL: task.url, url: response.url, statusCode: response.status } }
  if (job.kind !== 'crawl') return { document }
  const follow = [...body.matchAll(/href="([^"]+)"/g)].map(m => new URL(m[1] ?? '', task.url).href).map(url => ({ key: url, url }))
  return { document, follow, ...(response.url === task.url ? {} : { finalKey: response.url }) }
}

async function until (jobs: Jobs, id: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if ((await jobs.get(id))?.status !== 'scraping') return
    await sleep(50)
  }
  throw new Error(`job ${id} still scraping after ${timeoutMs} ms`)
}

function engineContract (name: string, redisUrl: () => Promise<{ env: Record<string, string>, close: () => Promise<void> }>): void {
  describe(`job engine: ${name}`, () => {
    let jobs: Jobs
    /** An instance with a short JOB_TTL, for the expiry test only (the others must not expire under load). */
    let shortLived: Jobs
    let storage: Storage
    let store: Store
    let dir: string
    let closeRedis: () => Promise<void>
    const owner = { listener: 'pro' as const, tenant: 'acme' }

    beforeAll(async () => {
      const redis = await redisUrl()
      closeRedis = redis.close
      dir = mkdtempSync(path.join(os.tmpdir(), 'pagecast-jobs-'))
      const env = { ...redis.env, STORAGE_DIR: dir, STORAGE_SCOPE: 'instance', JOB_CONCURRENCY: '8', CRAWL_HOST_CONCURRENCY: '2' }
      const config = loadConfig({ ...env, JOB_TTL: '10m' })
      storage = createStorage(config, { log })
      store = createStore({ redis: config.redis }, { log })
      const guard = createAddressGuard({ allowPrivateHosts: [fx.host] })
      jobs = createJobs({ config, log, guard, storage, store })
      jobs.work(handler, () => undefined)
      shortLived = createJobs({ config: loadConfig({ ...env, JOB_TTL: '2s' }), log, guard, storage, store })
      shortLived.work(handler, () => undefined)
    }, 60_000)
    afterAll(async () => {
      await jobs?.close()
      await shortLived?.close()
      await storage?.close()
      await store?.close()
      await closeRedis?.()
      rmSync(dir, { recursive: true, force: true })
    })

    it('scrapes a batch: every URL once, in one completed job', async () => {
      const urls = [0, 1, 2, 3, 4].map(i => `${fx.origin}/site?p=${i}&batch=${name}`)
      const job = await jobs.start({ kind: 'batch_scrape', owner, first: [...urls, urls[0] ?? ''].map(url => ({ key: url, url })), limit: 6, request: {} })
      expect(job.total).toBe(5)
      await until(jobs, job.id)
      const page = await jobs.page(job.id, 0, 10 * 1024 * 1024)
      expect(page?.record).toMatchObject({ status: 'completed', total: 5, completed: 5, failed: 0 })
      const sources = page?.data.map(d => (d as { metadata: { sourceURL: string } }).metadata.sourceURL).sort()
      expect(sources).toEqual([...urls].sort())
      expect(page?.nextSkip).toBeUndefined()
    })

    it('crawls each reachable page once, never more than `limit`, at most 2 in flight per host', async () => {
      peak = 0
      served.clear()
      const full = await jobs.start({ kind: 'crawl', owner, first: [{ key: `${fx.origin}/site?p=0`, url: `${fx.origin}/site?p=0` }], limit: 1000, request: {} })
      await until(jobs, full.id)
      const record = await jobs.get(full.id)
      expect(record).toMatchObject({ status: 'completed', total: SITE_PAGES, completed: SITE_PAGES })
      expect([...served.values()].every(n => n === 1)).toBe(true)
      expect(served.size).toBe(SITE_PAGES)
      expect(peak).toBeLessThanOrEqual(2)
      expect(peak).toBe(2)

      const capped = await jobs.start({ kind: 'crawl', owner, first: [{ key: `${fx.origin}/site?p=5`, url: `${fx.origin}/site?p=5` }], limit: 7, request: {} })
      await until(jobs, capped.id)
      expect(await jobs.get(capped.id)).toMatchObject({ status: 'completed', total: 7, completed: 7 })
    })

    it('returns a page reached directly and through redirects once: a redirect onto a page in the job is dropped', async () => {
      const hub = `${fx.origin}/rhub?t=${encodeURIComponent(name)}`
      const job = await jobs.start({ kind: 'crawl', owner, first: [{ key: hub, url: hub }], limit: 1000, request: {} })
      await until(jobs, job.id)
      const page = await jobs.page(job.id, 0, 10 * 1024 * 1024)
      const finals = page?.data.map(d => (d as { metadata: { url: string } }).metadata.url).sort()
      const end = (n: number): string => `${fx.origin}/rend?t=${encodeURIComponent(name)}&n=${n}`
      // /rgo?to=1 lands on /rend?n=1 (linked too): dropped; /rgo?to=2 and its twin land on /rend?n=2: one is kept.
      expect(finals).toEqual([hub, end(1), end(2)].sort())
      expect(page?.record).toMatchObject({ status: 'completed', total: 3, completed: 3, failed: 0 })
    })

    it('maxConcurrency: at most that many pages of the job in flight, below the host limit', async () => {
      peak = 0
      const start = `${fx.origin}/site?p=0&one=${encodeURIComponent(name)}`
      const job = await jobs.start({ kind: 'crawl', owner, first: [{ key: start, url: start }], limit: 12, maxConcurrency: 1, request: {} })
      await until(jobs, job.id)
      expect(await jobs.get(job.id)).toMatchObject({ status: 'completed', total: 12, completed: 12, maxConcurrency: 1 })
      expect(peak).toBe(1)
    })

    it('lists a running crawl as ongoing, and cancels it: no page recorded after', async () => {
      const job = await jobs.start({ kind: 'crawl', owner, first: [{ key: `${fx.origin}/site?p=1&slowly`, url: `${fx.origin}/site?p=1&slowly` }], limit: 1000, request: {} })
      expect((await jobs.ongoing(owner)).map(j => j.id)).toContain(job.id)
      expect((await jobs.ongoing({ listener: 'pro', tenant: 'other' })).map(j => j.id)).not.toContain(job.id)
      expect(await jobs.cancel(job.id)).toBe(true)
      const atCancel = await jobs.get(job.id)
      await sleep(500)
      const later = await jobs.get(job.id)
      expect(later?.status).toBe('cancelled')
      expect(later?.completed).toBe(atCancel?.completed)
      expect(await jobs.cancel(job.id)).toBe(false)
      expect((await jobs.ongoing(owner)).map(j => j.id)).not.toContain(job.id)
    })

    it('serves documents in pages by bytes with the next index, a large one kept on the storage', async () => {
      const urls = [`${fx.origin}/big`, ...[6, 7, 8].map(i => `${fx.origin}/site?p=${i}&paged=${name}`)]
      const job = await jobs.start({ kind: 'batch_scrape', owner, first: urls.map(url => ({ key: url, url })), limit: 4, request: {} })
      await until(jobs, job.id)
      // 1 KiB pages: the 300 KiB document alone on its page, small ones a few to a page; `next` chains them all.
      const pages: unknown[][] = []
      for (let skip: number | undefined = 0; skip !== undefined;) {
        const page = await jobs.page(job.id, skip, 1024)
        pages.push(page?.data ?? [])
        expect(page?.nextSkip === undefined || page.nextSkip === skip + (page?.data.length ?? 0)).toBe(true)
        skip = page?.nextSkip
      }
      expect(pages.length).toBeGreaterThan(1)
      expect(pages.flat()).toHaveLength(4)
      expect(pages.find(p => p.some(d => (d as { markdown: string }).markdown.length > 1024))).toHaveLength(1)
      const all = await jobs.page(job.id, 0, 10 * 1024 * 1024)
      expect(all?.data).toHaveLength(4)
      const big = all?.data.find(d => (d as { metadata: { sourceURL: string } }).metadata.sourceURL.endsWith('/big')) as { markdown: string }
      expect(big.markdown).toHaveLength(300 * 1024)
    })

    it('records a failed page as an error, and a job whose every page failed as failed', async () => {
      const job = await jobs.start({ kind: 'batch_scrape', owner, first: [{ key: 'r', url: 'http://127.0.0.1:1/refused' }], limit: 1, request: {} })
      await until(jobs, job.id)
      expect(await jobs.get(job.id)).toMatchObject({ status: 'failed', completed: 0, failed: 1 })
      const { errors } = await jobs.errors(job.id)
      expect(errors).toEqual([expect.objectContaining({ url: 'http://127.0.0.1:1/refused', error: expect.any(String), id: expect.any(String) })])
    })

    it('forgets a job after JOB_TTL', async () => {
      const job = await shortLived.start({ kind: 'batch_scrape', owner, first: [{ key: `${fx.origin}/site?p=9&ttl=${name}`, url: `${fx.origin}/site?p=9&ttl=${name}` }], limit: 1, request: {} })
      await until(shortLived, job.id)
      await sleep(Math.max(0, job.expiresAt - Date.now()) + 300)
      expect(await shortLived.get(job.id)).toBeUndefined()
      expect(await shortLived.page(job.id, 0, 1024)).toBeUndefined()
    })
  })
}

engineContract('in process', async () => ({ env: {}, close: async () => {} }))
engineContract('redis', async () => {
  const node = await startRedisNode()
  return { env: { REDIS_URL: node.url }, close: node.close }
})
engineContract('redis cluster', async () => {
  const cluster = await startCluster(3)
  return { env: { REDIS_CLUSTER_NODES: cluster.nodes.map(n => `127.0.0.1:${n.port}`).join(',') }, close: cluster.close }
})
