// Profiling harness for the guarded page fetch alone (docs/benchmarks.md, "The guarded fetch"): the HTTP client's
// fetchPage (src/net/http-client.ts; the guard exempts the fixture server as ALLOW_PRIVATE_HOSTS does in the
// benches), called as the service calls it (inside an egress scope, its own signal), against undici's plain
// `request()` of the same loopback page (the benches' raw side, body read as text), in the same process, the sides
// taking turns at going first; then the CPU time per fetch of each side alone. FETCH_BASE=<another checkout> adds
// that tree's client as a third side (before/after in the same rounds). Given a file name, it also writes a V8 CPU
// profile of fetchPage alone. Loopback only.
//   sh scripts/node.sh bench/fetch-profile.ts [rounds] [profile.cpuprofile]
import path from 'node:path'
import { request } from 'undici'
import { createAddressGuard } from '../src/net/guard.ts'
import { createHttpClient } from '../src/net/http-client.ts'
import { runWithEgress } from '../src/net/egress-scope.ts'
import type { HttpClient } from '../src/net/types.ts'
import { startFixtureServer } from '../test/helpers/fixture-server.ts'
import { fmt, median, profiled } from './lib.ts'

const rounds = Number(process.argv[2] ?? 2000)
const out = process.argv[3]

const fx = await startFixtureServer()
const page = `${fx.origin}/article/`
const MAX_BYTES = 10 * 1024 * 1024

type Side = (url: string) => Promise<number>

async function raw (url: string): Promise<number> {
  const res = await request(url)
  return (await res.body.text()).length
}

function sideOf (client: HttpClient, withEgress: typeof runWithEgress): Side {
  return async (url) => {
    const controller = new AbortController()
    return await withEgress({ carried: false }, async () => {
      const result = await client.fetchPage(url, { signal: controller.signal, maxBytes: MAX_BYTES, headers: {} })
      return result.body.toString('utf8').length
    })
  }
}

const clients: HttpClient[] = []
const sides = new Map<string, Side>([['raw', raw]])
const ourClient = createHttpClient({ guard: createAddressGuard({ allowPrivateHosts: [fx.host] }), userAgent: 'pagecast-bench' })
clients.push(ourClient)
sides.set('ours', sideOf(ourClient, runWithEgress))
if (process.env.FETCH_BASE !== undefined) {
  const root = path.resolve(process.env.FETCH_BASE)
  const baseGuard = await import(path.join(root, 'src/net/guard.ts')) as typeof import('../src/net/guard.ts')
  const baseHttp = await import(path.join(root, 'src/net/http-client.ts')) as typeof import('../src/net/http-client.ts')
  const baseEgress = await import(path.join(root, 'src/net/egress-scope.ts')) as typeof import('../src/net/egress-scope.ts')
  const baseClient = baseHttp.createHttpClient({ guard: baseGuard.createAddressGuard({ allowPrivateHosts: [fx.host] }), userAgent: 'pagecast-bench' })
  clients.push(baseClient)
  sides.set('base', sideOf(baseClient, baseEgress.runWithEgress))
}
const names = [...sides.keys()]

for (let i = 0; i < 500; i++) for (const side of sides.values()) await side(`${page}?w=${i}`)
const times = new Map(names.map((name) => [name, [] as number[]]))
for (let i = 0; i < rounds; i++) {
  for (let j = 0; j < names.length; j++) {
    const name = names[(i + j) % names.length]!
    const t = performance.now()
    await sides.get(name)!(`${page}?${name}=${i}`)
    times.get(name)!.push((performance.now() - t) * 1000)
  }
}
process.stdout.write(`fetch of the 780-byte page, medians of ${rounds} (µs): ` +
  names.map((name) => `${name} ${fmt(median(times.get(name)!), 0)}`).join(', ') + '\n' +
  // Round by round (the sides of one round ran back to back): steadier than the difference of the medians.
  `  paired differences, medians (µs): ${names.filter((name) => name !== 'raw').map((name) => {
    const ours = times.get(name)!
    const against = (other: string): string => fmt(median(ours.map((t, i) => t - times.get(other)![i]!)), 1)
    return `${name} - raw ${against('raw')}${name === 'ours' && sides.has('base') ? `, ours - base ${against('base')}` : ''}`
  }).join(', ')}\n`)
for (const name of [...names, ...names]) {
  const cpu = process.cpuUsage()
  for (let i = 0; i < rounds; i++) await sides.get(name)!(`${page}?${name}c=${i}`)
  const used = process.cpuUsage(cpu)
  process.stdout.write(`  CPU per fetch, ${name}: ${fmt(used.user / rounds, 0)} µs user + ${fmt(used.system / rounds, 0)} µs system\n`)
}
await profiled(out, 50, async () => { for (let i = 0; i < rounds; i++) await sides.get('ours')!(`${page}?p=${i}`) })
await Promise.all(clients.map(async (client) => { await client.close() }))
await fx.close()
