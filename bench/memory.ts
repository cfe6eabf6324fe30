// The memory of one service on its embedded defaults (no Redis, no S3; docs/operations.md#memory), measured: the
// service in its own process (src/server.ts, as `npm start` runs it) with everything it starts, Chromium's processes
// and the page reader's worker threads (threads of the service process, so inside its figures) included. Three
// readings of the whole process tree: idle after start (ready, 10 s settled, no request yet), the peak while 200
// concurrent screenshot requests for distinct URLs of a loopback fixture page are served (sampled every 100 ms), and
// 15 s after that burst. RSS counts a page shared by several processes once per process; PSS shares it out, so
// it is the figure that adds up. Prints a table for docs/operations.md. Loopback only; it stops the service itself.
//
//   npm run bench -- memory
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { startFixtureServer } from '../test/helpers/fixture-server.ts'
import { freePort } from '../test/setup/global-setup.ts'
import { fmt, line, treeMemory, type TreeMemory } from './lib.ts'

const ROOT = path.resolve(import.meta.dirname, '..')
const REQUESTS = Number(process.env.BENCH_MEMORY_REQUESTS ?? 200)
const KEY = 'bench-memory-key'

export interface MemoryFigures {
  idle: TreeMemory
  peak: TreeMemory
  after: TreeMemory
  /** Answers of the burst by status (`error`: no answer within 120 s). */
  statuses: Record<string, number>
  seconds: number
  machine: string
  load: string
}

const sleep = async (ms: number): Promise<void> => { await new Promise(resolve => setTimeout(resolve, ms)) }
const loadAverage = (): string => os.loadavg().map(n => n.toFixed(1)).join(', ')

export async function benchMemory (): Promise<MemoryFigures> {
  const fx = await startFixtureServer()
  const [free, pro] = [await freePort(), await freePort()]
  const storage = mkdtempSync(path.join(os.tmpdir(), 'pagecast-memory-files-'))
  // Embedded defaults: only the ports, the loopback bind, a key, the fixture server allowed, and a scratch folder.
  const child = spawn(process.execPath, ['src/server.ts'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH, HOME: process.env.HOME, FREE_PORT: String(free), PRO_PORT: String(pro), HOST: '127.0.0.1',
      API_KEYS: KEY, ALLOW_PRIVATE_HOSTS: fx.host, STORAGE_DIR: storage, LOG_LEVEL: 'warn'
    },
    stdio: ['ignore', 'ignore', 'inherit']
  })
  const exited = new Promise(resolve => child.once('exit', resolve))
  const base = `http://127.0.0.1:${pro}`
  const pid = child.pid!
  let sampler: NodeJS.Timeout | undefined
  try {
    let ready = false
    for (let i = 0; i < 1200 && !ready; i++) {
      ready = await fetch(`${base}/ready`).then(r => r.ok, () => false)
      if (!ready) await sleep(100)
    }
    if (!ready) throw new Error('the service did not become ready within 2 minutes')
    await sleep(10_000)
    const idle = treeMemory(pid)
    const load = loadAverage()
    let peak = idle
    sampler = setInterval(() => {
      const now = treeMemory(pid)
      if (now.totalPss > peak.totalPss) peak = now
    }, 100)
    const statuses: Record<string, number> = {}
    const started = performance.now()
    await Promise.all(Array.from({ length: REQUESTS }, async (_, i) => {
      const params = new URLSearchParams({ url: `${fx.origin}/article/?memory=${i}`, screenshot: 'true', meta: 'false' })
      try {
        const res = await fetch(`${base}/?${params}`, { headers: { 'x-api-key': KEY }, signal: AbortSignal.timeout(120_000) })
        await res.arrayBuffer()
        statuses[res.status] = (statuses[res.status] ?? 0) + 1
      } catch {
        statuses.error = (statuses.error ?? 0) + 1
      }
    }))
    const seconds = (performance.now() - started) / 1000
    clearInterval(sampler)
    await sleep(15_000)
    const after = treeMemory(pid)
    return { idle, peak, after, statuses, seconds, machine: `${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}`, load }
  } finally {
    clearInterval(sampler)
    child.kill('SIGTERM')
    await exited
    rmSync(storage, { recursive: true, force: true })
    await fx.close()
  }
}

export function printMemory (f: MemoryFigures): void {
  const mib = (n: number): string => fmt(n, 0)
  line(`\nmemory: one service on its embedded defaults, ${f.machine}, load average ${f.load} at the idle reading`)
  const answers = Object.entries(f.statuses).map(([status, n]) => `${status}: ${n}`).join(', ')
  line(`  burst: ${REQUESTS} concurrent screenshots of distinct URLs in ${fmt(f.seconds, 1)} s; answers by status ${answers}`)
  line('')
  line('| Reading | Service process (threads) | Chromium (processes) | Total PSS | Total RSS |')
  line('|---|---|---|---|---|')
  for (const [name, m] of [['idle (started, no request yet)', f.idle], [`peak during the ${REQUESTS}-request burst`, f.peak], ['15 s after the burst', f.after]] as const) {
    line(`| ${name} | ${mib(m.servicePss)} MiB (${m.serviceThreads}) | ${mib(m.chromiumPss)} MiB (${m.chromiumProcesses}) | ${mib(m.totalPss)} MiB | ${mib(m.totalRss)} MiB |`)
  }
}
