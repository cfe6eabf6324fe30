// The deployment files, checked without a Docker engine (none runs on these machines): the compose file's services
// and their wiring, the S3 server's identities against the service's credentials, the bucket creation, the grace
// period against the drain time, the environment against the service's own config parser, and the Dockerfile's
// stages. What only an engine can show (pulls, builds, start-up) is listed in docs/operations.md.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import ms from 'ms'
import { loadConfig } from '../../src/config.ts'

const ROOT = path.resolve(import.meta.dirname, '../..')
const read = (file: string): string => readFileSync(path.join(ROOT, file), 'utf8')

interface Service {
  image?: string
  build?: unknown
  command?: string[] | string
  entrypoint?: string[] | string
  environment?: Record<string, string | number>
  depends_on?: Record<string, { condition: string }> | string[]
  volumes?: string[]
  stop_grace_period?: string
  healthcheck?: unknown
  profiles?: string[]
}

const compose = parse(read('docker-compose.yml')) as { services: Record<string, Service>, volumes?: Record<string, unknown> }
const services = compose.services
const service = (name: string): Service => {
  const found = services[name]
  if (found === undefined) throw new Error(`no service ${name}`)
  return found
}
const envOf = (name: string): Record<string, string> =>
  Object.fromEntries(Object.entries(service(name).environment ?? {}).map(([key, value]) => [key, String(value)]))
const commandText = (svc: Service): string => [svc.entrypoint, svc.command].flat().filter(Boolean).join(' ')

describe('docker-compose.yml', () => {
  const env = envOf('pagecast')

  it('runs the service with Redis, an S3 server and a one-shot bucket creation (the `scale` profile: deploy-scale.test.ts)', () => {
    const byDefault = Object.entries(services).filter(([, svc]) => svc.profiles === undefined).map(([name]) => name)
    expect(byDefault.sort()).toEqual(['pagecast', 'redis', 's3', 's3-init'])
    expect(service('pagecast').build).toBe('.')
  })

  it('pins every image to a version tag, and none comes from the unpublished MinIO repositories', () => {
    for (const [name, svc] of Object.entries(services)) {
      if (svc.image === undefined) continue
      expect(svc.image, name).toMatch(/^[\w./-]+:\d[\w.-]*$/)
      expect(svc.image, name).not.toMatch(/^minio\//)
    }
  })

  it('starts the service once Redis is healthy and the bucket exists', () => {
    expect(service('pagecast').depends_on).toEqual({
      redis: { condition: 'service_healthy' },
      's3-init': { condition: 'service_completed_successfully' }
    })
    expect(service('redis').healthcheck).toBeDefined()
  })

  it('wires the service to Redis and to the S3 server by service name and port', () => {
    const redis = new URL(env.REDIS_URL ?? '')
    expect(redis.hostname).toBe('redis')
    expect(redis.port).toBe('6379')
    const s3 = new URL(env.S3_ENDPOINT ?? '')
    expect(s3.hostname).toBe('s3')
    expect(commandText(service('s3'))).toContain(`-s3.port=${s3.port}`)
    expect(env.S3_FORCE_PATH_STYLE).toBe('true')
  })

  it('creates the very bucket the service writes to, at the endpoint it writes to, with its credentials', () => {
    const init = service('s3-init')
    const script = commandText(init)
    expect(script).toContain(`--endpoint-url ${env.S3_ENDPOINT}`)
    expect(script).toContain(`create-bucket --bucket ${env.S3_BUCKET}`)
    expect(init.depends_on).toEqual(['s3'])
    expect(envOf('s3-init').AWS_ACCESS_KEY_ID).toBe(env.S3_ACCESS_KEY_ID)
    expect(envOf('s3-init').AWS_SECRET_ACCESS_KEY).toBe(env.S3_SECRET_ACCESS_KEY)
    // Compose would read `$(` as its own interpolation: the shell's must be written `$$(`.
    expect(script).not.toMatch(/(^|[^$])\$\(/)
  })

  it('gives the S3 server identities that let the service write and anyone read the bucket (a CDN origin)', () => {
    const mount = (service('s3').volumes ?? []).find((volume) => volume.includes('/etc/seaweedfs/s3.json'))
    expect(mount).toBeDefined()
    expect(commandText(service('s3'))).toContain('-s3.config=/etc/seaweedfs/s3.json')
    const file = (mount ?? '').split(':')[0] ?? ''
    const identities = (JSON.parse(read(file)) as { identities: Array<{ name: string, credentials?: Array<{ accessKey: string, secretKey: string }>, actions: string[] }> }).identities
    const writer = identities.find((identity) => identity.credentials?.some((c) => c.accessKey === env.S3_ACCESS_KEY_ID && c.secretKey === env.S3_SECRET_ACCESS_KEY))
    expect(writer?.actions).toEqual(expect.arrayContaining(['Write', 'Read']))
    const anonymous = identities.find((identity) => identity.name === 'anonymous')
    expect(anonymous?.actions).toEqual([`Read:${env.S3_BUCKET}`])
    expect(env.CDN_URL).toMatch(new RegExp(`/${env.S3_BUCKET ?? ''}$`))
  })

  it('is a configuration the service accepts as it is', () => {
    const config = loadConfig(env)
    expect(config.s3?.bucket).toBe(env.S3_BUCKET)
    expect(config.maxTimeout).toBe(28_000)
  })

  it('gives the service a grace period above its drain time (MAX_TIMEOUT + 5 s)', () => {
    const grace = ms(service('pagecast').stop_grace_period as ms.StringValue)
    const drain = loadConfig(env).maxTimeout + 5000
    expect(grace).toBeGreaterThan(drain)
  })
})

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile')
  const stages = dockerfile.split(/^FROM /m).slice(1)
  const runtime = stages.at(-1) ?? ''

  it('builds in one stage and runs from another that has no compiler', () => {
    expect(stages).toHaveLength(2)
    expect(stages[0]).toMatch(/ AS build\b/)
    expect(stages[0]).toMatch(/\bg\+\+/)
    expect(runtime).not.toMatch(/\b(g\+\+|make|python3)\b/)
    expect(runtime).toContain('COPY --from=build /app/node_modules ./node_modules')
  })

  it('starts from a base pinned to a Node 24 release', () => {
    const base = /^ARG NODE_IMAGE=(\S+)$/m.exec(dockerfile)?.[1]
    expect(base).toMatch(/^node:24\.\d+\.\d+-bookworm-slim$/)
    for (const stage of stages) expect(stage.startsWith('${NODE_IMAGE}')).toBe(true)
  })

  it('carries the OCI labels', () => {
    for (const label of ['title', 'description', 'version', 'licenses']) {
      expect(runtime).toContain(`org.opencontainers.image.${label}=`)
    }
  })

  it('runs the service process directly (it receives SIGTERM and drains), as a user without privileges', () => {
    expect(runtime).toMatch(/^CMD \["node", "src\/server\.ts"\]$/m)
    expect(runtime).toMatch(/^USER pagecast$/m)
  })

  it('sends only what the image needs to the build', () => {
    const ignored = read('.dockerignore').split('\n').map((line) => line.trim())
    for (const entry of ['node_modules', '.git', 'test', 'storage', '.env']) expect(ignored).toContain(entry)
  })
})
