// Webhook retries on Redis (docs/jobs.md#webhooks): each delivery is a BullMQ job, its retries delayed jobs, so a
// retry scheduled by an instance that then stops is made by another instance on the same Redis. Two job engines
// (createJobs, the real BullMQ queues) on a redis-server of this file's own, a receiver on loopback that is down for
// the first attempts; every accepted delivery is checked against both signatures.
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.ts'
import { createJobs, type Jobs, type PageHandler } from '../../src/jobs/index.ts'
import { createAddressGuard } from '../../src/net/guard.ts'
import { createStore, type Store } from '../../src/store/index.ts'
import { createStorage, type Storage } from '../../src/storage/index.ts'
import { startRedisNode } from '../helpers/redis-topology.ts'
import { startWebhookReceiver, verifiesBoth, type WebhookReceiver } from '../helpers/webhook-receiver.ts'

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
const log = pino({ level: 'silent' })
const owner = { listener: 'pro' as const, tenant: 'acme' }

/** A page handler that scrapes nothing: the webhooks are what is under test. */
const handler: PageHandler = async (_job, task) => ({ document: { markdown: 'page', metadata: { sourceURL: task.url, url: task.url, statusCode: 200 } } })

let redis: Awaited<ReturnType<typeof startRedisNode>>
let dir: string
const opened: Instance[] = []

beforeAll(async () => {
  redis = await startRedisNode()
  dir = mkdtempSync(path.join(os.tmpdir(), 'pagecast-webhooks-'))
}, 60_000)

afterAll(async () => {
  for (const { jobs, storage, store } of opened) { await jobs.close(); await storage.close(); await store.close() }
  await redis?.close()
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
})

interface Instance { jobs: Jobs, storage: Storage, store: Store }

/** One instance: its own engine and storage handle, on the shared Redis and folder; working unless told not to. */
function instance (hook: WebhookReceiver, retries: string): Instance {
  const config = loadConfig({ REDIS_URL: redis.url, STORAGE_DIR: dir, STORAGE_SCOPE: 'instance', JOB_CONCURRENCY: '2', WEBHOOK_RETRY_DELAYS: retries })
  const storage = createStorage(config, { log })
  const store = createStore({ redis: config.redis }, { log })
  const jobs = createJobs({ config, log, guard: createAddressGuard({ allowPrivateHosts: [new URL(hook.url).host] }), storage, store })
  jobs.work(handler, () => SECRET)
  const made = { jobs, storage, store }
  opened.push(made)
  return made
}

async function close (made: Instance): Promise<void> {
  opened.splice(opened.indexOf(made), 1)
  await made.jobs.close()
  await made.storage.close()
  await made.store.close()
}

async function startBatch (jobs: Jobs, hook: WebhookReceiver, tag: string): Promise<string> {
  const url = `http://127.0.0.1:9/${tag}`
  const job = await jobs.start({ kind: 'batch_scrape', owner, first: [{ key: url, url }], limit: 1, request: {}, webhook: { url: hook.url, headers: {}, metadata: { tag }, events: ['started'] } })
  return job.id
}

describe('webhook retries on Redis', () => {
  it('a receiver down for the first two attempts gets the delivery on the third, signed both ways, one webhook-id', async () => {
    const hook = await startWebhookReceiver(2)
    const a = instance(hook, '200ms,300ms,400ms')
    try {
      const id = await startBatch(a.jobs, hook, 'first')
      await hook.until(got => got.length > 0)
      expect(hook.attempts()).toBe(3)
      expect(hook.got).toHaveLength(1)
      const delivered = hook.got[0]
      expect(JSON.parse(delivered?.body ?? '{}')).toMatchObject({ type: 'batch_scrape.started', id, metadata: { tag: 'first' } })
      expect(delivered !== undefined && verifiesBoth(delivered, SECRET)).toBe(true)
      // Every attempt carries the same webhook-id (a receiver deduplicates on it), each signed afresh.
      expect(new Set(hook.tries.map(t => t.headers['webhook-id'])).size).toBe(1)
      for (const attempt of hook.tries) expect(verifiesBoth(attempt, SECRET)).toBe(true)
    } finally {
      await close(a)
      await hook.close()
    }
  }, 60_000)

  it('a retry scheduled by an instance that then stops is delivered by another instance on the same Redis', async () => {
    const hook = await startWebhookReceiver(Number.POSITIVE_INFINITY)
    // A's first attempt fails and schedules a retry 1.5 s later; A stops before it is due.
    const a = instance(hook, '1500ms,1500ms,1500ms')
    const id = await startBatch(a.jobs, hook, 'handoff')
    const deadline = Date.now() + 20_000
    while (hook.attempts() === 0 && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 20))
    expect(hook.attempts()).toBeGreaterThanOrEqual(1)
    await close(a)
    const triedByA = hook.attempts()
    // The pending retry is in Redis (the scan finds its body), without the secret: each attempt reads it from the owner.
    expect(await redisHolds('batch_scrape.started')).toBe(true)
    expect(await redisHolds(SECRET)).toBe(false)
    hook.up()
    const b = instance(hook, '1500ms,1500ms,1500ms')
    try {
      await hook.until(got => got.length > 0, 20_000)
      expect(hook.got).toHaveLength(1)
      expect(hook.attempts()).toBe(triedByA + 1)
      const delivered = hook.got[0]
      expect(JSON.parse(delivered?.body ?? '{}')).toMatchObject({ type: 'batch_scrape.started', id })
      expect(delivered !== undefined && verifiesBoth(delivered, SECRET)).toBe(true)
      expect(delivered?.headers['webhook-id']).toBe(hook.tries[0]?.headers['webhook-id'])
    } finally {
      await close(b)
      await hook.close()
    }
  }, 60_000)
})

/** Whether any key of this file's Redis holds `text` (its own redis-server: every key is this file's). */
async function redisHolds (text: string): Promise<boolean> {
  const { Redis } = await import('ioredis')
  const client = new Redis(redis.url)
  try {
    for (const key of await client.keys('*')) {
      const type = await client.type(key)
      const values = type === 'string' ? [await client.get(key)] : type === 'hash' ? Object.values(await client.hgetall(key)) : type === 'list' ? await client.lrange(key, 0, -1) : type === 'set' ? await client.smembers(key) : []
      if (values.some(v => v?.includes(text) === true)) return true
    }
    return false
  } finally {
    client.disconnect()
  }
}
