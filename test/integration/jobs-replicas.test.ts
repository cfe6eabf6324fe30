// Three real instances (three processes) on one Redis of their own: a 200-page crawl started on one is worked by all
// of them through BullMQ; one instance is SIGKILLed mid-crawl and the crawl still completes with every page once (its
// pages are taken over after JOB_STALL_TIMEOUT); the per-host limit (CRAWL_HOST_CONCURRENCY=2) holds across them,
// counted by the fixture server itself as requests in flight.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import Firecrawl from '@mendable/firecrawl-js'
import { startRedisNode } from '../helpers/redis-topology.ts'
import { startInstance, stopInstances, type Instance } from '../helpers/instances.ts'
import { parseMetrics, valueOf } from '../helpers/metrics.ts'

const PAGES = 200
let site: http.Server
let origin: string
let redis: Awaited<ReturnType<typeof startRedisNode>>
const instances: Instance[] = []
const hits = new Map<string, number>()
let inFlight = 0
let peak = 0

beforeAll(async () => {
  // Page n links to n+1..n+3 and back to 0: every page reachable, many links seen twice or more.
  site = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname
    const match = /^\/p\/(\d+)$/.exec(path)
    if (match === null) { res.writeHead(404, { 'content-type': 'text/html' }); res.end('<title>Not found</title>'); return }
    hits.set(path, (hits.get(path) ?? 0) + 1)
    inFlight += 1
    peak = Math.max(peak, inFlight)
    const n = Number(match[1])
    setTimeout(() => {
      inFlight -= 1
      const links = [n + 1, n + 2, n + 3, 0].filter(i => i < PAGES).map(i => `<a href="/p/${i}">Page ${i}</a>`).join(' ')
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      res.end(`<!doctype html><html lang="en"><title>Page ${n}</title><main><h1>Page ${n}</h1><p>Text of page ${n}.</p>${links}</main></html>`)
    }, 60)
  })
  await new Promise<void>(resolve => site.listen(0, '127.0.0.1', resolve))
  origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`
  redis = await startRedisNode()
  const env = { ALLOW_PRIVATE_HOSTS: new URL(origin).host, REDIS_URL: redis.url, API_KEYS: 'fc-key', BROWSER_CONCURRENCY: '1', JOB_CONCURRENCY: '4', JOB_STALL_TIMEOUT: '4s', CRAWL_HOST_CONCURRENCY: '2', STORAGE_SCOPE: 'instance' }
  // One after another: three starting at once outran the 90 s start limit at a load average of 20.
  for (let i = 0; i < 3; i++) instances.push(await startInstance(env))
}, 400_000)

afterAll(async () => {
  await stopInstances(instances)
  await redis?.close()
  await new Promise(resolve => site?.close(resolve))
})

async function fetches (instance: Instance): Promise<number> {
  const text = await fetch(`${instance.free}/metrics`).then(async r => await r.text())
  return valueOf(parseMetrics(text), 'pagecast_fetch_total')
}

describe('crawl jobs across replicas', () => {
  it('is worked by all three, survives a SIGKILLed replica with every page once, and keeps 2 requests per host', async () => {
    const [first, doomed, last] = instances as [Instance, Instance, Instance]
    const client = new Firecrawl({ apiKey: 'fc-key', apiUrl: first.pro })
    const started = await client.startCrawl(`${origin}/p/0`, { limit: 1000, sitemap: 'skip' })
    for (let i = 0; i < 600; i++) {
      if ((await client.getCrawlStatus(started.id, { autoPaginate: false })).completed >= 40) break
      await sleep(100)
    }
    const before = await Promise.all(instances.map(fetches))
    expect(before.every(n => n > 0)).toBe(true)
    doomed.kill()
    await doomed.exited
    const survivor = new Firecrawl({ apiKey: 'fc-key', apiUrl: last.pro })
    let job = await survivor.getCrawlStatus(started.id)
    for (let i = 0; i < 1200 && job.status === 'scraping'; i++) {
      await sleep(250)
      job = await survivor.getCrawlStatus(started.id)
    }
    expect(job.status).toBe('completed')
    expect(job.total).toBe(PAGES)
    expect(job.data).toHaveLength(PAGES)
    const sources = job.data.map(d => String(d.metadata?.sourceURL))
    expect(new Set(sources).size).toBe(PAGES)
    expect(peak).toBeLessThanOrEqual(2)
    expect(hits.size).toBe(PAGES)
  }, 400_000)
})
