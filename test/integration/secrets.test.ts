// Keys and secrets (docs/api.md §10), beyond api.test.ts's fetch-path log check: a render with forwarded
// headers, cookies, authorization and proxy credentials, error logs included; keys looked up by their hash
// (test/unit/tenants.test.ts); sha256: keys end to end; no client reads another's private result; no secret of the
// service's environment in any process of the browser.
import { createHash } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { CHILD_ENV_NAMES, CHILD_ENV_PREFIXES } from '../../src/config.ts'
import { build, qs, type Built } from '../helpers/build.ts'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'
import { freePort } from '../setup/global-setup.ts'
import { browserProcesses, environOf } from '../helpers/processes.ts'

function sha256 (value: string): Buffer {
  return createHash('sha256').update(value).digest()
}

const PLAIN_KEY = 'plain-key-secret-1f2e'
const HASHED_KEY = 'hashed-key-secret-9a8b'
const HASHED_ENTRY = `sha256:${sha256(HASHED_KEY).toString('hex')}`

let fx: FixtureServer
let app: Built
let closedPort: number
const received: Array<Record<string, unknown>> = []

beforeAll(async () => {
  fx = await startFixtureServer()
  fx.route('/whoami', (req, res) => {
    received.push({ ...req.headers })
    res.writeHead(200, { 'content-type': 'text/html' })
    res.end(`<title>cookie=${String(req.headers.cookie ?? 'none')}</title>`)
  })
  fx.route('/hang', (req) => { received.push({ ...req.headers }) })
  closedPort = await freePort()
  app = await build({
    ALLOW_PRIVATE_HOSTS: `${fx.host},127.0.0.1:${closedPort}`,
    API_KEYS: `${PLAIN_KEY},${HASHED_ENTRY}`,
    BROWSER_CONCURRENCY: '2'
  })
}, 60_000)

afterAll(async () => {
  await app?.close()
  await fx?.close()
})

async function pro (query: Record<string, string | number | boolean>, headers: Record<string, string> = {}) {
  return await app.pro.inject({ url: `/?${qs(query)}`, headers: { 'x-api-key': PLAIN_KEY, ...headers } })
}

describe('API keys', () => {
  it('accepts a sha256: entry by its plain key, never by the digest itself', async () => {
    const ok = await app.pro.inject({ url: `/?${qs({ url: `${fx.origin}/plain/`, 'meta.title': true })}`, headers: { 'x-api-key': HASHED_KEY } })
    expect(ok.statusCode).toBe(200)
    const digest = await app.pro.inject({ url: `/?${qs({ url: `${fx.origin}/plain/`, 'meta.title': true })}`, headers: { 'x-api-key': HASHED_ENTRY } })
    expect(digest.json().code).toBe('EAUTH')
    expect(app.rawLogs.join('\n')).not.toContain(HASHED_KEY)
  })
})

describe('logs', () => {
  it('never hold forwarded headers, cookies, authorization or proxy credentials of a render, error logs included', async () => {
    const secrets = {
      query: 'query-header-secret-71',
      apiHeader: 'api-header-secret-72',
      cookie: 'cookie-secret-73',
      authorization: 'authorization-secret-74',
      forwardedCookie: 'forwarded-cookie-secret-75',
      proxyUser: 'proxy-user-secret-76',
      proxyPass: 'proxy-pass-secret-77'
    }
    const clientHeaders = {
      cookie: `session=${secrets.cookie}`,
      authorization: `Bearer ${secrets.authorization}`,
      'x-api-header-x-token': secrets.apiHeader,
      'x-api-header-cookie': `sid=${secrets.forwardedCookie}`
    }
    const rendered = await pro({ url: `${fx.origin}/whoami`, prerender: true, waitUntil: 'load', 'headers.x-query-token': secrets.query }, clientHeaders)
    expect(rendered.statusCode).toBe(200)
    expect(rendered.headers['x-fetch-mode']).toBe('prerender')
    // The secrets really went through the service to the target.
    expect(rendered.json().data.title).toBe(`cookie=sid=${secrets.forwardedCookie}`)
    const seen = received.at(-1) ?? {}
    expect(seen['x-token']).toBe(secrets.apiHeader)
    expect(seen['x-query-token']).toBe(secrets.query)

    // A render that fails (ETIMEOUT is a 5xx: logged at error level with its cause).
    const timedOut = await pro({ url: `${fx.origin}/hang`, prerender: true, timeout: '2s', 'headers.x-query-token': secrets.query }, clientHeaders)
    expect(timedOut.statusCode).toBe(504)

    // A proxy with credentials that cannot be reached. Whatever the outcome, the credentials sit in the
    // request's query, which every request log line carries (redacted).
    const proxied = await pro({
      url: `${fx.origin}/whoami?proxied`,
      prerender: true,
      timeout: '8s',
      proxy: `http://${secrets.proxyUser}:${secrets.proxyPass}@127.0.0.1:${closedPort}`
    }, clientHeaders)
    expect(JSON.stringify(proxied.json())).not.toContain(secrets.proxyPass)

    const errorLines = app.logs.filter(l => typeof l.level === 'number' && l.level >= 50)
    expect(errorLines.length).toBeGreaterThanOrEqual(1)
    // Debug request lines (with their headers) were written, so the check covers them too.
    expect(app.logs.some(l => l.msg === 'request' && l.req !== undefined)).toBe(true)
    const all = app.rawLogs.join('\n')
    for (const secret of [...Object.values(secrets), PLAIN_KEY]) {
      expect(all).not.toContain(secret)
    }
    // And nothing of them reaches /metrics either.
    const metrics = (await app.pro.inject('/metrics')).body
    for (const secret of Object.values(secrets)) expect(metrics).not.toContain(secret)
  }, 60_000)
})

describe('logs of refused and credentialed requests', () => {
  /** Every line logged while `run` ran, raw. */
  async function logged (run: () => Promise<void>): Promise<string> {
    const from = app.rawLogs.length
    await run()
    // The access line is written when the answer is sent.
    await new Promise(resolve => setTimeout(resolve, 50))
    return app.rawLogs.slice(from).join('\n')
  }

  it('never hold the userinfo of a target URL: access lines (raw, encoded, path form), refusals and errors', async () => {
    const user = 'url-user-secret-86'
    const pass = 'url-pass-secret-87'
    const lines = await logged(async () => {
      const free = async (url: string) => await app.free.inject({ url, remoteAddress: '198.51.100.41' })
      // The query as a browser sends it (unencoded) and as mql sends it (encoded); a plain fetch and a render.
      const raw = await free(`/?url=http://${user}:${pass}@${fx.host}/whoami?raw&meta.title=true`)
      expect(raw.statusCode).toBe(200)
      const encoded = await free(`/?${qs({ url: `http://${user}:${pass}@${fx.host}/whoami?encoded`, prerender: true, waitUntil: 'load' })}`)
      expect(encoded.statusCode).toBe(200)
      // The `http:user:pass@host` spelling, which the URL parser reads as userinfo too.
      expect((await free(`/?${qs({ url: `http:${user}:${pass}@${fx.host}/whoami?noslash` })}`)).statusCode).toBe(200)
      // The content endpoints' path form.
      expect((await free(`/markdown/http://${user}:${pass}@${fx.host}/article/?path`)).statusCode).toBe(200)
      // Unreachable, failed and refused: an error's detail and cause may quote the URL (a browser navigation error does).
      await free(`/?${qs({ url: `http://${user}:${pass}@127.0.0.1:${closedPort}/`, prerender: true })}`)
      const failed = await free(`/?${qs({ url: `http://${user}:${pass}@${fx.host}/hang`, prerender: true, timeout: '2s' })}`)
      expect(failed.statusCode).toBe(504)
      const invalid = await free(`/?${qs({ url: `http://${user}:${pass}@${fx.host}:99999/` })}`)
      expect(invalid.statusCode).toBe(400)
    })
    // The lines are there (so the check is not vacuous), the credentials are not.
    expect(lines).toContain('"msg":"request"')
    expect(lines).toContain('/whoami?raw')
    expect(lines).toContain('[redacted]')
    expect(lines).not.toContain(pass)
    expect(lines).not.toContain(user)
  }, 60_000)

  it('name a refused forwarded header, never log its value (a cookie with a character beyond Latin-1)', async () => {
    const secret = 'refused-cookie-secret-88\u0142'
    const lines = await logged(async () => {
      const viaQuery = await pro({ url: `${fx.origin}/whoami?refused`, 'headers.cookie': `sid=${secret}` })
      expect(viaQuery.statusCode).toBe(400)
      expect(viaQuery.json().code).toBe('EINVALQUERY')
      expect(Object.keys(viaQuery.json().data)).toEqual(['headers.cookie'])
      // The refusal names the header, and does not send the value back either.
      expect(JSON.stringify(viaQuery.json())).not.toContain('refused-cookie-secret-88')
      const viaHeader = await pro({ url: `${fx.origin}/whoami?refused` }, { 'x-api-header-x-token': `tok=${secret}\u0000` })
      expect(viaHeader.statusCode).toBe(400)
      expect(Object.keys(viaHeader.json().data)).toEqual(['x-api-header-x-token'])
    })
    expect(lines).toContain('request refused')
    expect(lines).toContain('headers.cookie')
    expect(lines).not.toContain('refused-cookie-secret-88')
  })
})

describe('private results', () => {
  it('forwarded cookies split cache entries, and a request without headers never hits one of them', async () => {
    const target = { url: `${fx.origin}/whoami?cache`, 'meta.title': true }
    const alice = await pro(target, { 'x-api-header-cookie': 'sid=alice' })
    expect(alice.headers['x-cache-status']).toBe('MISS')
    expect(alice.json().data.title).toBe('cookie=sid=alice')

    const bob = await pro(target, { 'x-api-header-cookie': 'sid=bob' })
    expect(bob.headers['x-cache-status']).toBe('MISS')
    expect(bob.json().data.title).toBe('cookie=sid=bob')

    // Alice's entry is there, and only she gets it.
    const aliceAgain = await pro(target, { 'x-api-header-cookie': 'sid=alice' })
    expect(aliceAgain.headers['x-cache-status']).toBe('HIT')
    expect(aliceAgain.json().data.title).toBe('cookie=sid=alice')

    // No forwarded headers (the client's own cookie is never forwarded): a fresh computation, on both listeners.
    const anonymous = await pro(target, { cookie: 'sid=alice' })
    expect(anonymous.headers['x-cache-status']).toBe('MISS')
    expect(anonymous.json().data.title).toBe('cookie=none')
    const free = await app.free.inject({ url: `/?${qs({ ...target, force: false })}`, remoteAddress: '198.51.100.30' })
    expect(free.json().data.title).toBe('cookie=none')
    expect(free.headers['x-cache-status']).toBe('HIT')
  })

  it('credentials in one request\'s target URL never reach another\'s render (prerender=auto: the GET gets 401, the browser takes over)', async () => {
    const alice = `Basic ${Buffer.from('alice:pw').toString('base64')}`
    const seen: string[] = []
    fx.route('/alice', (req, res) => {
      seen.push(req.headers.authorization ?? '')
      const ok = req.headers.authorization === alice
      res.writeHead(ok ? 200 : 401, { 'content-type': 'text/html', ...(ok ? {} : { 'www-authenticate': 'Basic realm="alice"' }) })
      res.end(ok ? '<title>Alice private</title>' : '<title>Locked</title>')
    })
    const opened = await pro({ url: `http://alice:pw@${fx.host}/alice`, prerender: true, force: true })
    // The browser used the credentials (else what follows proves nothing).
    expect(opened.json().data?.title).toBe('Alice private')
    expect(seen.at(-1)).toBe(alice)

    // Another client, no credentials, the default prerender=auto: the plain GET is refused, the browser takes over.
    seen.length = 0
    const other = await pro({ url: `${fx.origin}/alice`, force: true })
    expect(other.body).not.toContain('Alice private')
    expect(seen.length).toBeGreaterThanOrEqual(2)
    expect(seen.every(authorization => authorization === '')).toBe(true)
    // Nor is A's page stored under B's key.
    const cached = await pro({ url: `${fx.origin}/alice` })
    expect(cached.body).not.toContain('Alice private')
  }, 60_000)
})

describe("the browser's environment", () => {
  it('holds no secret of the service: not API_KEYS, the S3 credentials, REDIS_URL or anything else beyond the allowlist', async () => {
    // The service's environment, as server.ts gives it to loadConfig (process.env), with secrets in it.
    const secrets: Record<string, string> = {
      API_KEYS: 'env-api-key-secret-81,sha256:' + 'ab'.repeat(32),
      S3_ACCESS_KEY_ID: 'env-s3-access-key-secret-82',
      S3_SECRET_ACCESS_KEY: 'env-s3-secret-key-secret-83',
      REDIS_URL: `${inject('redisUrl')}/0?secret-84`,
      PAGECAST_UNLISTED_SETTING: 'env-unlisted-secret-85'
    }
    const saved = Object.fromEntries(Object.keys(secrets).map(name => [name, process.env[name]]))
    Object.assign(process.env, secrets)
    let withSecrets: Built | undefined
    try {
      const serviceEnv: Record<string, string> = {}
      for (const [name, value] of Object.entries(process.env)) if (value !== undefined) serviceEnv[name] = value
      withSecrets = await build({
        ...serviceEnv,
        S3_BUCKET: 'env-bucket',
        S3_ENDPOINT: 'http://127.0.0.1:9',
        CDN_URL: 'http://127.0.0.1:9/env-bucket',
        ALLOW_PRIVATE_HOSTS: fx.host,
        BROWSER_CONCURRENCY: '2'
      })
      expect(withSecrets.config.s3?.secretAccessKey).toBe(secrets.S3_SECRET_ACCESS_KEY)
      // A render: the browser, its zygotes, a renderer, the GPU and network services are all running.
      const rendered = await withSecrets.pro.inject({
        url: `/?${qs({ url: `${fx.origin}/whoami?env`, prerender: true, waitUntil: 'load' })}`,
        headers: { 'x-api-key': 'env-api-key-secret-81' }
      })
      expect(rendered.statusCode).toBe(200)
      expect(rendered.headers['x-fetch-mode']).toBe('prerender')

      const browserPid = withSecrets.ctx.browser.browserPid()
      expect(browserPid).toBeGreaterThan(0)
      const pids = browserProcesses(browserPid as number)
      expect(pids.length).toBeGreaterThanOrEqual(3)
      let read = 0
      for (const pid of pids) {
        let environ: string[]
        // A helper that exited between the listing and the read has no environment left to leak.
        try { environ = environOf(pid) } catch { continue }
        read += 1
        const names = environ.map(entry => entry.slice(0, entry.indexOf('=')))
        // (Chromium retitles its zygotes over their original environment block, so not every block is a list of
        // variables; none may hold a secret either way.)
        for (const [name, value] of Object.entries(secrets)) {
          expect(names, `pid ${pid} has ${name}`).not.toContain(name)
          for (const part of value.split(',')) expect(environ.join('\n'), `pid ${pid} holds the value of ${name}`).not.toContain(part)
        }
        for (const name of ['S3_BUCKET', 'S3_ENDPOINT', 'CDN_URL', 'ALLOW_PRIVATE_HOSTS', 'LOG_LEVEL', 'STORAGE_DIR']) {
          expect(names, `pid ${pid} has ${name}`).not.toContain(name)
        }
      }
      expect(read).toBeGreaterThanOrEqual(3)
      // The browser process itself got the allowlist and nothing else of the service's (Debian's launcher script adds
      // its own, and its shell keeps PWD), PATH among them, so the reads above are not vacuous.
      const own = environOf(browserPid as number).map(entry => entry.slice(0, entry.indexOf('=')))
      expect(own).toContain('PATH')
      const fromService = own.filter(name => name in serviceEnv && !['PWD', 'OLDPWD', 'SHLVL', '_'].includes(name))
      expect(fromService.filter(name => !CHILD_ENV_NAMES.includes(name) && !CHILD_ENV_PREFIXES.some(p => name.startsWith(p)))).toEqual([])
    } finally {
      await withSecrets?.close()
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) Reflect.deleteProperty(process.env, name)
        else process.env[name] = value
      }
    }
  }, 60_000)
})
