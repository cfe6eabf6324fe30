// Admission by deadline (issue 25 item 3, docs/browser.md#admission): a burst of 200 screenshot requests with the
// default settings (BROWSER_CONCURRENCY, BROWSER_QUEUE_LIMIT and MAX_TIMEOUT as shipped). Every request is answered;
// a request that cannot start early enough to finish before its deadline is refused with 503 EBUSY and a
// retry-after from the queue's measured pace, at once, instead of waiting in the queue for a 504.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { build, qs, type Built } from '../helpers/build.ts'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'

const REQUESTS = 200

let fx: FixtureServer
let app: Built
let base: string

beforeAll(async () => {
  fx = await startFixtureServer()
  app = await build({ ALLOW_PRIVATE_HOSTS: fx.host, FREE_DAILY_LIMIT: '0', LOG_LEVEL: 'warn' })
  base = await app.free.listen({ port: 0, host: '127.0.0.1' })
}, 60_000)

afterAll(async () => {
  await app?.close()
  await fx?.close()
})

describe('admission by deadline', () => {
  it('answers a burst of 200 screenshots with results or a prompt EBUSY, and no 504 from queueing', async () => {
    // A few renders first: the browser is up and the queue has measured its pace.
    for (let i = 0; i < 3; i++) {
      const warm = await fetch(`${base}/?${qs({ url: `${fx.origin}/article/?warm=${i}`, screenshot: true })}`)
      expect(warm.status).toBe(200)
    }
    const results = await Promise.all(Array.from({ length: REQUESTS }, async (_, i) => {
      const t = performance.now()
      const res = await fetch(`${base}/?${qs({ url: `${fx.origin}/article/?n=${i}`, screenshot: true })}`, { signal: AbortSignal.timeout(60_000) })
      const body = await res.json() as { code?: string }
      return { status: res.status, code: body.code, retryAfter: res.headers.get('retry-after'), ms: performance.now() - t }
    }))
    const ok = results.filter(r => r.status === 200)
    const busy = results.filter(r => r.status === 503)
    const other = results.filter(r => r.status !== 200 && r.status !== 503)
    const times = busy.map(r => r.ms).sort((a, b) => a - b)
    const at = (q: number): number => Math.round(times[Math.floor((times.length - 1) * q)] ?? 0)
    process.stdout.write(`admission: ${ok.length} served, ${busy.length} EBUSY (min ${at(0)}, p10 ${at(0.1)}, median ${at(0.5)}, p90 ${at(0.9)}, max ${at(1)} ms), ${other.length} other\n`)
    expect(other.map(r => `${r.status} ${r.code}`)).toEqual([])
    expect(ok.length).toBeGreaterThan(0)
    for (const r of busy) {
      expect(r.code).toBe('EBUSY')
      expect(Number(r.retryAfter)).toBeGreaterThanOrEqual(1)
    }
    // Refused at admission, without waiting in the queue: most (a waiter whose estimate proved short leaves the queue
    // when the pace shows it, still without a 504; under a load average of 8, 148 of 200 were refused at admission,
    // so the share is held at half, not at nine tenths). Counted by the pool, as /metrics shows them.
    const { refused } = app.ctx.browser.stats()
    process.stdout.write(`admission: refused ${JSON.stringify(refused)}, measured job ${Math.round(app.ctx.browser.stats().jobMs)} ms\n`)
    expect(refused.full + refused.late + refused.left).toBe(busy.length)
    expect(refused.full + refused.late).toBeGreaterThanOrEqual(Math.floor(busy.length * 0.5))
    const metrics = await (await fetch(`${base}/metrics`)).text()
    expect(metrics).toContain(`pagecast_browser_refusals_total{reason="late"} ${refused.late}`)
  }, 120_000)
})
