// A job's documents served in pages (docs/jobs.md#results-and-expiry): a poll reads only the slice it answers. A job
// of 120 documents (inline ones and ones over 256 KiB kept on the storage) on a redis-server of this file's own,
// paged through with `next`; one poll's reads are counted through the real store: the LRANGEs Redis itself reports
// (MONITOR on a raw socket) and the storage's reads (the real disk storage, its `get` counted).
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.ts'
import { createJobs, type Jobs, type PageHandler } from '../../src/jobs/index.ts'
import { INLINE_BYTES } from '../../src/jobs/results.ts'
import { createAddressGuard } from '../../src/net/guard.ts'
import { createStore, type Store } from '../../src/store/index.ts'
import { createStorage, type Storage } from '../../src/storage/index.ts'
import { monitorRedis } from '../helpers/redis-monitor.ts'
import { startRedisNode } from '../helpers/redis-topology.ts'

const log = pino({ level: 'silent' })
const DOCS = 120
/** Every 10th document is over INLINE_BYTES (on the storage), the rest 40 KiB. */
const sizeOf = (i: number): number => i % 10 === 3 ? 300 * 1024 : 40 * 1024
const PAGE_BYTES = 1024 * 1024

/** The page "scraped" is a document of the size its URL asks for: no connection is made. */
const handler: PageHandler = async (_job, task) => {
  const i = Number(new URL(task.url).searchParams.get('i'))
  return { document: { markdown: 'x'.repeat(sizeOf(i)), metadata: { sourceURL: task.url, url: task.url, statusCode: 200, i } } }
}

let redis: Awaited<ReturnType<typeof startRedisNode>>
let dir: string
let storage: Storage
let jobs: Jobs
let store: Store
let jobId: string
const storageReads: string[] = []

beforeAll(async () => {
  redis = await startRedisNode()
  dir = mkdtempSync(path.join(os.tmpdir(), 'pagecast-pages-'))
  const config = loadConfig({ REDIS_URL: redis.url, STORAGE_DIR: dir, STORAGE_SCOPE: 'instance', JOB_CONCURRENCY: '8' })
  const real = createStorage(config, { log })
  // The real storage, its reads counted.
  storage = new Proxy(real, {
    get (target, name, receiver) {
      if (name !== 'get') return Reflect.get(target, name, receiver)
      return async (key: string) => { storageReads.push(key); return await target.get(key) }
    }
  })
  store = createStore({ redis: config.redis }, { log })
  jobs = createJobs({ config, log, guard: createAddressGuard({ allowPrivateHosts: [] }), storage, store })
  jobs.work(handler, () => undefined)
  const urls = Array.from({ length: DOCS }, (_, i) => `http://127.0.0.1:9/doc?i=${i}`)
  const job = await jobs.start({ kind: 'batch_scrape', owner: { listener: 'free', client: 'pages' }, first: urls.map(url => ({ key: url, url })), limit: DOCS, request: {} })
  jobId = job.id
  for (let i = 0; i < 600 && (await jobs.get(jobId))?.status === 'scraping'; i++) await sleep(50)
}, 90_000)

afterAll(async () => {
  await jobs?.close()
  await store?.close()
  await storage?.close()
  await redis?.close()
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
})

/** The LRANGEs of the job's documents Redis executes while `run` runs, as [start, stop] pairs. */
async function rangesDuring (run: () => Promise<unknown>): Promise<Array<[number, number]>> {
  const monitor = await monitorRedis(redis.url)
  const ranges: Array<[number, number]> = []
  let marked = false
  const docsKey = new RegExp(`job:${jobId}:docs$`)
  monitor.on(({ args }) => {
    if (args[0]?.toLowerCase() === 'lrange' && docsKey.test(args[1] ?? '')) ranges.push([Number(args[2]), Number(args[3])])
    if (args.includes('pages-marker-done')) marked = true
  })
  await run()
  // A marker command: once MONITOR shows it, every command before it was shown.
  const marker = new Redis(redis.url)
  await marker.echo('pages-marker-done')
  while (!marked) await sleep(10)
  marker.disconnect()
  monitor.stop()
  return ranges
}

describe('job pages', () => {
  it('pages through every document once with `next`, each page within its bytes', async () => {
    expect(await jobs.get(jobId)).toMatchObject({ status: 'completed', completed: DOCS })
    const seen: number[] = []
    let skip: number | undefined = 0
    let pages = 0
    while (skip !== undefined) {
      const page = await jobs.page(jobId, skip, PAGE_BYTES)
      expect(page).toBeDefined()
      const data = page?.data as Array<{ metadata: { i: number } }>
      expect(data.length).toBeGreaterThan(0)
      if (data.length > 1) expect(Buffer.byteLength(data.map(d => JSON.stringify(d)).join(''))).toBeLessThanOrEqual(PAGE_BYTES)
      seen.push(...data.map(d => d.metadata.i))
      expect(page?.nextSkip === undefined || page.nextSkip === skip + data.length).toBe(true)
      skip = page?.nextSkip
      pages += 1
    }
    expect([...seen].sort((a, b) => a - b)).toEqual(Array.from({ length: DOCS }, (_, i) => i))
    expect(pages).toBeGreaterThan(5)
  })

  it('a poll reads from Redis and the storage only the slice it answers', async () => {
    const reader = new Redis(redis.url)
    const all = await reader.lrange(`{pagecast}:job:${jobId}:docs`, 0, -1)
    reader.disconnect()
    const entryBytes = all.map(e => Buffer.byteLength(e))
    const first = await jobs.page(jobId, 0, PAGE_BYTES)
    const skip = first?.nextSkip ?? 0
    expect(skip).toBeGreaterThan(0)
    storageReads.length = 0
    let page: Awaited<ReturnType<Jobs['page']>>
    const ranges = await rangesDuring(async () => { page = await jobs.page(jobId, skip, PAGE_BYTES) })
    const next = page?.nextSkip ?? DOCS
    expect(page?.data).toHaveLength(next - skip)
    // Redis: contiguous ranges from `skip`, no more entries read than the page holds and one beyond it.
    expect(ranges[0]?.[0]).toBe(skip)
    for (let r = 1; r < ranges.length; r++) expect(ranges[r]?.[0]).toBe((ranges[r - 1]?.[1] ?? 0) + 1)
    const lastRead = ranges.at(-1)?.[1] ?? -1
    expect(lastRead).toBeLessThanOrEqual(next)
    const bytesRead = entryBytes.slice(skip, lastRead + 1).reduce((a, b) => a + b, 0)
    expect(bytesRead).toBeLessThanOrEqual(PAGE_BYTES + INLINE_BYTES)
    // The storage: exactly the files of the page's documents that live there, each once.
    const refs = all.slice(skip, next).map(e => JSON.parse(e) as { $ref?: string }).flatMap(e => e.$ref === undefined ? [] : [e.$ref])
    expect(refs.length).toBeGreaterThan(0)
    expect([...storageReads].sort()).toEqual([...refs].sort())
  })
})
