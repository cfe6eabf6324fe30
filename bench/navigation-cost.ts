// What a navigation costs Chromium, by kind of process (issue 25): one reused page, the bench's article page (DPR 1),
// jobs one at a time, each a goto until `load` and a fast-encoder capture, then either nothing (`page`) or, as the
// pool's reset does, a navigation to about:blank (`page+blank`). Two browsers side by side, in alternating rounds:
// Playwright's defaults, and the pool's Chromium without DISABLED_FEATURES (src/browser/chromium.ts, launched the
// way the pool launches it). Prints CPU per job (ms, user + system) of each kind of Chromium process and of this
// process, and the wall time per job. Not a target of `npm run bench`; run it as
//
//   sh scripts/node.sh bench/navigation-cost.ts [jobs per series] [rounds]
//
// The figures it gave are in docs/benchmarks.md ("Chromium without RenderDocument").
import { readFileSync } from 'node:fs'
import type { Browser, CDPSession, Page } from 'playwright-core'
import { findChromium } from '../src/browser/chromium.ts'
import { launchTestBrowser } from '../test/helpers/chromium.ts'
import { startFixtureServer } from '../test/helpers/fixture-server.ts'
import { descendantsOf } from '../test/helpers/processes.ts'
import { median } from './lib.ts'

const JOBS = Number(process.argv[2] ?? 30)
const ROUNDS = Number(process.argv[3] ?? 3)

/** CPU time so far (ms) of `root` and each live process under it, by kind (`browser`, `renderer`, `gpu-process`, ...). */
function cpuByKind (root: number): Record<string, number> {
  const out: Record<string, number> = {}
  for (const { pid, cmd } of [{ pid: root, cmd: '' }, ...descendantsOf(root)]) {
    const kind = pid === root ? 'browser' : (/--type=(\S+)/.exec(cmd)?.[1] ?? 'other')
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      out[kind] = (out[kind] ?? 0) + (Number(fields[11]) + Number(fields[12])) * 10
    } catch {}
  }
  return out
}

function ownCpuMs (): number {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1000
}

interface Side { name: string, browser: Browser, pid: number, page: Page, session: CDPSession }

async function open (name: string, launch: () => Promise<Browser>): Promise<Side> {
  const before = new Set(descendantsOf(process.pid).map(p => p.pid))
  const browser = await launch()
  const pid = descendantsOf(process.pid).find(p => !before.has(p.pid) && p.cmd.includes('--remote-debugging-pipe') && !p.cmd.includes('--type='))?.pid
  if (pid === undefined) throw new Error(`no browser process found for ${name}`)
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 })
  const page = await context.newPage()
  const session = await context.newCDPSession(page)
  return { name, browser, pid, page, session }
}

const fx = await startFixtureServer()
const executable = findChromium({})
const sides = [
  await open("Playwright's defaults", async () => await launchTestBrowser(executable)),
  await open('without DISABLED_FEATURES', async () => await launchTestBrowser(executable, { poolFeatures: true }))
]
let tag = 0

async function job (side: Side, blank: boolean): Promise<void> {
  await side.page.goto(`${fx.origin}/article/?nav${tag++}`, { waitUntil: 'load' })
  for (let attempt = 0; ; attempt++) {
    try {
      await side.session.send('Page.captureScreenshot', { format: 'png', optimizeForSpeed: true })
      break
    } catch (err) {
      // Chromium rarely answers "Unable to capture screenshot" on a loaded machine.
      if (attempt >= 5) throw err
      await new Promise(resolve => setTimeout(resolve, 20))
    }
  }
  if (blank) {
    await side.session.send('Page.navigate', { url: 'about:blank' })
    await side.session.send('Runtime.evaluate', { expression: 'location.href', returnByValue: true })
  }
}

const results = new Map<string, Array<{ kinds: Record<string, number>, own: number, wall: number }>>()
try {
  for (let round = 0; round < ROUNDS; round++) {
    for (const side of sides) {
      for (const blank of [false, true]) {
        for (let i = 0; i < 3; i++) await job(side, blank)
        const before = cpuByKind(side.pid)
        const own = ownCpuMs()
        const started = performance.now()
        for (let i = 0; i < JOBS; i++) await job(side, blank)
        const wall = (performance.now() - started) / JOBS
        const after = cpuByKind(side.pid)
        const kinds = Object.fromEntries(Object.keys(after).map(k => [k, (after[k]! - (before[k] ?? 0)) / JOBS]))
        const key = `${side.name}, ${blank ? 'page+blank' : 'page'}`
        results.set(key, [...(results.get(key) ?? []), { kinds, own: (ownCpuMs() - own) / JOBS, wall }])
      }
    }
  }
  console.log(`per job, median of ${ROUNDS} rounds of ${JOBS} jobs (ms)`)
  for (const [key, runs] of results) {
    const kinds = Object.keys(runs[0]!.kinds)
    const total = median(runs.map(r => Object.values(r.kinds).reduce((a, b) => a + b, 0)))
    const parts = kinds.map(k => `${k} ${median(runs.map(r => r.kinds[k] ?? 0)).toFixed(0)}`).join(', ')
    console.log(`${key}: Chromium ${total.toFixed(0)} (${parts}), this process ${median(runs.map(r => r.own)).toFixed(0)}, wall ${median(runs.map(r => r.wall)).toFixed(0)}`)
  }
} finally {
  for (const side of sides) await side.browser.close()
  await fx.close()
}
