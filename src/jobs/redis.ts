// The Redis job store (REDIS_URL set), shared by every instance. Each change that must hold across instances is one
// Lua script: admitting URLs (the seen set, so each URL is scraped once per job, and `limit`), recording a page (once,
// even when a crashed instance's page is worked again) and the job's end. (The per-host limit is the Store's leased
// slots: store/slot-leases.ts.)
// Keys (all under the `{pagecast}` hash tag, one Cluster slot): job:<id> (a hash: record, status, counters),
// job:<id>:seen, :done, :robots-seen (sets), :finals (a hash: redirect target key -> page), :docs, :errors, :robots, :kids:<parent> (lists), ongoing:<owner> (a sorted set).
import { randomUUID } from 'node:crypto'
import type { Cluster, Redis } from 'ioredis'
import { sha256 } from '../util/hash.ts'
import { JOBS_PREFIX } from './connection.ts'
import type { FinishResult, JobErrorEntry, JobRecord, JobStore } from './types.ts'
import { ownerKeyOf } from './types.ts'

// KEYS[1] job hash, KEYS[2] seen set, KEYS[3] the parent's children, KEYS[4] the claimed redirect targets (key ->
// page); ARGV[1] limit, ARGV[2..] key, URL pairs. Returns the URLs admitted (`total` counts them against the limit).
const ADMIT = `
if redis.call('HGET', KEYS[1], 'status') ~= 'scraping' then return {} end
local room = tonumber(ARGV[1]) - tonumber(redis.call('HGET', KEYS[1], 'total'))
local out = {}
for i = 2, #ARGV, 2 do
  if #out >= room then break end
  if redis.call('HEXISTS', KEYS[4], ARGV[i]) == 0 and redis.call('SADD', KEYS[2], ARGV[i]) == 1 then out[#out + 1] = ARGV[i + 1] end
end
local exp = redis.call('HGET', KEYS[1], 'expiresAt')
if #out > 0 then
  redis.call('HINCRBY', KEYS[1], 'pending', #out)
  redis.call('HINCRBY', KEYS[1], 'total', #out)
  redis.call('RPUSH', KEYS[3], unpack(out))
  redis.call('PEXPIREAT', KEYS[3], exp)
end
redis.call('PEXPIREAT', KEYS[2], exp)
return out
`

// KEYS[1] job hash, [2] seen set, [3] claimed redirect targets; ARGV[1] the page's URL, [2] its final URL's key.
// 1 when the key is this page's (new, or claimed by it before a crash), 0 when another page of the job has it.
const CLAIM_FINAL = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if redis.call('SISMEMBER', KEYS[2], ARGV[2]) == 1 then return 0 end
local owner = redis.call('HGET', KEYS[3], ARGV[2])
if owner then return owner == ARGV[1] and 1 or 0 end
redis.call('HSET', KEYS[3], ARGV[2], ARGV[1])
redis.call('PEXPIREAT', KEYS[3], redis.call('HGET', KEYS[1], 'expiresAt'))
return 1
`

// KEYS[1] robots-blocked list, KEYS[2] its set, KEYS[3] job hash; ARGV the URLs. Each URL listed once.
const ROBOTS = `
local exp = redis.call('HGET', KEYS[3], 'expiresAt')
if not exp then return 0 end
for i = 1, #ARGV do
  if redis.call('SADD', KEYS[2], ARGV[i]) == 1 then redis.call('RPUSH', KEYS[1], ARGV[i]) end
end
redis.call('PEXPIREAT', KEYS[1], exp)
redis.call('PEXPIREAT', KEYS[2], exp)
return 1
`

// KEYS[1] job hash, [2] done set, [3] docs list, [4] errors list; ARGV[1] URL, [2] 'document', 'error' or 'dropped'
// (out of `total`), [3] the entry. Returns {recorded, finished}; the last page ends the job: completed, or failed when
// no page gave a document.
const FINISH = `
if redis.call('EXISTS', KEYS[1]) == 0 then return {0, 0} end
if redis.call('SADD', KEYS[2], ARGV[1]) == 0 then return {0, 0} end
local exp = redis.call('HGET', KEYS[1], 'expiresAt')
redis.call('PEXPIREAT', KEYS[2], exp)
local pending = redis.call('HINCRBY', KEYS[1], 'pending', -1)
if redis.call('HGET', KEYS[1], 'status') ~= 'scraping' then return {0, 0} end
if ARGV[2] == 'dropped' then
  redis.call('HINCRBY', KEYS[1], 'total', -1)
else
  local list = ARGV[2] == 'document' and KEYS[3] or KEYS[4]
  redis.call('RPUSH', list, ARGV[3])
  redis.call('PEXPIREAT', list, exp)
  redis.call('HINCRBY', KEYS[1], ARGV[2] == 'document' and 'completed' or 'failed', 1)
end
if pending <= 0 then
  local status = tonumber(redis.call('HGET', KEYS[1], 'completed')) > 0 and 'completed' or 'failed'
  redis.call('HSET', KEYS[1], 'status', status)
  return {1, 1}
end
return {1, 0}
`

// KEYS[1] job hash; ARGV[1] status, ARGV[2] error ('' for none). Returns 1 when the job was scraping.
const END = `
if redis.call('HGET', KEYS[1], 'status') ~= 'scraping' then return 0 end
redis.call('HSET', KEYS[1], 'status', ARGV[1])
if ARGV[2] ~= '' then redis.call('HSET', KEYS[1], 'error', ARGV[2]) end
return 1
`

type JobsRedis = (Redis | Cluster) & {
  jobAdmit (hash: string, seen: string, children: string, finals: string, limit: number, ...pairs: string[]): Promise<string[]>
  jobClaimFinal (hash: string, seen: string, finals: string, url: string, key: string): Promise<number>
  jobRobots (list: string, set: string, hash: string, ...urls: string[]): Promise<number>
  jobFinish (hash: string, done: string, docs: string, errors: string, url: string, kind: string, entry: string): Promise<[number, number]>
  jobEnd (hash: string, status: string, error: string): Promise<number>
}

function defineScripts (redis: Redis | Cluster): JobsRedis {
  redis.defineCommand('jobAdmit', { numberOfKeys: 4, lua: ADMIT })
  redis.defineCommand('jobClaimFinal', { numberOfKeys: 3, lua: CLAIM_FINAL })
  redis.defineCommand('jobRobots', { numberOfKeys: 3, lua: ROBOTS })
  redis.defineCommand('jobFinish', { numberOfKeys: 4, lua: FINISH })
  redis.defineCommand('jobEnd', { numberOfKeys: 1, lua: END })
  return redis as JobsRedis
}

const key = (id: string, part = ''): string => `${JOBS_PREFIX}:job:${id}${part === '' ? '' : `:${part}`}`
const ongoingKey = (owner: string): string => `${JOBS_PREFIX}:ongoing:${owner}`

/** Parts of the record that never change after create(); the rest are fields of their own, changed by the scripts. */
type StaticRecord = Omit<JobRecord, 'status' | 'total' | 'completed' | 'failed' | 'error'>

export function createRedisJobStore (client: Redis | Cluster): JobStore {
  const redis = defineScripts(client)

  function recordOf (fields: Record<string, string>): JobRecord | undefined {
    if (fields.record === undefined) return undefined
    const base = JSON.parse(fields.record) as StaticRecord
    return {
      ...base,
      status: fields.status as JobRecord['status'],
      total: Number(fields.total ?? 0),
      completed: Number(fields.completed ?? 0),
      failed: Number(fields.failed ?? 0),
      ...(fields.error === undefined ? {} : { error: fields.error })
    }
  }

  async function get (id: string): Promise<JobRecord | undefined> {
    return recordOf(await redis.hgetall(key(id)))
  }

  return {
    async create (record, first) {
      const { status, total: _t, completed: _c, failed: _f, error: _e, ...base } = record
      const seen = [...new Set(first.map(c => c.key))]
      const multi = redis.multi()
      multi.hset(key(record.id), { record: JSON.stringify(base), status, total: seen.length, completed: 0, failed: 0, pending: seen.length, expiresAt: record.expiresAt })
      multi.pexpireat(key(record.id), record.expiresAt)
      if (seen.length > 0) multi.sadd(key(record.id, 'seen'), ...seen).pexpireat(key(record.id, 'seen'), record.expiresAt)
      if (record.kind === 'crawl') {
        const owner = ongoingKey(ownerKeyOf(record.owner))
        multi.zadd(owner, record.expiresAt, record.id).pexpireat(owner, record.expiresAt)
      }
      await multi.exec()
    },
    get,
    async admit (id, parent, candidates, limit) {
      if (candidates.length === 0) return []
      return await redis.jobAdmit(key(id), key(id, 'seen'), key(id, `kids:${sha256(parent)}`), key(id, 'finals'), limit, ...candidates.flatMap(c => [c.key, c.url]))
    },
    async claimFinal (id, url, finalKey) {
      return await redis.jobClaimFinal(key(id), key(id, 'seen'), key(id, 'finals'), url, finalKey) === 1
    },
    async children (id, parent) {
      return await redis.lrange(key(id, `kids:${sha256(parent)}`), 0, -1)
    },
    async isDone (id, url) {
      return await redis.sismember(key(id, 'done'), url) === 1
    },
    async finish (id, url, outcome): Promise<FinishResult> {
      const entry = outcome.kind === 'document'
        ? outcome.json
        : outcome.kind === 'dropped' ? '' : JSON.stringify({ id: randomUUID(), url, error: outcome.error, ...(outcome.code === undefined ? {} : { code: outcome.code }) })
      const [recorded, finished] = await redis.jobFinish(key(id), key(id, 'done'), key(id, 'docs'), key(id, 'errors'), url, outcome.kind, entry)
      return { recorded: recorded === 1, finished: finished === 1 }
    },
    async documents (id, skip, count) {
      if (count <= 0) return []
      return await redis.lrange(key(id, 'docs'), skip, skip + count - 1)
    },
    async errors (id) {
      const [errors, robots] = await Promise.all([redis.lrange(key(id, 'errors'), 0, -1), redis.lrange(key(id, 'robots'), 0, -1)])
      return { errors: errors.map(e => JSON.parse(e) as JobErrorEntry), robotsBlocked: robots }
    },
    async robotsBlocked (id, urls) {
      if (urls.length === 0) return
      await redis.jobRobots(key(id, 'robots'), key(id, 'robots-seen'), key(id), ...urls)
    },
    async end (id, status, error) {
      return await redis.jobEnd(key(id), status, error ?? '') === 1
    },
    async ongoing (ownerKey) {
      const ids = await redis.zrangebyscore(ongoingKey(ownerKey), Date.now(), '+inf')
      const records = await Promise.all(ids.map(get))
      const gone = ids.filter((_, i) => records[i]?.status !== 'scraping')
      if (gone.length > 0) await redis.zrem(ongoingKey(ownerKey), ...gone)
      return records.filter((r): r is JobRecord => r?.status === 'scraping')
    },
    async close () {}
  }
}
