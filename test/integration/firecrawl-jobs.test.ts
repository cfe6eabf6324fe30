// Batch scrape and crawl jobs (docs/jobs.md) driven by the real clients, unchanged, against a listening app on loopback
// (the in-process queue; the Redis queue across real replicas is test/integration/jobs-replicas.test.ts): the v2
// SDK's batchScrape and crawl (polling, `next` pages, cancel, errors, ongoing), the v1 client, webhooks checked by a receiver that verifies both signatures, retries to a receiver
// that fails, a private webhook URL refused (a pure address check), ignoreRobotsTxt refused on the free listener.
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Webhook } from 'standardwebhooks'
import type Firecrawl from '@mendable/firecrawl-js'
import { FC_KEY, postJson, startFirecrawlApp, type FirecrawlApp } from '../helpers/firecrawl.ts'
import { startWebhookReceiver, verifiesBoth, type Received } from '../helpers/webhook-receiver.ts'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
let fx: FixtureServer
let fc: FirecrawlApp
let proUrl: string
let freeUrl: string
const served = new Map<string, number>()

/** A small site: /s/<n> links to /s/<n+1> and /s/<n+2> up to 12, and to /private/ which robots.txt disallows. */
const SITE = 12

beforeAll(async () => {
  fx = await startFixtureServer()
  fx.route('/robots.txt', (_req, res) => { res.writeHead(200, { 'content-type': 'text/plain' }); res.end('User-agent: *\nDisallow: /s/private\n') })
  for (let n = 0; n < SITE; n++) {
    fx.route(`/s/${n}`, (req, res) => {
      served.set(req.url ?? '', (served.get(req.url ?? '') ?? 0) + 1)
      const links = [n + 1, n + 2].filter(i => i < SITE).map(i => `<a href="/s/${i}">Page ${i}</a>`).join(' ')
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      res.end(`<!doctype html><html lang="en"><title>Page ${n}</title><main><h1>Page ${n}</h1><p>Text of page ${n}.</p>${links} <a href="/s/private">Private</a></main></html>`)
    })
  }
  fx.route('/big', (req, res) => {
    const n = new URL(req.url ?? '/', 'http://x').searchParams.get('n')
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    res.end(`<!doctype html><title>Big ${n}</title><main><p>${'word '.repeat(700_000)}</p></main>`)
  })
  fc = await startFirecrawlApp({ ALLOW_PRIVATE_HOSTS: fx.host, BROWSER_CONCURRENCY: '1', FREE_DAILY_LIMIT: '1000', WEBHOOK_SECRET: SECRET, WEBHOOK_RETRY_DELAYS: '100ms,200ms,300ms' })
  ;({ freeUrl, proUrl } = fc)
}, 120_000)

afterAll(async () => {
  await fc?.close()
  await fx?.close()
})

const client = (): Firecrawl => fc.v2()
const titles = (docs: Array<{ metadata?: { title?: unknown } }>): string[] => docs.map(d => String(d.metadata?.title)).sort()

describe('v2 SDK', () => {
  it('batchScrape: every URL once, with invalid URLs listed and skipped', async () => {
    const urls = [0, 1, 2].map(n => `${fx.origin}/s/${n}`)
    const started = await client().startBatchScrape([...urls, 'not a url'], { options: { formats: ['markdown'] } })
    expect(started.invalidURLs).toEqual(['not a url'])
    const job = await client().batchScrape(urls, { options: { formats: ['markdown'] }, pollInterval: 1 })
    expect(job.status).toBe('completed')
    expect(job.total).toBe(3)
    expect(titles(job.data)).toEqual(['Page 0', 'Page 1', 'Page 2'])
    expect(job.data[0]?.markdown).toContain('Text of page')
  })

  it('crawl: every page the rules allow, each once, robots-blocked listed, `limit` obeyed', async () => {
    served.clear()
    const job = await client().crawl(`${fx.origin}/s/0`, { limit: 100, sitemap: 'skip', pollInterval: 1, timeout: 120 })
    expect(job.status).toBe('completed')
    expect(titles(job.data)).toEqual(Array.from({ length: SITE }, (_, i) => `Page ${i}`).sort())
    expect([...served.values()].every(n => n === 1)).toBe(true)
    expect(served.has('/s/private')).toBe(false)
    const started = await client().startCrawl(`${fx.origin}/s/0`, { limit: 4, sitemap: 'skip' })
    const capped = await client().getCrawlStatus(started.id)
    expect(capped.total).toBeLessThanOrEqual(4)
    const done = await client().crawl(`${fx.origin}/s/3`, { limit: 4, sitemap: 'skip', pollInterval: 1, timeout: 60 })
    expect(done.data).toHaveLength(4)
    const errors = await client().getCrawlErrors(started.id)
    expect(errors.robotsBlocked).toEqual([`${fx.origin}/s/private`])
  })

  it('follows `next` pages when the documents pass 10 MiB', async () => {
    const urls = [1, 2, 3, 4, 5].map(n => `${fx.origin}/big?n=${n}`)
    const started = await client().startBatchScrape(urls, { options: { formats: ['rawHtml'] } })
    for (let i = 0; i < 240 && (await client().getBatchScrapeStatus(started.id, { autoPaginate: false })).status === 'scraping'; i++) await sleep(500)
    const first = await client().getBatchScrapeStatus(started.id, { autoPaginate: false })
    expect(first.status).toBe('completed')
    expect(first.next).toMatch(new RegExp(`/v2/batch/scrape/${started.id}\\?skip=\\d+$`))
    expect(first.data.length).toBeLessThan(5)
    const all = await client().getBatchScrapeStatus(started.id)
    expect(all.data).toHaveLength(5)
    expect(titles(all.data)).toEqual(['Big 1', 'Big 2', 'Big 3', 'Big 4', 'Big 5'])
  }, 180_000)

  it('cancel: the crawl ends cancelled, leaves the ongoing list, and another caller cannot see it', async () => {
    fx.route('/slow/0', (_req, res) => { setTimeout(() => { res.writeHead(200, { 'content-type': 'text/html' }); res.end('<title>Slow</title><a href="/slow/1">1</a>') }, 1500) })
    const started = await client().startCrawl(`${fx.origin}/slow/0`, { limit: 10, sitemap: 'skip' })
    const ongoing = await fetch(`${proUrl}/v2/crawl/ongoing`, { headers: { authorization: 'Bearer fc-key' } }).then(async r => await r.json()) as { crawls: Array<{ id: string }> }
    expect(ongoing.crawls.map(c => c.id)).toContain(started.id)
    const freeView = await fetch(`${freeUrl}/v2/crawl/${started.id}`)
    expect(freeView.status).toBe(404)
    expect(await client().cancelCrawl(started.id)).toBe(true)
    expect((await client().getCrawlStatus(started.id)).status).toBe('cancelled')
    expect((await client().getActiveCrawls()).crawls.map(c => c.id)).not.toContain(started.id)
  })
})

describe('other clients', () => {
  it('v1 client: crawlUrl and batchScrapeUrls', async () => {
    const v1 = fc.v1()
    const crawl = await v1.crawlUrl(`${fx.origin}/s/8`, { limit: 10, ignoreSitemap: true, scrapeOptions: { formats: ['markdown'] } }, 1)
    expect(crawl.success).toBe(true)
    if (!crawl.success) return
    expect(titles(crawl.data)).toEqual(['Page 10', 'Page 11', 'Page 8', 'Page 9'])
    const batch = await v1.batchScrapeUrls([`${fx.origin}/s/1`], { formats: ['markdown'] }, 1)
    expect(batch.success && batch.data.length).toBe(1)
  })
})

describe('webhooks', () => {
  it('sends started, page and completed, each verified by both signatures', async () => {
    const hook = await startWebhookReceiver()
    const other = await startFirecrawlApp({ ALLOW_PRIVATE_HOSTS: `${fx.host},${new URL(hook.url).host}`, WEBHOOK_SECRET: SECRET, BROWSER_CONCURRENCY: '1' })
    try {
      const job = await other.v2().crawl(`${fx.origin}/s/10`, { limit: 5, sitemap: 'skip', pollInterval: 1, webhook: { url: hook.url, metadata: { run: 'seven' }, headers: { 'x-run': 'seven' } } })
      expect(job.status).toBe('completed')
      await hook.until(got => got.some(g => g.body.includes('crawl.completed')), 10_000)
      const types = hook.got.map(g => (JSON.parse(g.body) as { type: string }).type)
      expect(types.filter(t => t === 'crawl.page')).toHaveLength(2)
      expect(types).toContain('crawl.started')
      expect(types).toContain('crawl.completed')
      for (const received of hook.got) {
        expect(verifiesBoth(received, SECRET)).toBe(true)
        expect(received.headers['x-run']).toBe('seven')
        expect(JSON.parse(received.body)).toMatchObject({ success: true, id: job.id ?? expect.any(String), metadata: { run: 'seven' } })
      }
      // A body changed by one byte fails both checks.
      const first = hook.got[0] as Received
      expect(verifiesBoth({ ...first, body: `${first.body} ` }, SECRET)).toBe(false)
      expect(() => new Webhook(SECRET).verify(`${first.body} `, first.headers as Record<string, string>)).toThrow()
    } finally {
      await other.close()
      await hook.close()
    }
  })

  it('retries a receiver that fails, and refuses a webhook on a private address when the job is created', async () => {
    const hook = await startWebhookReceiver(2)
    const other = await startFirecrawlApp({ ALLOW_PRIVATE_HOSTS: `${fx.host},${new URL(hook.url).host}`, WEBHOOK_SECRET: SECRET, WEBHOOK_RETRY_DELAYS: '100ms,200ms,300ms', BROWSER_CONCURRENCY: '1' })
    try {
      await other.v2().startBatchScrape([`${fx.origin}/s/1`], { options: { formats: ['markdown'] }, webhook: { url: hook.url, events: ['started'] } })
      await hook.until(got => got.length > 0, 5_000)
      expect(hook.attempts()).toBe(3)
      expect(hook.got).toHaveLength(1)
      // 10.0.0.1 is refused by the literal address check: nothing connects to it.
      const refused = await postJson(other.proUrl, '/v2/batch/scrape', { urls: [`${fx.origin}/s/1`], webhook: 'http://10.0.0.1/hook' }, FC_KEY)
      expect(refused.status).toBe(400)
      expect(await refused.json()).toMatchObject({ success: false, code: 'EFORBIDDENURL' })
    } finally {
      await other.close()
      await hook.close()
    }
  })

  it('refuses ignoreRobotsTxt on the free listener', async () => {
    const res = await postJson(freeUrl, '/v2/crawl', { url: `${fx.origin}/s/0`, ignoreRobotsTxt: true })
    expect(res.status).toBe(402)
    expect(await res.json()).toMatchObject({ success: false, code: 'EROBOTSTXT' })
  })
})
