import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { ConfigError, DEFAULT_CHILD_PATH, loadConfig, loadEnvFile } from '../../src/config.ts'

describe('loadConfig', () => {
  it('has the defaults of docs/api.md §12.1', () => {
    const c = loadConfig({})
    expect(c).toMatchObject({
      host: '0.0.0.0', freePort: 3000, proPort: 3001, region: 'local', logLevel: 'info', redis: undefined,
      s3: undefined, storageDir: './storage', publicUrl: 'http://localhost:3000', apiKeys: [], freeDailyLimit: 50,
      maxTimeout: 28_000, browserQueueLimit: 64, allowPrivateHosts: [], trustProxy: false, docsUrl: 'http://localhost:3000/docs'
    })
    expect(c.browserConcurrency).toBeGreaterThanOrEqual(1)
    expect(c.metrics).toBe(true)
    expect(c.metricsPort).toBeUndefined()
    expect(Object.isFrozen(c)).toBe(true)
  })

  it('reads every variable', () => {
    const c = loadConfig({
      FREE_PORT: '8000', PRO_PORT: '8001', HOST: '127.0.0.1', REGION: 'eu-1', LOG_LEVEL: 'warn', REDIS_URL: 'redis://r:6379',
      S3_BUCKET: 'b', S3_ENDPOINT: 'http://minio:9000', S3_REGION: 'eu-west-1', S3_ACCESS_KEY_ID: 'id', S3_SECRET_ACCESS_KEY: 's',
      S3_FORCE_PATH_STYLE: 'true', CDN_URL: 'https://cdn.example.com/', STORAGE_DIR: '/data', PUBLIC_URL: 'https://api.example.com',
      API_KEYS: 'k1, k2', FREE_DAILY_LIMIT: '0', MAX_TIMEOUT: '10s', CHROMIUM_PATH: '/usr/bin/chromium',
      BROWSER_WS_ENDPOINT: 'ws://b:3000', BROWSER_CONCURRENCY: '3', BROWSER_QUEUE_LIMIT: '10',
      ALLOW_PRIVATE_HOSTS: '127.0.0.1:8080,[::1]:9000,LOCALHOST:4000', TRUST_PROXY: '10.0.0.0/8,192.168.1.1', DOCS_URL: 'https://docs.example.com'
    })
    expect(c).toMatchObject({
      freePort: 8000, proPort: 8001, host: '127.0.0.1', region: 'eu-1', logLevel: 'warn', redis: { kind: 'node', url: 'redis://r:6379' },
      s3: { bucket: 'b', endpoint: 'http://minio:9000', region: 'eu-west-1', accessKeyId: 'id', secretAccessKey: 's', forcePathStyle: true, cdnUrl: 'https://cdn.example.com' },
      storageDir: '/data', publicUrl: 'https://api.example.com', apiKeys: ['k1', 'k2'], freeDailyLimit: 0, maxTimeout: 10_000,
      chromiumPath: '/usr/bin/chromium', browserWsEndpoint: 'ws://b:3000', browserConcurrency: 3, browserQueueLimit: 10,
      allowPrivateHosts: ['127.0.0.1:8080', '[::1]:9000', 'localhost:4000'], trustProxy: ['10.0.0.0/8', '192.168.1.1'],
      docsUrl: 'https://docs.example.com'
    })
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true)
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2)
    expect(loadConfig({ FREE_PORT: '4000' }).publicUrl).toBe('http://localhost:4000')
    expect(loadConfig({ MAX_TIMEOUT: '15000' }).maxTimeout).toBe(15_000)
    expect(loadConfig({ METRICS: 'false', METRICS_PORT: '9464' })).toMatchObject({ metrics: false, metricsPort: 9464 })
  })

  it('reads the resolver\'s DNS servers and timeout, and refuses an entry that is not an address', () => {
    expect(loadConfig({}).dns).toEqual({ servers: [], timeoutMs: 3_000 })
    expect(loadConfig({ DNS_SERVERS: '1.1.1.1, 127.0.0.1:5353,[::1]:53,2606:4700::1111', DNS_TIMEOUT: '2s' }).dns)
      .toEqual({ servers: ['1.1.1.1', '127.0.0.1:5353', '[::1]:53', '2606:4700::1111'], timeoutMs: 2_000 })
    for (const bad of ['dns.google', '1.1.1.1:99999', '300.1.1.1', '127.0.0.1:']) {
      expect(() => loadConfig({ DNS_SERVERS: bad }), bad).toThrow(ConfigError)
    }
  })

  it('reads a Sentinel set or a Cluster instead of one node', () => {
    expect(loadConfig({ REDIS_SENTINELS: 's1:26379, [::1]:26380', REDIS_SENTINEL_NAME: 'main', REDIS_PASSWORD: 'pw', REDIS_SENTINEL_PASSWORD: 'spw', STORAGE_SCOPE: 'instance' }).redis).toEqual({
      kind: 'sentinel', sentinels: [{ host: 's1', port: 26379 }, { host: '::1', port: 26380 }], name: 'main', password: 'pw', sentinelPassword: 'spw', tls: false
    })
    expect(loadConfig({ REDIS_SENTINELS: 's1:26379', STORAGE_SCOPE: 'instance' }).redis).toMatchObject({ kind: 'sentinel', name: 'mymaster' })
    expect(loadConfig({ REDIS_CLUSTER_NODES: 'n1:7000,n2:7001', REDIS_USERNAME: 'u', REDIS_TLS: 'true', STORAGE_SCOPE: 'instance' }).redis).toEqual({
      kind: 'cluster', nodes: [{ host: 'n1', port: 7000 }, { host: 'n2', port: 7001 }], username: 'u', tls: true
    })
  })

  it.each([
    ['FREE_PORT', { FREE_PORT: 'abc' }],
    ['PRO_PORT', { PRO_PORT: '70000' }],
    ['PRO_PORT', { FREE_PORT: '4000', PRO_PORT: '4000' }],
    ['LOG_LEVEL', { LOG_LEVEL: 'loud' }],
    ['REDIS_URL', { REDIS_URL: 'localhost:6379' }],
    ['REDIS_URL', { REDIS_URL: 'redis://r:6379', REDIS_CLUSTER_NODES: 'a:7000' }],
    ['REDIS_URL', { REDIS_SENTINELS: 'a:26379', REDIS_CLUSTER_NODES: 'a:7000' }],
    ['REDIS_SENTINELS', { REDIS_SENTINELS: 'a' }],
    ['REDIS_CLUSTER_NODES', { REDIS_CLUSTER_NODES: 'a:7000,b:99999' }],
    ['REDIS_TLS', { REDIS_CLUSTER_NODES: 'a:7000', REDIS_TLS: 'perhaps' }],
    ['CDN_URL', { S3_BUCKET: 'b' }],
    ['S3_FORCE_PATH_STYLE', { S3_BUCKET: 'b', CDN_URL: 'http://c', S3_FORCE_PATH_STYLE: 'maybe' }],
    ['FREE_DAILY_LIMIT', { FREE_DAILY_LIMIT: '-1' }],
    ['MAX_TIMEOUT', { MAX_TIMEOUT: 'soon' }],
    ['BROWSER_CONCURRENCY', { BROWSER_CONCURRENCY: '0' }],
    ['ALLOW_PRIVATE_HOSTS', { ALLOW_PRIVATE_HOSTS: '127.0.0.1' }],
    ['TRUST_PROXY', { TRUST_PROXY: 'everyone' }],
    ['API_KEYS', { API_KEYS: 'sha256:abc' }],
    ['PUBLIC_URL', { PUBLIC_URL: 'ftp://x' }],
    ['REGION', { REGION: 'has space' }],
    ['METRICS', { METRICS: 'sometimes' }],
    ['METRICS_PORT', { METRICS_PORT: 'x' }],
    ['METRICS_PORT', { METRICS_PORT: '3001' }],
    ['METRICS_PORT', { FREE_PORT: '9000', METRICS_PORT: '9000' }],
    ['STORAGE_SCOPE', { STORAGE_SCOPE: 'cluster' }],
    ['STORAGE_SCOPE', { REDIS_URL: 'redis://r:6379' }]
  ])('stops with a message naming %s', (variable, env) => {
    let error: unknown
    try { loadConfig(env) } catch (err) { error = err }
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as ConfigError).variable).toBe(variable)
    expect((error as Error).message).toContain(variable)
  })
})

describe('the storage rule for several instances (docs/operations.md#storage-rule)', () => {
  const s3 = { S3_BUCKET: 'b', CDN_URL: 'https://cdn.example.com' }

  it('needs S3, or STORAGE_SCOPE saying what STORAGE_DIR is, once Redis is shared', () => {
    for (const redis of [{ REDIS_URL: 'redis://r:6379' }, { REDIS_SENTINELS: 's:26379' }, { REDIS_CLUSTER_NODES: 'n:7000' }]) {
      const name = Object.keys(redis)[0] ?? ''
      let error: unknown
      try { loadConfig(redis) } catch (err) { error = err }
      expect(error, name).toBeInstanceOf(ConfigError)
      expect((error as ConfigError).variable).toBe('STORAGE_SCOPE')
      // The message names the store that triggered the rule and every way out of it.
      for (const variable of [name, 'S3_BUCKET', 'CDN_URL', 'STORAGE_SCOPE=shared', 'STORAGE_SCOPE=instance']) {
        expect((error as Error).message, name).toContain(variable)
      }
      expect(loadConfig({ ...redis, ...s3 }).s3?.bucket).toBe('b')
      expect(loadConfig({ ...redis, STORAGE_SCOPE: 'shared' }).storageScope).toBe('shared')
      expect(loadConfig({ ...redis, STORAGE_SCOPE: 'Instance' }).storageScope).toBe('instance')
    }
  })

  it('keeps one instance without Redis as it was: its own folder', () => {
    expect(loadConfig({}).storageScope).toBe('instance')
    expect(loadConfig({ STORAGE_SCOPE: 'shared' }).storageScope).toBe('shared')
    expect(loadConfig(s3).storageScope).toBe('shared')
  })
})

describe('loadEnvFile', () => {
  const names = ['PAGECAST_TEST_FROM_FILE', 'PAGECAST_TEST_SET', 'PAGECAST_TEST_EMPTY']
  let dir: string | undefined
  afterEach(() => {
    for (const name of names) Reflect.deleteProperty(process.env, name)
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
    dir = undefined
  })

  it('adds the variables of a .env file and keeps those already set, even empty', () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'pagecast-env-'))
    const file = path.join(dir, '.env')
    writeFileSync(file, '# comment\nPAGECAST_TEST_FROM_FILE=file\nPAGECAST_TEST_SET=file\nPAGECAST_TEST_EMPTY="file"\n')
    process.env.PAGECAST_TEST_SET = 'shell'
    process.env.PAGECAST_TEST_EMPTY = ''
    expect(loadEnvFile(file)).toBe(true)
    expect(process.env.PAGECAST_TEST_FROM_FILE).toBe('file')
    expect(process.env.PAGECAST_TEST_SET).toBe('shell')
    expect(process.env.PAGECAST_TEST_EMPTY).toBe('')
  })

  it('does nothing without a file, and names the file it cannot read', () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'pagecast-env-'))
    expect(loadEnvFile(path.join(dir, '.env'))).toBe(false)
    const notAFile = path.join(dir, 'dir.env')
    mkdirSync(notAFile)
    expect(() => loadEnvFile(notAFile)).toThrow(ConfigError)
  })
})

describe('childEnv (docs/security.md)', () => {
  it('keeps what a browser needs and nothing of the service', () => {
    const c = loadConfig({
      PATH: '/usr/bin:/bin', HOME: '/home/pagecast', LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8', TZ: 'UTC', TMPDIR: '/tmp',
      FONTCONFIG_PATH: '/etc/fonts', XDG_CACHE_HOME: '/cache', DISPLAY: ':99',
      API_KEYS: 'k', REDIS_URL: 'redis://:pw@r:6379', S3_BUCKET: 'b', CDN_URL: 'http://c', S3_ACCESS_KEY_ID: 'id',
      S3_SECRET_ACCESS_KEY: 's', AWS_SECRET_ACCESS_KEY: 'aws', NODE_OPTIONS: '--inspect', LD_PRELOAD: '/x.so', npm_config_token: 't'
    })
    expect(c.childEnv).toEqual({
      PATH: '/usr/bin:/bin', HOME: '/home/pagecast', LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8', TZ: 'UTC', TMPDIR: '/tmp',
      FONTCONFIG_PATH: '/etc/fonts', XDG_CACHE_HOME: '/cache', DISPLAY: ':99'
    })
    expect(Object.isFrozen(c.childEnv)).toBe(true)
  })

  it('gives a PATH when the service has none', () => {
    expect(loadConfig({}).childEnv).toEqual({ PATH: DEFAULT_CHILD_PATH })
  })
})
