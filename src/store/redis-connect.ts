// One way to open a Redis client for each kind of deployment REDIS_* configures (docs/operations.md#redis): one node by
// URL, a Sentinel-watched master (following failovers), or a Cluster. The store and the job system both open theirs
// here; they differ only in the options below.
import { Cluster, Redis } from 'ioredis'
import type { RedisConnection } from '../config.ts'

export interface RedisClientOptions {
  /** Prepended to every key by the client (the store's `pagecast:`); BullMQ needs none. */
  keyPrefix?: string
  /** Tries of a command while the connection is away: 1 fails fast (the store), null waits (BullMQ's workers). */
  maxRetriesPerRequest: number | null
}

/** Reconnects forever, at most 2 s apart. */
export const retryStrategy = (times: number): number => Math.min(times * 200, 2000)

export function connectRedis (connection: RedisConnection, options: RedisClientOptions): Redis | Cluster {
  const { maxRetriesPerRequest } = options
  const prefix = options.keyPrefix === undefined ? {} : { keyPrefix: options.keyPrefix }
  const common = { maxRetriesPerRequest, enableOfflineQueue: true, retryStrategy, lazyConnect: false, ...prefix }
  if (connection.kind === 'node') return new Redis(connection.url, common)
  const { username, password, tls } = connection
  const auth = { ...(username === undefined ? {} : { username }), ...(password === undefined ? {} : { password }), ...(tls ? { tls: {} } : {}) }
  if (connection.kind === 'sentinel') {
    return new Redis({
      sentinels: connection.sentinels,
      name: connection.name,
      ...(connection.sentinelPassword === undefined ? {} : { sentinelPassword: connection.sentinelPassword }),
      ...(tls ? { enableTLSForSentinelMode: true } : {}),
      // Subscribes to the sentinels' +switch-master, so a failover is followed at once rather than on the next error.
      failoverDetector: true,
      ...auth,
      ...common
    })
  }
  return new Cluster(connection.nodes, {
    ...prefix,
    enableOfflineQueue: true,
    clusterRetryStrategy: retryStrategy,
    redisOptions: { ...auth, maxRetriesPerRequest }
  })
}
