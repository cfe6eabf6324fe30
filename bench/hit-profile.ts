// Profiling harness for the cache-hit path (issue 14): one listener (pro, free, or the bare route of bench/metadata.ts;
// `mcp`: the pro listener's cached `tools/call` of bench/mcp.ts, the same request as `pro`'s `GET /`) under autocannon; prints the rate and the server's CPU time per request (process.cpuUsage, which a busy machine
// moves less than the rate) and, given a file name, writes a CPU profile of the measured load only (after a warm-up
// of 2 s; not the start). Loopback only; stops by itself. docs/benchmarks.md has the breakdown it gave.
//   sh scripts/node.sh bench/hit-profile.ts pro|free|bare|mcp [seconds] [connections] [profile.cpuprofile]
import Fastify from 'fastify'
import { Redis } from 'ioredis'
import { loadConfig } from '../src/config.ts'
import { createLogger, logDestination } from '../src/logger.ts'
import { closeContext, createContext } from '../src/context.ts'
import { buildApp } from '../src/app.ts'
import { cacheKeyOf } from '../src/cache/key.ts'
import { entryKeyOf } from '../src/cache/entries.ts'
import { parseQuery } from '../src/schemas/query.ts'
import { startFixtureServer } from '../test/helpers/fixture-server.ts'
import { settleHeap } from '../src/util/heap.ts'
import { assertQuotaCounted, load, profiled, quotaLeft, startRedis } from './lib.ts'

const KEY = 'bench-key'
const target = process.argv[2] ?? 'pro'
const seconds = Number(process.argv[3] ?? 10)
const connections = Number(process.argv[4] ?? 50)

const redis = await startRedis()
const fx = await startFixtureServer()
const sink = logDestination('/dev/null')
const config = loadConfig({ REDIS_URL: redis.url, API_KEYS: KEY, ALLOW_PRIVATE_HOSTS: fx.host, FREE_DAILY_LIMIT: '1000000000', LOG_LEVEL: 'info', STORAGE_SCOPE: 'instance' })
const ctx = await createContext(config, createLogger({ level: 'info', destination: sink }))
const app = await buildApp(ctx, { plan: target === 'free' ? 'free' : 'pro' })
const url = await app.listen({ port: 0, host: '127.0.0.1' })
settleHeap() // as server.ts does before it listens (util/heap.ts)
const query = `url=${encodeURIComponent(`${fx.origin}/article/`)}`
const warm = await fetch(`${url}/?${query}`, { headers: target === 'free' ? {} : { 'x-api-key': KEY } })
if (warm.status !== 200) throw new Error(`warm-up failed: ${warm.status}`)
const entryKey = `pagecast:${entryKeyOf(cacheKeyOf(parseQuery(query, { plan: 'pro', headers: {}, maxTimeout: config.maxTimeout })))}`
const bareRedis = new Redis(redis.url)
const bare = Fastify()
bare.get('/', async (_req, reply) => await reply.type('application/json; charset=utf-8').send(await bareRedis.get(entryKey)))
const bareUrl = await bare.listen({ port: 0, host: '127.0.0.1' })

const where = target === 'bare' ? `${bareUrl}/` : target === 'mcp' ? `${url}/mcp` : `${url}/?${query}`
const headers: Record<string, string> | undefined = target === 'pro' ? { 'x-api-key': KEY } : target === 'mcp' ? { 'x-api-key': KEY, 'content-type': 'application/json', accept: 'application/json, text/event-stream' } : undefined
const call = { jsonrpc: '2.0', id: '[<id>]', method: 'tools/call', params: { name: 'microlink_metadata', arguments: { url: `${fx.origin}/article/` } } }
const post = target === 'mcp' ? { method: 'POST', body: JSON.stringify(call), idReplacement: true } : {}
const out = process.argv[5]
await load(where, { connections, seconds: 2, ...post, ...(headers === undefined ? {} : { headers }) })
const left = target === 'free' ? await quotaLeft(where) : 0
const cpu = process.cpuUsage()
const result = await profiled(out, 200, async () => await load(where, { connections, seconds, ...post, ...(headers === undefined ? {} : { headers }) }))
const used = process.cpuUsage(cpu)
if (target === 'free') await assertQuotaCounted(where, left, result.total, connections)
process.stdout.write(`${target}: ${Math.round(result.rps)} req/s, non-2xx ${result.non2xx}, errors ${result.errors}; ` +
  `CPU per request ${(used.user / result.total).toFixed(1)} µs user + ${(used.system / result.total).toFixed(1)} µs system\n`)
await bare.close()
bareRedis.disconnect()
await app.close()
await closeContext(ctx)
await fx.close()
redis.stop()
process.exit(0)
