// Shared pieces of the benchmarks: a redis-server, a load generator in its own process, statistics.
import { spawn, execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { Session } from 'node:inspector/promises'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import type { FastifyInstance } from 'fastify'
import { freePort } from '../test/setup/global-setup.ts'
import type { FixtureServer } from '../test/helpers/fixture-server.ts'
import { loadConfig } from '../src/config.ts'
import { createLogger, logDestination } from '../src/logger.ts'
import { closeContext, createContext, type AppContext, type ContextOverrides } from '../src/context.ts'
import { buildApp } from '../src/app.ts'
import { settleHeap } from '../src/util/heap.ts'

const run = promisify(execFile)

export async function startRedis (): Promise<{ url: string, stop: () => void }> {
  const port = await freePort()
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pagecast-bench-redis-'))
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' })
  // However the bench ends (a crash included), its redis-server goes with it.
  const killOnExit = (): void => { child.kill('SIGTERM') }
  process.once('exit', killOnExit)
  for (let i = 0; i < 100; i++) {
    try {
      await run('redis-cli', ['-p', String(port), 'ping'])
      break
    } catch {
      await new Promise(r => setTimeout(r, 50))
    }
  }
  return { url: `redis://127.0.0.1:${port}`, stop: () => { process.removeListener('exit', killOnExit); child.kill('SIGTERM') } }
}

/** The key of the pro listener the in-process benchmarks start. */
export const BENCH_KEY = 'bench-key'

export interface BenchService {
  ctx: AppContext
  pro: FastifyInstance
  /** `http://127.0.0.1:<port>` of the pro listener (key: BENCH_KEY). */
  proUrl: string
  close (): Promise<void>
}

/**
 * The service in this process with its pro listener on a free port, allowed to reach the fixture server (`host`: its
 * ALLOW_PRIVATE_HOSTS), logging as in production (info, asynchronous writes) to /dev/null; `overrides` as tests pass
 * them (a resolver for the crawl site's names). `close()` stops it; the fixture server is the caller's.
 */
export async function startBenchService (fx: Pick<FixtureServer, 'host'>, env: Record<string, string> = {}, overrides: ContextOverrides = {}): Promise<BenchService> {
  const sink = logDestination('/dev/null')
  const config = loadConfig({ API_KEYS: BENCH_KEY, ALLOW_PRIVATE_HOSTS: fx.host, LOG_LEVEL: 'info', ...env })
  const ctx = await createContext(config, createLogger({ level: 'info', destination: sink }), overrides)
  const pro = await buildApp(ctx, { plan: 'pro' })
  const proUrl = await pro.listen({ port: 0, host: '127.0.0.1' })
  settleHeap() // as server.ts does before it listens (util/heap.ts)
  return {
    ctx,
    pro,
    proUrl,
    async close () {
      await pro.close()
      await closeContext(ctx)
    }
  }
}

export interface LoadResult {
  rps: number
  p50: number
  p99: number
  errors: number
  non2xx: number
  /** Answers received during the run. */
  total: number
}

/** autocannon in a child process, so the load generator does not share the server's event loop. */
/** `idReplacement`: each request's body has its `[<id>]` replaced by a new id (autocannon's -I), as a client's ids change. */
export async function load (url: string, options: { connections: number, seconds: number, headers?: Record<string, string>, method?: string, body?: string, idReplacement?: boolean }): Promise<LoadResult> {
  const bin = path.resolve(import.meta.dirname, '../node_modules/.bin/autocannon')
  const args = ['-j', '-c', String(options.connections), '-d', String(options.seconds)]
  for (const [k, v] of Object.entries(options.headers ?? {})) args.push('-H', `${k}=${v}`)
  if (options.method !== undefined) args.push('-m', options.method)
  if (options.body !== undefined) args.push('-b', options.body)
  if (options.idReplacement === true) args.push('-I')
  args.push(url)
  const { stdout } = await run(bin, args, { maxBuffer: 16 * 1024 * 1024 })
  const result = JSON.parse(stdout) as { requests: { average: number, total: number }, latency: { p50: number, p99: number }, errors: number, non2xx: number }
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, errors: result.errors, non2xx: result.non2xx, total: result.requests.total }
}

/** The free quota left for this client (`x-rate-limit-remaining` of one request to `url`). */
export async function quotaLeft (url: string): Promise<number> {
  const res = await fetch(url)
  await res.arrayBuffer()
  const left = Number(res.headers.get('x-rate-limit-remaining'))
  if (res.status !== 200 || !Number.isFinite(left)) throw new Error(`no quota headers on the free listener (${res.status})`)
  return left
}

/**
 * The free case must be what a user's is: every answer counted against the quota, in the store. Checks it of a
 * run: what the quota lost between `before` and a request after the run, against the answers the run got (in
 * flight at its end are at most `connections` more).
 */
export async function assertQuotaCounted (url: string, before: number, answers: number, connections: number): Promise<void> {
  const counted = before - await quotaLeft(url) - 1
  if (counted < answers || counted > answers + connections) throw new Error(`the free quota counted ${counted} of ${answers} answers`)
}

/**
 * Runs `work` under V8's sampling profiler (one sample every `intervalUs`) and writes the profile to `file`, which
 * Chrome DevTools opens; without a file it only runs `work`. For the profiling harnesses (hit-profile, cold-profile).
 */
export async function profiled<T> (file: string | undefined, intervalUs: number, work: () => Promise<T>): Promise<T> {
  if (file === undefined) return await work()
  const session = new Session()
  session.connect()
  try {
    await session.post('Profiler.enable')
    await session.post('Profiler.setSamplingInterval', { interval: intervalUs })
    await session.post('Profiler.start')
    const result = await work()
    const { profile } = await session.post('Profiler.stop')
    writeFileSync(file, JSON.stringify(profile))
    return result
  } finally {
    session.disconnect()
  }
}

/** One line of a part's report on stdout. */
export function line (s: string): void {
  process.stdout.write(`${s}\n`)
}

export function median (values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : ((sorted[mid - 1]! + sorted[mid]!) / 2)
}

/** Runs `n` jobs with at most `c` at once: the whole run's time and each job's, in ms (in the order they ended). */
export async function runJobs (n: number, c: number, job: (i: number) => Promise<unknown>, pauseMs = 0): Promise<{ ms: number, latencies: number[] }> {
  const latencies: number[] = []
  let next = 0
  const started = performance.now()
  await Promise.all(Array.from({ length: c }, async () => {
    for (let i = next++; i < n; i = next++) {
      const t = performance.now()
      await job(i)
      latencies.push(performance.now() - t)
      // A pause after each job (not in its latency): one user reading an answer before asking again.
      if (pauseMs > 0) await new Promise(resolve => setTimeout(resolve, pauseMs))
    }
  }))
  return { ms: performance.now() - started, latencies }
}

export function fmt (n: number, digits = 2): string {
  return n.toFixed(digits)
}

/** The process and all its descendants (Linux /proc). */
function processTree (root: number): Set<number> {
  const parents = new Map<number, number>()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]))
    } catch {}
  }
  const tree = new Set([root])
  let grew = true
  while (grew) {
    grew = false
    for (const [pid, ppid] of parents) if (tree.has(ppid) && !tree.has(pid)) { tree.add(pid); grew = true }
  }
  return tree
}

function pssKb (pid: number): number {
  try {
    return Number(/^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0)
  } catch {
    return 0
  }
}

/** A field of /proc/<pid>/status, in its unit (kB for sizes), 0 when the process is gone. */
function statusField (pid: number, field: string): number {
  try {
    return Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0)
  } catch {
    return 0
  }
}

export interface TreeMemory {
  /** The root process (the service, its worker threads included), in MiB. */
  servicePss: number
  serviceThreads: number
  /** Every process under it (Chromium's), in MiB. */
  chromiumPss: number
  chromiumProcesses: number
  totalPss: number
  /** RSS summed over the processes: a shared page counts once per process that maps it. */
  totalRss: number
}

/** The memory of a process and everything under it, split between the root and its descendants (Linux /proc). */
export function treeMemory (root: number): TreeMemory {
  const out: TreeMemory = { servicePss: 0, serviceThreads: statusField(root, 'Threads'), chromiumPss: 0, chromiumProcesses: 0, totalPss: 0, totalRss: 0 }
  for (const pid of processTree(root)) {
    const pss = pssKb(pid) / 1024
    out.totalPss += pss
    out.totalRss += statusField(pid, 'VmRSS') / 1024
    if (pid === root) {
      out.servicePss += pss
    } else {
      out.chromiumPss += pss
      out.chromiumProcesses += 1
    }
  }
  return out
}

/** Proportional set size of a process and all its descendants, in MiB (Linux /proc). */
export function treePss (root: number): number {
  let kb = 0
  for (const pid of processTree(root)) kb += pssKb(pid)
  return kb / 1024
}

/**
 * The same by kind of process, in MiB: `service` (the root), Chromium's `browser` process, and its children by their
 * `--type` (`renderer`, `gpu-process`, `zygote`) or utility sub-type (`NetworkService`, `StorageService`, ...);
 * `<kind>.count` is how many processes of that kind there are.
 */
export function treePssByKind (root: number): Record<string, number> {
  const out: Record<string, number> = {}
  for (const pid of processTree(root)) {
    let kind = 'other'
    try {
      // Chromium rewrites its processes' titles: the arguments may be joined by spaces instead of NULs.
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split(/[\0 ]/)
      const value = (flag: string): string | undefined => args.find(a => a.startsWith(flag))?.slice(flag.length)
      const type = value('--type=')
      kind = pid === root ? 'service' : type === undefined ? (/chrom/i.test(args[0] ?? '') ? 'browser' : 'other') : value('--utility-sub-type=')?.split('.').at(-1) ?? type
    } catch {}
    out[kind] = (out[kind] ?? 0) + pssKb(pid) / 1024
    out[`${kind}.count`] = (out[`${kind}.count`] ?? 0) + 1
  }
  return out
}
