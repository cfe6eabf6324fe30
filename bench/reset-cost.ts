// Where a reset's time goes, and what it costs a job beside it (issue 25), with Playwright and Chromium alone (the
// pool's Chromium settings, launched as the pool launches it). Not a target of `npm run bench`; run it as
//
//   sh scripts/node.sh bench/reset-cost.ts [jobs per series] [rounds]
//
// Part 1, one page: after a job (the article page at DPR 1, a goto until `load` and a fast capture), the reset's
// calls one at a time: `Page.navigate` to about:blank, a `Page.getFrameTree` sent right after it (it waits while
// the browser process is busy), the in-page check, the same navigation again from the blank document, and each
// clearing call, then all of them together. Part 2, jobs one at a time: without a reset; with the reset run beside
// the next job on another page of the same browser (as the pool did before "resets before jobs"), or of a second
// browser; and with the reset awaited between jobs (its time not counted). Medians in ms.
// The figures it gave are in docs/benchmarks.md ("A job after the reset, not beside it").
import type { Browser, BrowserContext, CDPSession, Page } from 'playwright-core'
import { findChromium } from '../src/browser/chromium.ts'
import { launchTestBrowser } from '../test/helpers/chromium.ts'
import { startFixtureServer } from '../test/helpers/fixture-server.ts'
import { median } from './lib.ts'

const JOBS = Number(process.argv[2] ?? 30)
const ROUNDS = Number(process.argv[3] ?? 3)

interface Slot { context: BrowserContext, page: Page, session: CDPSession }

async function slotOn (browser: Browser): Promise<Slot> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 })
  const page = await context.newPage()
  return { context, page, session: await context.newCDPSession(page) }
}

const fx = await startFixtureServer()
const executable = findChromium({ chromiumPath: process.env.CHROMIUM_PATH })
const browsers = [await launchTestBrowser(executable, { poolFeatures: true }), await launchTestBrowser(executable, { poolFeatures: true })]
const [first, second] = browsers as [Browser, Browser]
const one = [await slotOn(first), await slotOn(first)]
const two = [one[0]!, await slotOn(second)]
let tag = 0

async function job (slot: Slot): Promise<void> {
  await slot.page.goto(`${fx.origin}/article/?reset${tag++}`, { waitUntil: 'load' })
  await slot.session.send('Page.captureScreenshot', { format: 'png', optimizeForSpeed: true })
}

function clearing (slot: Slot): Array<[string, () => Promise<unknown>]> {
  return [
    ['cookies', async () => await slot.context.clearCookies()],
    ['permissions', async () => await slot.context.clearPermissions()],
    ['cache', async () => await slot.session.send('Network.clearBrowserCache')],
    ['history', async () => await slot.session.send('Page.resetNavigationHistory')],
    ['storage', async () => await slot.session.send('Storage.clearDataForOrigin', { origin: fx.origin, storageTypes: 'all' })]
  ]
}

async function reset (slot: Slot): Promise<void> {
  await slot.session.send('Page.navigate', { url: 'about:blank' })
  await slot.session.send('Runtime.evaluate', { expression: 'location.href', returnByValue: true })
  await Promise.all(clearing(slot).map(async ([, call]) => await call()))
}

async function resetParts (slot: Slot): Promise<Record<string, number[]>> {
  const parts: Record<string, number[]> = {}
  const time = async (name: string, call: () => Promise<unknown>): Promise<void> => {
    const started = performance.now()
    await call()
    ;(parts[name] ??= []).push(performance.now() - started)
  }
  const navigate = async (): Promise<unknown> => await slot.session.send('Page.navigate', { url: 'about:blank' })
  const check = async (): Promise<unknown> => await slot.session.send('Runtime.evaluate', { expression: 'location.href', returnByValue: true })
  for (let i = 0; i < JOBS; i++) {
    await job(slot)
    await time('navigate', navigate)
    await time('frame tree', async () => await slot.session.send('Page.getFrameTree'))
    await time('check', check)
    await time('navigate from blank', navigate)
    await time('check after it', check)
    for (const [name, call] of clearing(slot)) await time(name, call)
    await time('clearing together', async () => await Promise.all(clearing(slot).map(async ([, call]) => await call())))
  }
  return parts
}

/** Jobs one at a time on `slots` in turn; `resets`: each job's reset runs beside the next job, or (`awaited`) before it. */
async function series (slots: Slot[], resets: 'none' | 'beside' | 'awaited'): Promise<number> {
  const walls: number[] = []
  let pending: Promise<void> | undefined
  for (let i = 0; i < JOBS; i++) {
    const slot = slots[i % slots.length]!
    if (resets === 'awaited') await pending
    const started = performance.now()
    await job(slot)
    walls.push(performance.now() - started)
    if (resets !== 'none') pending = reset(slot)
  }
  await pending
  return median(walls)
}

const print = (label: string, values: number[]): void => { console.log(`${label.padEnd(36)} ${values.map(v => v.toFixed(1)).join(' / ')}`) }

const parts: Record<string, number[]> = {}
for (let r = 0; r < ROUNDS; r++) {
  for (const [name, values] of Object.entries(await resetParts(one[0]!))) (parts[name] ??= []).push(median(values))
}
console.log(`part 1: the reset's calls after a job, median of ${JOBS} per round (rounds: ${ROUNDS})`)
for (const [name, values] of Object.entries(parts)) print(name, values)

const walls: Record<string, number[]> = {}
for (let r = 0; r < ROUNDS; r++) {
  const add = (name: string, value: number): void => { (walls[name] ??= []).push(value) }
  add('no reset', await series([one[0]!], 'none'))
  add('reset beside the next job', await series(one, 'beside'))
  add('reset beside it, in another browser', await series(two, 'beside'))
  add('reset awaited (not counted)', await series([one[0]!], 'awaited'))
}
console.log(`part 2: a job's wall time, median of ${JOBS} per round`)
for (const [name, values] of Object.entries(walls)) print(name, values)

for (const browser of browsers) await browser.close()
await fx.close()
