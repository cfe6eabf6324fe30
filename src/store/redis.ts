// Redis store through ioredis: one node, a master behind Redis Sentinel, or a Redis Cluster. Counters and locks
// are single atomic commands or Lua scripts on one key each (or on two keys of one slot: an entry and its lock), so several service
// instances share quotas and locks without read-then-write races, and every command runs on a Cluster as on one node.
import { randomUUID } from 'node:crypto'
import type { Cluster, Redis } from 'ioredis'
import { connectRedis } from './redis-connect.ts'
import type { Logger } from 'pino'
import type { RedisConnection } from '../config.ts'
import { batchHits } from './hit-batches.ts'
import type { ReadOrLock, Store, WindowHit } from './types.ts'
import { StoreUnavailableError } from './unavailable.ts'

// KEYS[1] counter; ARGV[1] limit, ARGV[2] window ms, ARGV[3] hits asked (n >= 1). Counts as n calls of one hit
// each would, in one step: the window starts at the first hit (PEXPIRE on the hit that creates the key), and hits
// past the limit are refused and not counted. Returns {hits allowed, count after them, pttl}.
const HIT_WINDOW = `
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
local take = math.min(tonumber(ARGV[3]), tonumber(ARGV[1]) - count)
if take > 0 then
  count = redis.call('INCRBY', KEYS[1], take)
  if count == take then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
else
  take = 0
end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  ttl = tonumber(ARGV[2])
end
return {take, count, ttl}
`

// KEYS[1] value, KEYS[2] lock (one slot: they share a hash tag); ARGV[1] token, ARGV[2] ttl ms. Returns {1, value}
// when there is a value (and takes no lock); else SET NX PX of the lock: {2} when taken, {0} when another holds it.
const READ_OR_LOCK = `
local value = redis.call('GET', KEYS[1])
if value then return {1, value} end
if redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2], 'NX') then return {2} end
return {0}
`

// KEYS[1] value, KEYS[2] lock (one slot); ARGV[1] value, ARGV[2] ttl ms, ARGV[3] token. Stores the value, then deletes
// the lock if the token still owns it: no one sees the lock gone before the value is there.
const SET_AND_RELEASE = `
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
if redis.call('GET', KEYS[2]) == ARGV[3] then redis.call('DEL', KEYS[2]) end
return 1
`

// Deletes the lock only if the caller's token still owns it.
const RELEASE_LOCK = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`

// Extends the lock's lease only if the caller's token still owns it.
const RENEW_LOCK = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`

// KEYS[1] day counter, KEYS[2] month counter (one slot: the tenant's hash tag); ARGV[1] daily limit, ARGV[2] monthly
// limit (0: none), ARGV[3] day ttl ms, ARGV[4] month ttl ms, ARGV[5] the requests counted. Both counted together, or neither when one is at its
// limit: {0 allowed | 1 refused by daily | 2 refused by monthly, day count, month count}.
const COUNT_USAGE = `
local day = tonumber(redis.call('GET', KEYS[1]) or '0')
local month = tonumber(redis.call('GET', KEYS[2]) or '0')
local daily = tonumber(ARGV[1])
local monthly = tonumber(ARGV[2])
if daily > 0 and day >= daily then return {1, day, month} end
if monthly > 0 and month >= monthly then return {2, day, month} end
local n = tonumber(ARGV[5])
day = redis.call('INCRBY', KEYS[1], n)
month = redis.call('INCRBY', KEYS[2], n)
if day == n then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
if month == n then redis.call('PEXPIRE', KEYS[2], ARGV[4]) end
return {0, day, month}
`

// KEYS[1] a sorted set of leases (token -> expiry, ms of Redis's own clock, so instances' clocks do not matter);
// ARGV[1] token, ARGV[2] limit, ARGV[3] lease ms. Lapsed leases go first; then a slot is taken when one is free.
const TAKE_SLOT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
`

// KEYS[1] leases; ARGV[1] token, ARGV[2] lease ms: extends a lease that has not lapsed.
const RENEW_SLOT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local expiry = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not expiry or tonumber(expiry) <= now then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1
`

// KEYS[1] leases: the ones that have not lapsed.
const SLOTS_HELD = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')
`

type RedisWithScripts = (Redis | Cluster) & {
  hitWindow (key: string, limit: number, windowMs: number, hits: number): Promise<[number, number, number]>
  readOrLock (key: string, lockKey: string, token: string, ttlMs: number): Promise<[1, string] | [2] | [0]>
  setAndRelease (key: string, lockKey: string, value: string, ttlMs: number, token: string): Promise<number>
  releaseLock (key: string, token: string): Promise<number>
  renewLock (key: string, token: string, ttlMs: number): Promise<number>
  countUsage (dayKey: string, monthKey: string, daily: number, monthly: number, dayTtlMs: number, monthTtlMs: number, count: number): Promise<[number, number, number]>
  takeSlot (key: string, token: string, limit: number, leaseMs: number): Promise<number>
  renewSlot (key: string, token: string, leaseMs: number): Promise<number>
  slotsHeld (key: string): Promise<number>
}

export function createRedisStore (options: { connection: RedisConnection, prefix?: string }, deps: { log: Logger }): Store {
  const prefix = options.prefix ?? 'pagecast:'
  // Every script and command names one key, or two that share a hash tag (an entry and its lock), so each runs on the node that
  // owns its slot in a Cluster.
  const redis = connectRedis(options.connection, { keyPrefix: prefix, maxRetriesPerRequest: 1 }) as RedisWithScripts
  redis.defineCommand('readOrLock', { numberOfKeys: 2, lua: READ_OR_LOCK })
  redis.defineCommand('setAndRelease', { numberOfKeys: 2, lua: SET_AND_RELEASE })
  redis.defineCommand('hitWindow', { numberOfKeys: 1, lua: HIT_WINDOW })
  redis.defineCommand('releaseLock', { numberOfKeys: 1, lua: RELEASE_LOCK })
  redis.defineCommand('renewLock', { numberOfKeys: 1, lua: RENEW_LOCK })
  redis.defineCommand('countUsage', { numberOfKeys: 2, lua: COUNT_USAGE })
  redis.defineCommand('takeSlot', { numberOfKeys: 1, lua: TAKE_SLOT })
  redis.defineCommand('renewSlot', { numberOfKeys: 1, lua: RENEW_SLOT })
  redis.defineCommand('slotsHeld', { numberOfKeys: 1, lua: SLOTS_HELD })
  let lastError = ''
  redis.on('error', (err: Error) => {
    // ioredis emits the same connection error on every retry: log each distinct one once.
    if (err.message !== lastError) deps.log.warn({ err: { message: err.message } }, 'redis error')
    lastError = err.message
  })
  // Once a connection is lost (or the first one failed), commands fail at once until Redis is back,
  // instead of each waiting out a reconnect attempt: callers degrade (cache miss, quota mode) in
  // milliseconds. Before the first connection, commands queue as usual.
  // The calls refused during an outage are counted, and the count logged once Redis is back (store/unavailable.ts).
  let down = false
  let outage: { since: number, refused: number } | undefined
  redis.on('close', () => {
    down = true
    outage ??= { since: Date.now(), refused: 0 }
  })
  redis.on('ready', () => {
    if (outage !== undefined && outage.refused > 0) {
      deps.log.info({ awayMs: Date.now() - outage.since, refusedCalls: outage.refused }, 'redis is back')
    }
    outage = undefined
    lastError = ''
    down = false
  })
  const unavailable = (): Error => {
    outage ??= { since: Date.now(), refused: 0 }
    outage.refused += 1
    return new StoreUnavailableError(lastError, outage.refused === 1)
  }
  // A batch that waited behind a call also fails at once while Redis is away (not after ioredis's retry).
  const countHits = batchHits((key, limit, windowMs, hits) => down ? Promise.reject(unavailable()) : redis.hitWindow(key, limit, windowMs, hits))
  function ensureUp (): void {
    if (down) throw unavailable()
  }

  return {
    kind: 'redis',
    async get (key) {
      ensureUp()
      return await redis.get(key)
    },
    async set (key, value, ttlMs) {
      ensureUp()
      await redis.set(key, value, 'PX', Math.max(1, Math.round(ttlMs)))
    },
    async del (key) {
      ensureUp()
      await redis.del(key)
    },
    // Not async: the quota's call on every free request takes no extra turns of the promise machinery.
    hitWindow (key, limit, windowMs): Promise<WindowHit> {
      if (down) return Promise.reject(unavailable())
      return countHits(key, limit, windowMs)
    },
    async acquireLock (key, ttlMs) {
      ensureUp()
      const token = randomUUID()
      const ok = await redis.set(key, token, 'PX', Math.max(1, Math.round(ttlMs)), 'NX')
      return ok === 'OK' ? token : null
    },
    async readOrLock (key, lockKey, ttlMs): Promise<ReadOrLock> {
      ensureUp()
      const token = randomUUID()
      const reply = await redis.readOrLock(key, lockKey, token, Math.max(1, Math.round(ttlMs)))
      if (reply[0] === 1) return { value: reply[1] }
      return { value: null, token: reply[0] === 2 ? token : null }
    },
    async setAndRelease (key, value, ttlMs, lockKey, token) {
      ensureUp()
      await redis.setAndRelease(key, lockKey, value, Math.max(1, Math.round(ttlMs)), token)
    },
    async releaseLock (key, token) {
      ensureUp()
      await redis.releaseLock(key, token)
    },
    async renewLock (key, token, ttlMs) {
      ensureUp()
      return await redis.renewLock(key, token, Math.max(1, Math.round(ttlMs))) === 1
    },
    async countUsage ({ dayKey, monthKey, daily, monthly, dayTtlMs, monthTtlMs, count = 1 }) {
      ensureUp()
      const [refused, day, month] = await redis.countUsage(dayKey, monthKey, daily, monthly, Math.round(dayTtlMs), Math.round(monthTtlMs), count)
      return refused === 0 ? { day, month } : { refused: refused === 1 ? 'daily' : 'monthly', day, month }
    },
    async readCounts (keys) {
      ensureUp()
      if (keys.length === 0) return []
      return (await redis.mget(...keys)).map(value => value === null ? 0 : Number(value))
    },
    async takeSlot (key, token, limit, leaseMs) {
      ensureUp()
      return await redis.takeSlot(key, token, limit, Math.max(1, Math.round(leaseMs))) === 1
    },
    async renewSlot (key, token, leaseMs) {
      ensureUp()
      return await redis.renewSlot(key, token, Math.max(1, Math.round(leaseMs))) === 1
    },
    async releaseSlot (key, token) {
      ensureUp()
      await redis.zrem(key, token)
    },
    async slotsHeld (key) {
      ensureUp()
      return await redis.slotsHeld(key)
    },
    async health () {
      try {
        return (await redis.ping()) === 'PONG'
      } catch {
        return false
      }
    },
    async close () {
      try {
        await redis.quit()
      } catch {
        redis.disconnect()
      }
    }
  }
}
