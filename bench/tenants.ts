// The pro listener's cache hit with the key in API_KEYS against the same key as one of 10,000 tenants of a KEYS_FILE
// (issue 23: a lookup by hash, not a scan). Runs A, B, B, A under autocannon in one process and prints each run's
// rate and server CPU per request (process.cpuUsage: steadier than the rate on a busy machine), then B/A.
//   sh scripts/node.sh bench/tenants.ts [seconds] [connections] [tenants]
import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { loadConfig } from '../src/config.ts'
import { createLogger, logDestination } from '../src/logger.ts'
import { closeContext, createContext } from '../src/context.ts'
import { buildApp } from '../src/app.ts'
import { settleHeap } from '../src/util/heap.ts'
import { startFixtureServer } from '../test/helpers/fixture-server.ts'
import { load, startRedis } from './lib.ts'

const seconds = Number(process.argv[2] ?? 8)
const connections = Number(process.argv[3] ?? 50)
const count = Number(process.argv[4] ?? 10_000)
const KEY = 'bench-key'

const redis = await startRedis()
const fx = await startFixtureServer()
const dir = mkdtempSync(path.join(os.tmpdir(), 'pagecast-bench-keys-'))
const file = path.join(dir, 'keys.json')
const tenants: Record<string, { keys: string[] }> = {}
for (let i = 0; i < count; i++) tenants[`t${i}`] = { keys: [`sha256:${createHash('sha256').update(i === count >> 1 ? KEY : `other-key-${i}`).digest('hex')}`] }
writeFileSync(file, JSON.stringify({ tenants }))
const sink = logDestination('/dev/null')

async function run (keys: Record<string, string>): Promise<{ rps: number, cpu: number }> {
  const config = loadConfig({ REDIS_URL: redis.url, ...keys, ALLOW_PRIVATE_HOSTS: fx.host, LOG_LEVEL: 'info', STORAGE_SCOPE: 'instance' })
  const ctx = await createContext(config, createLogger({ level: 'info', destination: sink }))
  const app = await buildApp(ctx, { plan: 'pro' })
  const url = `${await app.listen({ port: 0, host: '127.0.0.1' })}/?url=${encodeURIComponent(`${fx.origin}/article/`)}`
  settleHeap() // as server.ts does before it listens (util/heap.ts)
  const headers = { 'x-api-key': KEY }
  if ((await fetch(url, { headers })).status !== 200) throw new Error('warm-up failed')
  await load(url, { connections, seconds: 2, headers })
  const before = process.cpuUsage()
  const result = await load(url, { connections, seconds, headers })
  const used = process.cpuUsage(before)
  await app.close()
  await closeContext(ctx)
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`non-2xx ${result.non2xx}, errors ${result.errors}`)
  return { rps: result.rps, cpu: (used.user + used.system) / result.total }
}

const rows: Array<{ name: string, rps: number, cpu: number }> = []
// A, B, then B, A: a machine whose load drifts, or a process that warms up, favours neither.
for (const order of [[0, 1], [1, 0]]) {
  for (const which of order) {
    rows.push(which === 0 ? { name: 'API_KEYS', ...await run({ API_KEYS: KEY }) } : { name: `KEYS_FILE (${count} tenants)`, ...await run({ KEYS_FILE: file }) })
  }
}
for (const r of rows) process.stdout.write(`${r.name}: ${Math.round(r.rps)} req/s, CPU per request ${r.cpu.toFixed(1)} µs\n`)
const mean = (name: string, f: (r: typeof rows[number]) => number): number => { const m = rows.filter(r => r.name === name); return m.reduce((s, r) => s + f(r), 0) / m.length }
const [a, b] = ['API_KEYS', `KEYS_FILE (${count} tenants)`]
process.stdout.write(`KEYS_FILE / API_KEYS: rate ${(mean(b, r => r.rps) / mean(a, r => r.rps)).toFixed(2)}, CPU per request ${(mean(b, r => r.cpu) / mean(a, r => r.cpu)).toFixed(2)}\n`)
await fx.close()
redis.stop()
rmSync(dir, { recursive: true, force: true })
process.exit(0)
