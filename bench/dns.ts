// Issue 25's DNS bench: 200 pages whose image hosts resolve slowly. A DNS server on loopback (DNS_SERVERS) answers
// the names of HOSTS image hosts after STALL_MS; each page's og:image is on one of them, so its metadata answer
// probes that image. The same 200 pages are then asked with the image at the fixture's IP literal (probes, no
// lookup) and with no image at all (no probe). What the resolver owes (docs/operations.md#dns): one lookup per host
// (answers cached for their TTL, concurrent lookups of a name coalesced), so no page waits for more than one stall.
// Loopback only; bounded in time.
import { PNG } from 'pngjs'
import { startFixtureServer } from '../test/helpers/fixture-server.ts'
import { startDnsServer } from '../test/helpers/dns-server.ts'
import { BENCH_KEY, fmt, line, median, runJobs, startBenchService } from './lib.ts'

const PAGES = Number(process.env.BENCH_DNS_PAGES ?? 200)
const HOSTS = 10
const STALL_MS = Number(process.env.BENCH_DNS_STALL_MS ?? 1000)
const CONCURRENCY = 8

type Mode = 'none' | 'literal' | 'slow'

export interface DnsFigures {
  /** Per mode: the whole run (ms), and each page's answer time (median and slowest, ms). */
  [key: string]: number
}

/** Answers `PAGES` pages of `mode`, CONCURRENCY at a time: the run's time and each page's. */
async function pass (proUrl: string, origin: string, mode: Mode, tag: string): Promise<{ totalMs: number, pages: number[] }> {
  const { ms, latencies } = await runJobs(PAGES, CONCURRENCY, async (n) => {
    const url = `${origin}/dns-page?mode=${mode}&n=${n}&${tag}`
    const res = await fetch(`${proUrl}/?url=${encodeURIComponent(url)}`, { headers: { 'x-api-key': BENCH_KEY } })
    const body = await res.json() as { data?: { image?: { width?: number } | null } }
    if (res.status !== 200) throw new Error(`dns bench: page ${n} (${mode}) answered ${res.status}`)
    // The probe happened (the image's size is known), or there was nothing to probe.
    const width = body.data?.image?.width
    if (mode === 'none' ? width !== undefined : width !== 8) throw new Error(`dns bench: page ${n} (${mode}) image ${JSON.stringify(body.data?.image)}`)
  })
  return { totalMs: ms, pages: latencies }
}

export async function benchDns (): Promise<DnsFigures> {
  const fx = await startFixtureServer()
  const png = PNG.sync.write(new PNG({ width: 8, height: 8 }))
  fx.route('/image.png', (_req, res) => { res.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length }).end(png) })
  const hostOf = (n: number): string => `img-${n % HOSTS}.slow.test`
  fx.route('/dns-page', (req, res) => {
    const params = new URL(req.url ?? '/', 'http://x').searchParams
    const n = Number(params.get('n'))
    const mode = params.get('mode') as Mode
    const image = mode === 'none' ? '' : `<meta property="og:image" content="http://${mode === 'slow' ? hostOf(n) : '127.0.0.1'}:${fx.port}/image.png?n=${n}">`
    res.writeHead(200, { 'content-type': 'text/html' })
    res.end(`<!doctype html><html><head><title>Page ${n}</title>${image}</head><body><h1>Page ${n}</h1></body></html>`)
  })
  const dns = await startDnsServer((name) => name.endsWith('.slow.test') ? { addresses: ['127.0.0.1'], ttl: 300, delayMs: STALL_MS } : { rcode: 'NXDOMAIN' })
  const allowed = [fx.host, ...Array.from({ length: HOSTS }, (_, n) => `${hostOf(n)}:${fx.port}`)].join(',')
  const service = await startBenchService(fx, { ALLOW_PRIVATE_HOSTS: allowed, DNS_SERVERS: dns.server })
  const figures: DnsFigures = { pages: PAGES, hosts: HOSTS, stallMs: STALL_MS }
  try {
    // A pass of other pages warms the service (its code paths and probes) before anything is timed.
    await pass(service.proUrl, fx.origin, 'literal', 'warm')
    for (const mode of ['none', 'literal', 'slow'] as const) {
      const run = await pass(service.proUrl, fx.origin, mode, 'timed')
      figures[`${mode}.totalMs`] = run.totalMs
      figures[`${mode}.p50Ms`] = median(run.pages)
      figures[`${mode}.maxMs`] = Math.max(...run.pages)
    }
    const lookups = Array.from({ length: HOSTS }, (_, n) => dns.count(hostOf(n), 'A'))
    figures.maxLookupsPerHost = Math.max(...lookups)
    figures.totalLookups = dns.queries.length
    // The slowest page with slow lookups against the slowest without probes, in stalls: at most one is the target.
    figures.stallsSlowestPage = (figures['slow.maxMs']! - figures['none.maxMs']!) / STALL_MS
  } finally {
    await service.close()
    await dns.close()
    await fx.close()
  }
  return figures
}

export function printDns (f: DnsFigures): void {
  line(`## DNS: ${f.pages} pages, their images on ${f.hosts} hosts that resolve in ${f.stallMs} ms (issue 25)`)
  for (const mode of ['none', 'literal', 'slow']) {
    const label = mode === 'none' ? 'no image (no probe)' : mode === 'literal' ? 'image at an IP literal (probe, no lookup)' : 'image on a slow host (probe and lookup)'
    line(`    ${label.padEnd(44)} run ${fmt(f[`${mode}.totalMs`]! / 1000)} s, page median ${fmt(f[`${mode}.p50Ms`]!, 0)} ms, slowest ${fmt(f[`${mode}.maxMs`]!, 0)} ms`)
  }
  line(`    lookups: at most ${f.maxLookupsPerHost} per host (A), ${f.totalLookups} queries in all; the slowest page waited ${fmt(f.stallsSlowestPage!)} stalls more than the slowest without probes (target <= 1)`)
}
