// The crawl's benchmark (issue 24, docs/benchmarks.md#crawl): a crawl of the 200-page fixture site
// (test/helpers/crawl-site.ts) through POST /v2/crawl, polled to completion, in pages per second, against the same
// pages fetched by `GET /` with the same options (the query each crawl page stands for: scrapeQuery of the crawl's
// scrape options plus the `links` it adds) at the same concurrency (the per-host limit, CRAWL_HOST_CONCURRENCY,
// which is what bounds a crawl of one site). Each run gets a service of its own (a fresh cache, and with
// BENCH_CRAWL_QUEUE=bullmq a fresh redis-server), so no run reads another's cache. Rounds alternate crawl, GET, GET,
// crawl, so a drifting machine favours neither. Loopback only; bounded in time.
//   BENCH_CRAWL_QUEUES (default `memory,bullmq`): the embedded queue `npm start` runs, BullMQ on a redis-server
//   BENCH_CRAWL_POLL_MS (default 100): how often the client polls the job; BENCH_CRAWL_ROUNDS (default 4)
import { startCrawlSite, type CrawlSite } from '../test/helpers/crawl-site.ts'
import { readScrapeRequest } from '../src/firecrawl/request.ts'
import { scrapeQuery } from '../src/firecrawl/query.ts'
import { BENCH_KEY, fmt, line, median, startBenchService, startRedis, type BenchService } from './lib.ts'

const HOST_CONCURRENCY = Number(process.env.CRAWL_HOST_CONCURRENCY ?? 2)
const QUEUES = (process.env.BENCH_CRAWL_QUEUES ?? 'memory,bullmq').split(',')
const POLL_MS = Number(process.env.BENCH_CRAWL_POLL_MS ?? 100)
const ROUNDS = Number(process.env.BENCH_CRAWL_ROUNDS ?? 4)
/** The crawl of the whole site (its truth's `crawlAll`: every page robots.txt allows, the calendar trap excluded). */
const CRAWL = { excludePaths: ['^/cal/'], ignoreQueryParameters: true, limit: 1000 }
/** A crawl page's scrape options: the default format and the links the crawl adds to follow them. */
const PAGE_OPTIONS = { formats: ['markdown', 'links'] }

/** `polls`: how many polls a crawl took, `pollMs`: their time in all (each answer carries the documents so far). */
interface Run { pages: number, seconds: number, pps: number, polls?: number, pollMs?: number }

async function service (site: CrawlSite, queue: string, work: (s: BenchService) => Promise<Run>): Promise<Run> {
  const redis = queue === 'bullmq' ? await startRedis() : undefined
  const env: Record<string, string> = { CRAWL_HOST_CONCURRENCY: String(HOST_CONCURRENCY), ...(redis === undefined ? {} : { REDIS_URL: redis.url, STORAGE_SCOPE: 'instance' }) }
  const s = await startBenchService({ host: site.allowPrivateHosts }, env, { resolve: site.resolve })
  try {
    return await work(s)
  } finally {
    await s.close()
    redis?.stop()
  }
}

const headers = { 'x-api-key': BENCH_KEY, 'content-type': 'application/json' }

/** One crawl, from the POST to the poll that sees it completed; the source URLs of its documents. */
async function crawl (s: BenchService, origin: string, sources: string[]): Promise<Run> {
  const t0 = performance.now()
  const res = await fetch(`${s.proUrl}/v2/crawl`, { method: 'POST', headers, body: JSON.stringify({ url: `${origin}/`, ...CRAWL }) })
  const started = await res.json() as { id?: string }
  if (res.status !== 200 || started.id === undefined) throw new Error(`POST /v2/crawl: ${res.status} ${JSON.stringify(started)}`)
  let url: string | undefined = `${s.proUrl}/v2/crawl/${started.id}`
  let status = 'scraping'
  let first: { completed: number, data: Array<{ metadata?: { sourceURL?: string } }>, next?: string } | undefined
  let polls = 0
  let pollMs = 0
  for (; status === 'scraping'; polls++) {
    if (polls > 300_000 / POLL_MS) throw new Error('the crawl did not complete in 5 minutes')
    await new Promise(resolve => setTimeout(resolve, POLL_MS))
    const p0 = performance.now()
    const poll = await (await fetch(url, { headers })).json() as { status: string, completed: number, data: Array<{ metadata?: { sourceURL?: string } }>, next?: string }
    pollMs += performance.now() - p0
    status = poll.status
    first = poll
  }
  const seconds = (performance.now() - t0) / 1000
  if (status !== 'completed' || first === undefined) throw new Error(`crawl ended ${status}`)
  // The documents (after the clock stopped): all of `next`'s pages.
  const docs = [...first.data]
  url = first.next
  while (url !== undefined) {
    const more = await (await fetch(url, { headers })).json() as { data: typeof docs, next?: string }
    docs.push(...more.data)
    url = more.next
  }
  sources.splice(0, sources.length, ...docs.map(d => String(d.metadata?.sourceURL)))
  return { pages: first.completed, seconds, pps: first.completed / seconds, polls, pollMs }
}

/** The same pages by `GET /`, `HOST_CONCURRENCY` at a time, each answer checked. */
async function gets (s: BenchService, urls: readonly string[]): Promise<Run> {
  const queries = urls.map(url => `${s.proUrl}/?${scrapeQuery(readScrapeRequest({ ...PAGE_OPTIONS, url }, 'v2'), true)}`)
  let next = 0
  const t0 = performance.now()
  await Promise.all(Array.from({ length: HOST_CONCURRENCY }, async () => {
    while (next < queries.length) {
      const query = queries[next++]!
      const res = await fetch(query, { headers: { 'x-api-key': BENCH_KEY } })
      const body = await res.text()
      if (res.status !== 200) throw new Error(`GET /: ${res.status} ${body.slice(0, 200)}`)
    }
  }))
  const seconds = (performance.now() - t0) / 1000
  return { pages: urls.length, seconds, pps: urls.length / seconds }
}

/** Per queue: `<queue>.crawlPps`, `.getPps`, `.ratio` (the means of the rounds), `.pages`. */
export async function benchCrawl (): Promise<Record<string, number>> {
  const site = await startCrawlSite()
  const sources: string[] = []
  const figures: Record<string, number> = { concurrency: HOST_CONCURRENCY }
  const mean = (runs: Run[], pick: (r: Run) => number): number => runs.reduce((sum, r) => sum + pick(r), 0) / runs.length
  try {
    for (const queue of QUEUES) {
      const crawls: Run[] = []
      const plain: Run[] = []
      // The first crawl says which pages a crawl fetches; every GET / round fetches exactly those.
      for (let i = 0; i < ROUNDS; i++) {
        for (const which of i % 2 === 0 ? ['crawl', 'get'] : ['get', 'crawl']) {
          if (which === 'crawl') crawls.push(await service(site, queue, async s => await crawl(s, site.origin, sources)))
          else plain.push(await service(site, queue, async s => await gets(s, sources)))
        }
      }
      line(`${queue}: rounds (crawl / GET /) ${crawls.map((r, i) => `${r.pages} pages in ${fmt(r.seconds)} / ${fmt(plain[i]!.seconds)} s (${r.polls} polls, ${fmt(r.pollMs ?? 0, 0)} ms)`).join(', ')}`)
      figures[`${queue}.pages`] = mean(crawls, r => r.pages)
      figures[`${queue}.crawlPps`] = mean(crawls, r => r.pps)
      figures[`${queue}.getPps`] = mean(plain, r => r.pps)
      // Each round's crawl against its own GET / run (side by side in time): on a loaded machine the load moves
      // between rounds more than within one, so the figure is the median of the rounds' ratios.
      figures[`${queue}.ratio`] = median(crawls.map((r, i) => r.pps / plain[i]!.pps))
    }
  } finally {
    await site.close()
  }
  return figures
}

export function printCrawl (f: Record<string, number>): void {
  line('## Crawl (POST /v2/crawl against GET /)')
  for (const queue of QUEUES) {
    line(`${queue} queue: crawl of the 200-page site, ${fmt(f[`${queue}.pages`]!, 0)} pages, ${fmt(f[`${queue}.crawlPps`]!, 1)} pages/s (polled every ${POLL_MS} ms) ` +
      `against ${fmt(f[`${queue}.getPps`]!, 1)} pages/s by GET /, ${f.concurrency} at a time; ratio (median of the rounds') ${fmt(f[`${queue}.ratio`]!)} (target >= 0.90)`)
  }
}
