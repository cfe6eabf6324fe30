// The only reader of process.env. Parses and validates every variable of docs/api.md §12.1 once at start;
// a bad value throws a ConfigError naming the variable, and server.ts exits with that message. A .env file, when
// there is one, is loaded into the environment first (docs/operations.md#environment).
import { existsSync } from 'node:fs'
import { isIP } from 'node:net'
import os from 'node:os'
import { ConfigError, bool, dnsServers, duration, hostPorts, httpUrl, integer, list, port, str, wsUrl, type Env } from './config-readers.ts'

export { ConfigError }

/** The two listeners and what they allow: the free plan (quota, no key) and the pro plan (x-api-key). */
export type Plan = 'free' | 'pro'

/** MAX_HTML_BYTES when unset: the largest HTML body read and parsed, bytes. */
export const DEFAULT_MAX_HTML_BYTES = 10 * 1024 * 1024
/** MAX_RESPONSE_BYTES when unset: the largest answer (its JSON), and the most any value the page returns may be, bytes. */
export const DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024
/** CACHE_MAX_ENTRY_BYTES when unset: answers larger than this are served but never cached, bytes. */
export const DEFAULT_CACHE_MAX_ENTRY_BYTES = 4 * 1024 * 1024
/** CACHE_MEMORY_BYTES when unset: what the in-process store's cache entries may hold in all, bytes. */
export const DEFAULT_CACHE_MEMORY_BYTES = 256 * 1024 * 1024
/** Bytes the media probe's ranged GET reads of a file (MAX_PROBE_BYTES): enough for any image's dimensions. */
export const DEFAULT_PROBE_BYTES = 64 * 1024
/** MAX_REDIRECTS when unset: the redirects a load may follow before EMAXREDIRECTS. */
export const DEFAULT_MAX_REDIRECTS = 10

export interface RedisNode {
  host: string
  port: number
}

/** One Redis node by URL, a master found through Sentinel, or a Cluster (docs/operations.md#redis). */
export type RedisConnection =
  | { kind: 'node', url: string }
  | { kind: 'sentinel', sentinels: RedisNode[], name: string, username?: string, password?: string, sentinelPassword?: string, tls: boolean }
  | { kind: 'cluster', nodes: RedisNode[], username?: string, password?: string, tls: boolean }

export interface Config {
  host: string
  freePort: number
  proPort: number
  region: string
  logLevel: string
  /** The store's Redis (REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES); undefined keeps the store in memory. */
  redis: RedisConnection | undefined
  s3: {
    bucket: string
    endpoint: string | undefined
    region: string
    accessKeyId: string | undefined
    secretAccessKey: string | undefined
    forcePathStyle: boolean
    cdnUrl: string
  } | undefined
  storageDir: string
  /**
   * STORAGE_SCOPE: who else uses STORAGE_DIR. `instance`: this process alone; `shared`: a folder every instance
   * mounts (writes there are atomic and locked across processes). Unused with S3 (docs/operations.md#storage-rule).
   */
  storageScope: 'instance' | 'shared'
  publicUrl: string
  apiKeys: readonly string[]
  /** KEYS_FILE: the tenants' file (JSON, or YAML by its name), read again on change (docs/tenants.md). */
  keysFile: string | undefined
  freeDailyLimit: number
  /** What the free quota does when its store (Redis) is unreachable: serve uncounted, or refuse (503 EBUSY). */
  quotaFailMode: 'open' | 'closed'
  maxTimeout: number
  chromiumPath: string | undefined
  browserWsEndpoint: string | undefined
  /** Where each browser context's egress proxy listens (EGRESS_HOST), and the host the browser is told to use. */
  egress: { listenHost: string, advertisedHost: string }
  browserConcurrency: number
  browserQueueLimit: number
  /** Largest HTML body read by the plain fetch (a larger one is refused, EINVALURL) and parsed for metadata, bytes. */
  maxHtmlBytes: number
  /** Worker threads that read loaded pages (READER_THREADS; src/reader/). */
  readerThreads: number
  /**
   * Largest answer, its JSON in bytes, and the most each value the page returns (`evaluate`) may be: checked in the
   * page before the value is serialized, and on the result before it is (400 ETOOLARGE).
   */
  maxResponseBytes: number
  /** Answers over this many bytes are served but cached nowhere (neither in process nor in Redis). */
  cacheMaxEntryBytes: number
  /** Bytes the in-process store's cache entries may hold in all (without Redis); the least recently used go first. */
  cacheMemoryBytes: number
  /** Bytes a media probe's ranged GET reads. */
  maxProbeBytes: number
  /** Redirects the plain fetch, the probes and the browser's navigation follow before EMAXREDIRECTS. */
  maxRedirects: number
  /** The guard's resolver (src/net/resolver.ts): DNS servers (`ip` or `ip:port`; empty: the system's) and a try's timeout. */
  dns: { servers: readonly string[], timeoutMs: number }
  /** Tallest screenshot, in device pixels (full pages are cut there). */
  maxFullPageHeight: number
  /** Jobs a browser runs before it is relaunched. */
  browserMaxJobs: number
  allowPrivateHosts: readonly string[]
  /** false, true, a hop count, or a list of CIDRs/addresses (Fastify's trustProxy forms). */
  trustProxy: boolean | number | string[]
  docsUrl: string
  /** METRICS: whether /metrics is served at all. */
  metrics: boolean
  /** METRICS_PORT: when set, /metrics is served on its own listener there (bound to HOST) and not on the public ones. */
  metricsPort: number | undefined
  /** The whole environment of every child process (Chromium and its helpers): CHILD_ENV_NAMES and prefixes only. */
  childEnv: Readonly<Record<string, string>>
  /** §17 jobs (docs/jobs.md): JOB_TTL, CRAWL_HOST_CONCURRENCY, JOB_CONCURRENCY, JOB_STALL_TIMEOUT, WEBHOOK_SECRET, WEBHOOK_RETRY_DELAYS. */
  jobs: { ttlMs: number, hostConcurrency: number, concurrency: number, stallMs: number, webhookSecret: string | undefined, webhookRetryMs: readonly number[] }
}


/**
 * Loads `path` (a .env file, relative to the working directory) into process.env when the file exists, before
 * loadConfig reads it. A variable already set, even to an empty value, keeps its value: the real environment
 * wins (process.loadEnvFile never overrides). Returns whether a file was read.
 */
export function loadEnvFile (path = '.env'): boolean {
  if (!existsSync(path)) return false
  try {
    process.loadEnvFile(path)
  } catch (err) {
    throw new ConfigError(path, `could not be read (${err instanceof Error ? err.message : String(err)})`)
  }
  return true
}

// ---------------------------------------------------------------- the environment of child processes
//
// Chromium (and any later child process) gets an explicit environment, never the service's own: without one,
// Playwright would hand it every variable, API_KEYS, S3 credentials and REDIS_URL included (docs/security.md).
// This is the one allowlist: what a browser needs to find its programs, its home, its locale, time zone and fonts.

/** Variables passed to child processes as they are, when set. */
export const CHILD_ENV_NAMES: readonly string[] = Object.freeze(['PATH', 'HOME', 'TMPDIR', 'LANG', 'LANGUAGE', 'TZ', 'TZDIR', 'DISPLAY'])
/** Families passed to child processes: locale categories, fontconfig settings, XDG directories. */
export const CHILD_ENV_PREFIXES: readonly string[] = Object.freeze(['LC_', 'FONTCONFIG_', 'XDG_'])
/** PATH of child processes when the service has none (Debian's launcher is a shell script). */
export const DEFAULT_CHILD_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'

/** The allowlisted part of `env`, frozen: the environment every child process starts with. */
export function childEnvironment (env: Env): Readonly<Record<string, string>> {
  const picked: Record<string, string> = {}
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue
    if (CHILD_ENV_NAMES.includes(name) || CHILD_ENV_PREFIXES.some(prefix => name.startsWith(prefix))) picked[name] = value
  }
  if (picked.PATH === undefined || picked.PATH === '') picked.PATH = DEFAULT_CHILD_PATH
  return Object.freeze(picked)
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']

/** JOB_CONCURRENCY: pages this instance works at once; 0 (with Redis only: others work them) works none. */
function jobConcurrency (env: Env, redis: RedisConnection | undefined): number {
  const value = integer(env, 'JOB_CONCURRENCY', 8, 0, 1000)
  if (value === 0 && redis === undefined) throw new ConfigError('JOB_CONCURRENCY', 'may be 0 only with Redis (REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES): without it no instance would work the jobs')
  return value
}

/** WEBHOOK_RETRY_DELAYS: the waits before each retry of a webhook delivery (default 10s, 1m, 5m: 4 tries in 6 min). */
function webhookRetries (env: Env): number[] {
  const raw = list(env, 'WEBHOOK_RETRY_DELAYS')
  return raw.length === 0 ? [10_000, 60_000, 300_000] : raw.map(v => duration({ WEBHOOK_RETRY_DELAYS: v }, 'WEBHOOK_RETRY_DELAYS', 1))
}

function redisNodes (env: Env, name: string): RedisNode[] {
  return hostPorts(env, name).map((entry) => {
    const at = entry.lastIndexOf(':')
    return { host: entry.slice(0, at).replace(/^\[|\]$/g, ''), port: Number(entry.slice(at + 1)) }
  })
}

/** REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES: at most one of them. */
function redisConnection (env: Env): RedisConnection | undefined {
  const url = str(env, 'REDIS_URL')
  const sentinels = redisNodes(env, 'REDIS_SENTINELS')
  const cluster = redisNodes(env, 'REDIS_CLUSTER_NODES')
  const given = [url !== undefined, sentinels.length > 0, cluster.length > 0].filter(Boolean).length
  if (given > 1) throw new ConfigError('REDIS_URL', 'set only one of REDIS_URL, REDIS_SENTINELS and REDIS_CLUSTER_NODES')
  if (url !== undefined) {
    if (!/^rediss?:\/\//.test(url)) throw new ConfigError('REDIS_URL', `must be a redis:// or rediss:// URL (got "${url}")`)
    return { kind: 'node', url }
  }
  const auth = {
    ...(str(env, 'REDIS_USERNAME') === undefined ? {} : { username: str(env, 'REDIS_USERNAME') as string }),
    ...(str(env, 'REDIS_PASSWORD') === undefined ? {} : { password: str(env, 'REDIS_PASSWORD') as string }),
    tls: bool(env, 'REDIS_TLS', false)
  }
  if (sentinels.length > 0) {
    const name = str(env, 'REDIS_SENTINEL_NAME') ?? 'mymaster'
    const sentinelPassword = str(env, 'REDIS_SENTINEL_PASSWORD')
    return { kind: 'sentinel', sentinels, name, ...auth, ...(sentinelPassword === undefined ? {} : { sentinelPassword }) }
  }
  if (cluster.length > 0) return { kind: 'cluster', nodes: cluster, ...auth }
  return undefined
}

const CIDR = /^([0-9.]+|[0-9a-fA-F:]+)(\/\d{1,3})?$/

function trustProxy (env: Env, name: string): Config['trustProxy'] {
  const raw = str(env, name)
  if (raw === undefined || /^false$/i.test(raw)) return false
  if (/^true$/i.test(raw)) return true
  if (/^\d+$/.test(raw)) return Number(raw)
  const entries = list(env, name)
  for (const entry of entries) {
    if (!CIDR.test(entry)) throw new ConfigError(name, `must be true, false, a hop count or comma-separated CIDRs (got "${entry}")`)
  }
  return entries
}

/**
 * The storage rule for several instances (docs/operations.md#storage-rule). Instances that share Redis share cache
 * entries, and a cached screenshot or PDF names a file: every instance must be able to serve it. So with Redis and
 * no S3 the operator must say what STORAGE_DIR is: a folder all instances mount (`shared`) or one instance's own
 * (`instance`, for a single instance that keeps its cache in Redis).
 */
function storageScope (env: Env, redis: RedisConnection | undefined, s3: Config['s3']): Config['storageScope'] {
  const raw = str(env, 'STORAGE_SCOPE')?.toLowerCase()
  if (raw !== undefined && raw !== 'instance' && raw !== 'shared') {
    throw new ConfigError('STORAGE_SCOPE', `must be instance or shared (got "${raw}")`)
  }
  if (raw === undefined && redis !== undefined && s3 === undefined) {
    const store = redis.kind === 'node' ? 'REDIS_URL' : redis.kind === 'sentinel' ? 'REDIS_SENTINELS' : 'REDIS_CLUSTER_NODES'
    throw new ConfigError('STORAGE_SCOPE', `is required when ${store} is set and S3_BUCKET is not: instances sharing ` +
      'Redis share cached file URLs, so set S3_BUCKET (with CDN_URL), or STORAGE_SCOPE=shared when STORAGE_DIR is ' +
      'a folder every instance mounts, or STORAGE_SCOPE=instance when only one instance runs')
  }
  return raw ?? (s3 === undefined ? 'instance' : 'shared')
}

function quotaFailMode (env: Env, name: string): Config['quotaFailMode'] {
  const raw = (str(env, name) ?? 'open').toLowerCase()
  if (raw !== 'open' && raw !== 'closed') throw new ConfigError(name, `must be open or closed (got "${raw}")`)
  return raw
}

export function loadConfig (env: Env = {}): Readonly<Config> {
  const freePort = port(env, 'FREE_PORT', 3000)
  const proPort = port(env, 'PRO_PORT', 3001)
  if (freePort === proPort && freePort !== 0) throw new ConfigError('PRO_PORT', `must differ from FREE_PORT (both are ${freePort})`)

  const metricsPort = str(env, 'METRICS_PORT') === undefined ? undefined : port(env, 'METRICS_PORT', 0)
  if (metricsPort !== undefined && metricsPort !== 0 && (metricsPort === freePort || metricsPort === proPort)) {
    throw new ConfigError('METRICS_PORT', `must differ from FREE_PORT and PRO_PORT (got ${metricsPort})`)
  }

  const logLevel = (str(env, 'LOG_LEVEL') ?? 'info').toLowerCase()
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')} (got "${logLevel}")`)

  const region = str(env, 'REGION') ?? 'local'
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(region)) throw new ConfigError('REGION', `must be 1-64 letters, digits, - or _ (got "${region}")`)

  const redis = redisConnection(env)
  const egressHost = str(env, 'EGRESS_HOST') ?? '127.0.0.1'
  if (!/^[A-Za-z0-9.:_-]+$/.test(egressHost)) throw new ConfigError('EGRESS_HOST', `must be an address or host name to listen on (got "${egressHost}")`)

  const bucket = str(env, 'S3_BUCKET')
  const cdnUrl = httpUrl(env, 'CDN_URL')
  let s3: Config['s3']
  if (bucket !== undefined) {
    if (cdnUrl === undefined) throw new ConfigError('CDN_URL', 'is required when S3_BUCKET is set')
    s3 = {
      bucket,
      endpoint: httpUrl(env, 'S3_ENDPOINT'),
      region: str(env, 'S3_REGION') ?? 'us-east-1',
      accessKeyId: str(env, 'S3_ACCESS_KEY_ID'),
      secretAccessKey: str(env, 'S3_SECRET_ACCESS_KEY'),
      forcePathStyle: bool(env, 'S3_FORCE_PATH_STYLE', false),
      cdnUrl
    }
  }

  const publicUrl = httpUrl(env, 'PUBLIC_URL') ?? `http://localhost:${freePort}`
  const apiKeys = list(env, 'API_KEYS')
  for (const key of apiKeys) {
    if (key.startsWith('sha256:') && !/^sha256:[0-9a-fA-F]{64}$/.test(key)) {
      throw new ConfigError('API_KEYS', 'sha256: entries must hold 64 hex digits')
    }
  }

  const host = str(env, 'HOST') ?? '0.0.0.0'
  // An address, or a host name; a dotted quad that is no IPv4 address is a typo, not a name to look up.
  if (!/^[A-Za-z0-9.:_-]+$/.test(host) || (/^[\d.]+$/.test(host) && isIP(host) === 0)) {
    throw new ConfigError('HOST', `must be an address of this machine to listen on, such as 0.0.0.0 (all) or 127.0.0.1 (got "${host}")`)
  }

  const cpus = Math.max(1, os.availableParallelism())

  return Object.freeze({
    host,
    freePort,
    proPort,
    region,
    logLevel,
    redis: redis === undefined ? undefined : Object.freeze(redis),
    s3: s3 === undefined ? undefined : Object.freeze(s3),
    storageDir: str(env, 'STORAGE_DIR') ?? './storage',
    storageScope: storageScope(env, redis, s3),
    publicUrl,
    apiKeys: Object.freeze(apiKeys),
    keysFile: str(env, 'KEYS_FILE'),
    freeDailyLimit: integer(env, 'FREE_DAILY_LIMIT', 50, 0),
    quotaFailMode: quotaFailMode(env, 'QUOTA_FAIL_MODE'),
    maxTimeout: duration(env, 'MAX_TIMEOUT', 28_000),
    chromiumPath: str(env, 'CHROMIUM_PATH'),
    browserWsEndpoint: wsUrl(env, 'BROWSER_WS_ENDPOINT'),
    egress: Object.freeze({ listenHost: egressHost, advertisedHost: str(env, 'EGRESS_ADVERTISE_HOST') ?? egressHost }),
    browserConcurrency: integer(env, 'BROWSER_CONCURRENCY', cpus, 1, 256),
    browserQueueLimit: integer(env, 'BROWSER_QUEUE_LIMIT', 64, 0, 100_000),
    maxHtmlBytes: integer(env, 'MAX_HTML_BYTES', DEFAULT_MAX_HTML_BYTES, 1024, 1024 * 1024 * 1024),
    readerThreads: integer(env, 'READER_THREADS', Math.max(2, cpus), 1, 64),
    maxResponseBytes: integer(env, 'MAX_RESPONSE_BYTES', DEFAULT_MAX_RESPONSE_BYTES, 1024, 1024 * 1024 * 1024),
    cacheMaxEntryBytes: integer(env, 'CACHE_MAX_ENTRY_BYTES', DEFAULT_CACHE_MAX_ENTRY_BYTES, 0, 512 * 1024 * 1024),
    cacheMemoryBytes: integer(env, 'CACHE_MEMORY_BYTES', DEFAULT_CACHE_MEMORY_BYTES, 1024 * 1024, 64 * 1024 * 1024 * 1024),
    maxProbeBytes: integer(env, 'MAX_PROBE_BYTES', DEFAULT_PROBE_BYTES, 1024, 16 * 1024 * 1024),
    maxRedirects: integer(env, 'MAX_REDIRECTS', DEFAULT_MAX_REDIRECTS, 0, 100),
    dns: Object.freeze({ servers: Object.freeze(dnsServers(env, 'DNS_SERVERS')), timeoutMs: duration(env, 'DNS_TIMEOUT', 3_000) }),
    maxFullPageHeight: integer(env, 'MAX_FULLPAGE_HEIGHT', 16_384, 100, 16_384),
    browserMaxJobs: integer(env, 'BROWSER_MAX_JOBS', 1000, 1, 10_000_000),
    allowPrivateHosts: Object.freeze(hostPorts(env, 'ALLOW_PRIVATE_HOSTS')),
    trustProxy: trustProxy(env, 'TRUST_PROXY'),
    docsUrl: httpUrl(env, 'DOCS_URL') ?? `${publicUrl}/docs`,
    metrics: bool(env, 'METRICS', true),
    metricsPort,
    childEnv: childEnvironment(env),
    jobs: Object.freeze({ ttlMs: duration(env, 'JOB_TTL', 86_400_000), hostConcurrency: integer(env, 'CRAWL_HOST_CONCURRENCY', 2, 1, 1000), concurrency: jobConcurrency(env, redis), stallMs: duration(env, 'JOB_STALL_TIMEOUT', 30_000), webhookSecret: str(env, 'WEBHOOK_SECRET'), webhookRetryMs: Object.freeze(webhookRetries(env)) })
  })
}
