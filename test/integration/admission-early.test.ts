// The early verdict of admission by deadline (issue 25 item 3, docs/browser.md#admission): a request that must
// render, and that the browser queue would refuse, is refused before it does work that the refusal would throw away:
// here the lookup of its target's name, through the real resolver path of the address guard (the service's own
// resolver replaced by one that counts, as tests do). One slot, no queue: while a page holds the slot, a screenshot
// of another host gets 503 EBUSY at once and its name is never looked up; a metadata request of the same host, which
// does not need the browser, is served.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { build, qs, type Built } from '../helpers/build.ts'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'

let fx: FixtureServer
let app: Built
let base: string
const lookups = new Map<string, number>()
let releaseHold: () => void = () => {}
const held = new Promise<void>(resolve => { releaseHold = resolve })

beforeAll(async () => {
  fx = await startFixtureServer()
  // A page that does not answer until the test lets it: its render holds the one slot.
  fx.route('/hold', async (_req, res) => {
    await held
    res.writeHead(200, { 'content-type': 'text/html' })
    res.end('<!doctype html><title>Held</title><h1>Held</h1>')
  })
  app = await build({
    ALLOW_PRIVATE_HOSTS: `${fx.host},named.test:${fx.port}`,
    BROWSER_CONCURRENCY: '1',
    BROWSER_QUEUE_LIMIT: '0',
    FREE_DAILY_LIMIT: '0',
    LOG_LEVEL: 'warn'
  }, {
    resolve: async (hostname) => {
      lookups.set(hostname, (lookups.get(hostname) ?? 0) + 1)
      if (hostname === 'named.test') return [{ address: '127.0.0.1', family: 4 }]
      throw Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' })
    }
  })
  base = await app.free.listen({ port: 0, host: '127.0.0.1' })
}, 60_000)

afterAll(async () => {
  releaseHold()
  await app?.close()
  await fx?.close()
})

async function get (params: Record<string, string | boolean>): Promise<{ status: number, code?: string, retryAfter: string | null }> {
  const res = await fetch(`${base}/?${qs(params)}`, { signal: AbortSignal.timeout(60_000) })
  const body = await res.json() as { code?: string }
  return { status: res.status, code: body.code, retryAfter: res.headers.get('retry-after') }
}

describe('the early verdict of admission', () => {
  it('refuses a screenshot the browser queue cannot take before its target is looked up, and serves one it can', async () => {
    // The browser is up (a first render), then a page holds the one slot.
    expect((await get({ url: `${fx.origin}/article/?first`, screenshot: true })).status).toBe(200)
    const holding = get({ url: `${fx.origin}/hold`, screenshot: true })
    for (let i = 0; i < 600 && fx.hitsOf('/hold') === 0; i++) await new Promise(resolve => setTimeout(resolve, 50))
    expect(fx.hitsOf('/hold')).toBe(1)

    const named = `http://named.test:${fx.port}/article/`
    const refused = await get({ url: `${named}?shot`, screenshot: true })
    expect(refused).toMatchObject({ status: 503, code: 'EBUSY' })
    expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1)
    // Refused before the guard resolved the target: no lookup of its name at all.
    expect(lookups.get('named.test') ?? 0).toBe(0)
    expect(app.ctx.browser.stats().refused.full).toBe(1)

    // Metadata needs no browser (prerender=auto serves it from the plain GET): not refused while the slot is held.
    const meta = await get({ url: `${named}?meta` })
    expect(meta.status).toBe(200)
    expect(lookups.get('named.test')).toBeGreaterThanOrEqual(1)

    releaseHold()
    expect((await holding).status).toBe(200)
    // With the slot free, the same host renders: the refusal above was the queue's, not the name's.
    expect((await get({ url: `${named}?later`, screenshot: true })).status).toBe(200)
  }, 120_000)
})
