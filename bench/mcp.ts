// The MCP server's benchmark (docs/benchmarks.md): a cached `tools/call` against a cached `GET /` of the same
// request, on the same pro listener, 50 connections, measured side by side in one run (alternating, two rounds
// each). Besides the throughput, the server's own CPU time per answer (process.cpuUsage over each run, the load
// generator being another process): on a shared machine it moves less than the rate does. The call is `microlink_metadata` with the arguments that map to exactly the `GET /` query, so both read
// the same cache entry. Loopback only; bounded in time.
import { startFixtureServer } from '../test/helpers/fixture-server.ts'
import { BENCH_KEY, fmt, line, load, type LoadResult, startBenchService } from './lib.ts'

const KEY = BENCH_KEY
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const ROUNDS = 2

interface Measured extends LoadResult {
  /** This process's CPU time per answer, in µs. */
  cpuPerAnswer: number
}

async function measured (run: () => Promise<LoadResult>): Promise<Measured> {
  const before = process.cpuUsage()
  const result = await run()
  const used = process.cpuUsage(before)
  return { ...result, cpuPerAnswer: (used.user + used.system) / Math.max(1, result.total) }
}

export async function benchMcp (): Promise<Record<string, number>> {
  const fx = await startFixtureServer()
  const service = await startBenchService(fx)
  const { proUrl } = service
  const article = `${fx.origin}/article/`
  const getUrl = `${proUrl}/?url=${encodeURIComponent(article)}&prerender=false`
  const mcpUrl = `${proUrl}/mcp`
  const getHeaders = { 'x-api-key': KEY }
  const mcpHeaders = { 'x-api-key': KEY, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }
  // A new id on every request (autocannon's -I), as a real client sends: nothing may be kept by the whole body.
  const body = JSON.stringify({ jsonrpc: '2.0', id: '[<id>]', method: 'tools/call', params: { name: 'microlink_metadata', arguments: { url: article, prerender: false } } })
  const figures: Record<string, number> = {}
  try {
    // Fill the cache through GET /, then check that the call answers from that entry.
    const first = await fetch(getUrl, { headers: getHeaders })
    await first.arrayBuffer()
    const check = await fetch(mcpUrl, { method: 'POST', headers: mcpHeaders, body })
    const answer = await check.json() as { result?: { isError?: boolean, structuredContent?: { data?: { title?: unknown } } } }
    if (check.status !== 200 || answer.result?.isError === true || typeof answer.result?.structuredContent?.data?.title !== 'string') {
      throw new Error(`tools/call: ${check.status} ${JSON.stringify(answer)}`)
    }
    const hits = fx.hitsOf('/article/')
    await load(getUrl, { connections: 10, seconds: 1, headers: getHeaders })
    await load(mcpUrl, { connections: 10, seconds: 1, headers: mcpHeaders, method: 'POST', body, idReplacement: true })
    const gets: Measured[] = []
    const calls: Measured[] = []
    for (let i = 0; i < ROUNDS; i++) {
      gets.push(await measured(async () => await load(getUrl, { connections: 50, seconds: SECONDS, headers: getHeaders })))
      calls.push(await measured(async () => await load(mcpUrl, { connections: 50, seconds: SECONDS, headers: mcpHeaders, method: 'POST', body, idReplacement: true })))
    }
    if ([...gets, ...calls].some(r => r.non2xx + r.errors > 0)) throw new Error('errors or non-2xx answers during the runs')
    if (fx.hitsOf('/article/') !== hits) throw new Error('the target was fetched again: not a cache hit')
    const mean = (results: Measured[], pick: (r: Measured) => number): number => results.reduce((sum, r) => sum + pick(r), 0) / results.length
    figures.getRps = mean(gets, r => r.rps)
    figures.mcpRps = mean(calls, r => r.rps)
    figures.getP50 = mean(gets, r => r.p50)
    figures.mcpP50 = mean(calls, r => r.p50)
    figures.ratio = figures.getRps / figures.mcpRps
    figures.getCpu = mean(gets, r => r.cpuPerAnswer)
    figures.mcpCpu = mean(calls, r => r.cpuPerAnswer)
    figures.cpuRatio = figures.mcpCpu / figures.getCpu
  } finally {
    await service.close()
    await fx.close()
  }
  return figures
}

export function printMcp (f: Record<string, number>): void {
  line('## MCP (POST /mcp)')
  line(`cached tools/call (microlink_metadata): ${fmt(f.mcpRps!, 0)} req/s (p50 ${fmt(f.mcpP50!, 1)} ms) against ${fmt(f.getRps!, 0)} req/s ` +
    `(p50 ${fmt(f.getP50!, 1)} ms) for a cached GET / of the same request, 50 connections; cost ratio ${fmt(f.ratio!)} (target <= 1.50)`)
  line(`server CPU per answer: ${fmt(f.mcpCpu!, 0)} µs for the call against ${fmt(f.getCpu!, 0)} µs for GET /; CPU ratio ${fmt(f.cpuRatio!)}`)
}
