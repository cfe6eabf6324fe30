// The files for several replicas, checked without a Docker engine or a Kubernetes cluster (neither runs on these
// machines): the compose `scale` profile and its HAProxy configuration, and the manifests in deploy/kubernetes,
// parsed, validated against the Kubernetes API schemas (kubernetes-models), and checked against the service's own
// config parser and routes. What only an engine or a cluster can show is listed in docs/operations.md#deployment.
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { parse, parseAllDocuments } from 'yaml'
import ms from 'ms'
import { ConfigMap, Secret, Service } from 'kubernetes-models/v1'
import { Deployment } from 'kubernetes-models/apps/v1'
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2'
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1'
import { loadConfig } from '../../src/config.ts'
import { build, type Built } from '../helpers/build.ts'

const ROOT = path.resolve(import.meta.dirname, '../..')
const read = (file: string): string => readFileSync(path.join(ROOT, file), 'utf8')
const strings = (env: Record<string, unknown> | undefined): Record<string, string> =>
  Object.fromEntries(Object.entries(env ?? {}).map(([key, value]) => [key, String(value)]))
/** Drain time of docs/operations.md#shutdown: the process exits at the latest MAX_TIMEOUT + 5 s after SIGTERM. */
const drainMs = (env: Record<string, string>): number => loadConfig(env).maxTimeout + 5000
/** Variables whose values are secrets: they belong in a Secret, never in a ConfigMap or a compose file meant to be edited. */
const SECRET_NAMES = ['API_KEYS', 'REDIS_URL', 'REDIS_PASSWORD', 'REDIS_SENTINEL_PASSWORD', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY']

// The service answers /ready and /health on the listeners the probes and health checks name.
let app: Built
beforeAll(async () => { app = await build() })
afterAll(async () => { await app.close() })
async function answers (listener: 'free' | 'pro', url: string): Promise<number> {
  return (await app[listener].inject({ url })).statusCode
}

// ---------------------------------------------------------------- compose profile `scale` and HAProxy

interface ComposeService {
  image?: string
  build?: unknown
  profiles?: string[]
  ports?: string[]
  volumes?: string[]
  environment?: Record<string, unknown>
  depends_on?: Record<string, { condition: string }>
  deploy?: { replicas?: number }
  stop_grace_period?: string
}

// Compose resolves YAML merge keys (`<<: *service-env`); so must the parse.
const compose = parse(read('docker-compose.yml'), { merge: true }) as { services: Record<string, ComposeService> }
const svc = (name: string): ComposeService => {
  const found = compose.services[name]
  if (found === undefined) throw new Error(`no service ${name}`)
  return found
}

/** HAProxy's configuration as sections (`backend free`) of directive lines, comments dropped. */
function haproxySections (text: string): Map<string, string[]> {
  const sections = new Map<string, string[]>()
  let current: string[] | undefined
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*$/, '').trimEnd()
    if (line.trim() === '') continue
    if (!/^\s/.test(line)) {
      current = []
      sections.set(line.trim().replace(/\s+/g, ' '), current)
    } else {
      current?.push(line.trim().replace(/\s+/g, ' '))
    }
  }
  return sections
}

describe('docker-compose.yml, profile scale', () => {
  const replica = svc('replica')
  const balancer = svc('balancer')
  const env = strings(replica.environment)
  const config = loadConfig(env)
  const haproxyMount = (balancer.volumes ?? []).find((volume) => volume.endsWith(':/usr/local/etc/haproxy/haproxy.cfg:ro'))
  const haproxyFile = haproxyMount?.split(':')[0] ?? ''
  const sections = haproxySections(existsSync(path.join(ROOT, haproxyFile)) ? read(haproxyFile) : '')
  const section = (name: string): string[] => sections.get(name) ?? []

  it('runs 2 replicas of the service image, only in the profile, with no published ports', () => {
    expect(replica.profiles).toEqual(['scale'])
    expect(balancer.profiles).toEqual(['scale'])
    expect(replica.deploy?.replicas).toBe(2)
    expect(replica.build).toBe(svc('pagecast').build)
    expect(replica.ports).toBeUndefined()
  })

  it('gives the replicas the single service\'s environment (a YAML merge), on the shared Redis and S3', () => {
    const single = strings(svc('pagecast').environment)
    for (const [name, value] of Object.entries(single)) {
      if (name !== 'PUBLIC_URL') expect(env[name], name).toBe(value)
    }
    expect(config.redis).toEqual({ kind: 'node', url: 'redis://redis:6379' })
    // The storage rule: replicas that share Redis share generated files, here in S3.
    expect(config.s3?.bucket).toBe(single.S3_BUCKET)
    expect(replica.depends_on).toEqual(svc('pagecast').depends_on)
    // Behind one proxy that adds x-forwarded-for.
    expect(config.trustProxy).toBe(1)
    expect(section('defaults')).toContain('option forwardfor')
  })

  it('gives the replicas a grace period above their drain time', () => {
    expect(ms(replica.stop_grace_period as ms.StringValue)).toBeGreaterThan(drainMs(env))
  })

  it('puts HAProxy in front, pinned to a version tag, started once the replicas are healthy', () => {
    expect(balancer.image).toMatch(/^haproxy:\d+\.\d+\.\d+$/)
    expect(balancer.depends_on).toEqual({ replica: { condition: 'service_healthy' } })
    expect(haproxyFile).toBe('./deploy/haproxy.cfg')
    // Free and pro published beside the single service's 3000/3001, on the ports HAProxy binds.
    expect(balancer.ports).toEqual(['3100:3100', '3101:3101'])
    expect(section('frontend free')).toContain('bind :3100')
    expect(section('frontend pro')).toContain('bind :3101')
    expect(config.publicUrl).toBe('http://localhost:3100')
  })

  it('balances each listener by least connections over the replicas found by DNS, checking /ready on that listener', async () => {
    for (const [listener, port] of [['free', config.freePort], ['pro', config.proPort]] as const) {
      expect(section(`frontend ${listener}`)).toContain(`default_backend ${listener}`)
      const backend = section(`backend ${listener}`)
      expect(backend, listener).toContain('balance leastconn')
      expect(backend, listener).toContain('option httpchk GET /ready')
      expect(backend, listener).toContain('http-check expect status 200')
      // Slots for both replicas (and more) filled from the service name, on the port of this listener.
      const template = backend.find((line) => line.startsWith('server-template '))?.split(' ') ?? []
      expect(template[2], listener).toMatch(/^1-(\d+)$/)
      expect(Number(template[2]?.split('-')[1])).toBeGreaterThanOrEqual(replica.deploy?.replicas ?? 0)
      expect(template[3], listener).toBe(`replica:${port}`)
      expect(await answers(listener, '/ready'), listener).toBe(200)
    }
    // Health checks on, through Docker's resolver.
    expect(section('defaults').find((line) => line.startsWith('default-server '))).toMatch(/\bcheck\b.*\bresolvers docker\b/)
    expect(section('resolvers docker')).toContain('nameserver dns 127.0.0.11:53')
  })

  it('waits for the service longer than a request may take, and retries a refused connection elsewhere', () => {
    const timeout = section('defaults').find((line) => line.startsWith('timeout server '))?.split(' ')[2] ?? ''
    expect(ms(timeout as ms.StringValue)).toBeGreaterThan(config.maxTimeout)
    expect(section('defaults')).toEqual(expect.arrayContaining(['option redispatch 1', 'retry-on conn-failure empty-response']))
  })

  // HAProxy's own parser, when a binary is at hand (HAPROXY_BIN, or haproxy on PATH); the image's 3.0 is not.
  const haproxyBin = process.env.HAPROXY_BIN ?? ['/usr/sbin/haproxy', '/usr/local/sbin/haproxy'].find((file) => existsSync(file))
  it.skipIf(haproxyBin === undefined)('is a configuration HAProxy itself accepts (haproxy -c)', () => {
    const out = execFileSync(haproxyBin ?? 'haproxy', ['-c', '-f', path.join(ROOT, haproxyFile)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
    expect(out).toMatch(/Configuration file is valid/)
  })
})

// ---------------------------------------------------------------- Kubernetes

const K8S = 'deploy/kubernetes'
interface Manifest { apiVersion: string, kind: string, metadata: { name: string, labels?: Record<string, string> }, [field: string]: unknown }

const kustomization = parse(read(`${K8S}/kustomization.yaml`)) as { resources: string[] }
const manifests: Array<{ file: string, doc: Manifest }> = kustomization.resources.flatMap((file) =>
  parseAllDocuments(read(`${K8S}/${file}`)).map((document) => {
    if (document.errors.length > 0) throw new Error(`${file}: ${document.errors[0]?.message ?? ''}`)
    return { file, doc: document.toJS() as Manifest }
  }))
function only<T> (kind: string): T {
  const found = manifests.filter(({ doc }) => doc.kind === kind)
  if (found.length !== 1) throw new Error(`${found.length} ${kind} manifests`)
  return found[0]?.doc as T
}

interface Probe { httpGet: { path: string, port: string | number }, periodSeconds?: number, failureThreshold?: number }
interface Container {
  name: string
  image: string
  ports: Array<{ name: string, containerPort: number }>
  envFrom: Array<{ configMapRef?: { name: string }, secretRef?: { name: string } }>
  env?: Array<{ name: string, value: string }>
  readinessProbe: Probe
  livenessProbe: Probe
  startupProbe?: Probe
  lifecycle: { preStop: { exec?: { command: string[] }, sleep?: { seconds: number } } }
  resources: { requests: { cpu: string, memory: string }, limits: { cpu?: string, memory: string } }
  securityContext: { allowPrivilegeEscalation: boolean, readOnlyRootFilesystem: boolean, capabilities: { drop: string[] } }
  volumeMounts: Array<{ name: string, mountPath: string }>
}
interface DeploymentDoc extends Manifest {
  spec: {
    replicas: number
    selector: { matchLabels: Record<string, string> }
    template: { metadata: { labels: Record<string, string> }, spec: { terminationGracePeriodSeconds: number, securityContext: { runAsNonRoot: boolean, runAsUser: number }, containers: Container[], volumes: Array<{ name: string }> } }
  }
}
interface ServiceDoc extends Manifest { spec: { selector: Record<string, string>, ports: Array<{ name: string, port: number, targetPort: string | number }> } }
interface HpaDoc extends Manifest { spec: { scaleTargetRef: { apiVersion: string, kind: string, name: string }, minReplicas: number, maxReplicas: number, metrics: Array<{ type: string, resource?: { name: string, target: { type: string, averageUtilization: number } } }> } }
interface PdbDoc extends Manifest { spec: { minAvailable: number, selector: { matchLabels: Record<string, string> } } }

/** Kubernetes quantities this file uses: `2`, `500m`, `1Gi`, `512Mi`. */
function quantity (value: string): number {
  const match = /^(\d+(?:\.\d+)?)(m|Ki|Mi|Gi)?$/.exec(value)
  if (match === null) throw new Error(`unsupported quantity ${value}`)
  const unit = { m: 0.001, Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3 }[match[2] ?? ''] ?? 1
  return Number(match[1]) * unit
}

describe('deploy/kubernetes', () => {
  const deployment = only<DeploymentDoc>('Deployment')
  const pod = deployment.spec.template.spec
  const container = pod.containers[0] as Container
  const configMap = only<Manifest & { data: Record<string, string> }>('ConfigMap')
  const secret = only<Manifest & { stringData: Record<string, string> }>('Secret')
  const env = { ...configMap.data, ...secret.stringData, ...Object.fromEntries((container.env ?? []).map((e) => [e.name, e.value])) }
  const config = loadConfig(env)
  const portOf = (port: string | number): number =>
    typeof port === 'number' ? port : container.ports.find((p) => p.name === port)?.containerPort ?? -1

  it('lists every manifest file of the folder in the kustomization, each parsing to the expected kinds', () => {
    const files = readdirSync(path.join(ROOT, K8S)).filter((file) => file.endsWith('.yaml') && file !== 'kustomization.yaml')
    expect([...kustomization.resources].sort()).toEqual(files.sort())
    expect(manifests.map(({ doc }) => doc.kind).sort())
      .toEqual(['ConfigMap', 'Deployment', 'HorizontalPodAutoscaler', 'PodDisruptionBudget', 'Secret', 'Service'])
  })

  it('validates every manifest against the Kubernetes API schemas (kubernetes-models)', () => {
    const models: Record<string, new (data: never) => { validate: () => void }> = {
      'v1/ConfigMap': ConfigMap,
      'v1/Secret': Secret,
      'v1/Service': Service,
      'apps/v1/Deployment': Deployment,
      'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
      'policy/v1/PodDisruptionBudget': PodDisruptionBudget
    }
    for (const { file, doc } of manifests) {
      const Model = models[`${doc.apiVersion}/${doc.kind}`]
      expect(Model, `${file}: ${doc.apiVersion} ${doc.kind}`).toBeDefined()
      expect(() => { new (Model as NonNullable<typeof Model>)(doc as never).validate() }, file).not.toThrow()
    }
    // The validation is real: a port given as text, or a probe without its handler's path type, is refused.
    const broken = structuredClone(deployment)
    ;(broken.spec.template.spec.containers[0] as Container).ports[0] = { name: 'free', containerPort: 'three thousand' as never }
    expect(() => { new Deployment(broken as never).validate() }).toThrow(/containerPort/)
    const noSelector = structuredClone(deployment) as Partial<DeploymentDoc>
    delete (noSelector.spec as Partial<DeploymentDoc['spec']>).selector
    expect(() => { new Deployment(noSelector as never).validate() }).toThrow(/selector/)
  })

  it('takes its environment from the ConfigMap and the Secret, which the service accepts as they are', () => {
    expect(container.envFrom).toEqual([{ configMapRef: { name: configMap.metadata.name } }, { secretRef: { name: secret.metadata.name } }])
    expect(config.apiKeys.length).toBeGreaterThan(0)
    expect(config.redis?.kind).toBe('node')
  })

  it('keeps every secret in the Secret, none in the ConfigMap', () => {
    for (const name of SECRET_NAMES) expect(configMap.data, name).not.toHaveProperty(name)
    for (const name of ['API_KEYS', 'REDIS_URL', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY']) expect(secret.stringData, name).toHaveProperty(name)
    for (const [name, value] of Object.entries(configMap.data)) {
      // No credentials in a URL, and no value of the Secret repeated.
      expect(value, name).not.toMatch(/^[a-z]+:\/\/[^/]*@/i)
      for (const secretValue of Object.values(secret.stringData)) expect(value, name).not.toBe(secretValue)
    }
    // The keys are stored as their SHA-256 (README, Keys).
    for (const key of config.apiKeys) expect(key).toMatch(/^sha256:[0-9a-f]{64}$/)
  })

  it('follows the storage rule: several replicas share Redis, so their files go to S3', () => {
    expect(config.redis).toBeDefined()
    expect(config.s3?.bucket).toBe(configMap.data.S3_BUCKET)
    expect(config.s3?.cdnUrl).toMatch(/^https:\/\//)
  })

  it('exposes the service\'s listeners and probes the routes the service answers there', async () => {
    expect(container.ports.map((p) => [p.name, p.containerPort]))
      .toEqual([['free', config.freePort], ['pro', config.proPort], ['metrics', config.metricsPort]])
    // Readiness: /ready on the pro listener; liveness and start-up: /health.
    expect(container.readinessProbe.httpGet.path).toBe('/ready')
    expect(portOf(container.readinessProbe.httpGet.port)).toBe(config.proPort)
    expect(await answers('pro', container.readinessProbe.httpGet.path)).toBe(200)
    for (const probe of [container.livenessProbe, container.startupProbe]) {
      expect(probe?.httpGet.path).toBe('/health')
      expect(portOf(probe?.httpGet.port ?? -1)).toBe(config.freePort)
      expect(await answers('free', probe?.httpGet.path ?? '')).toBe(200)
    }
  })

  it('has a grace period above the preStop pause plus the drain time computed from MAX_TIMEOUT', () => {
    const command = container.lifecycle.preStop.exec?.command ?? []
    expect(command[0]).toMatch(/(^|\/)sleep$/)
    const preStopMs = Number(command[1]) * 1000
    expect(preStopMs).toBeGreaterThanOrEqual(3000)
    expect(config.maxTimeout).toBe(28_000)
    expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThan(preStopMs + drainMs(env))
    // The readiness probe notices the drain (503) before it ends.
    expect((container.readinessProbe.periodSeconds ?? 10) * (container.readinessProbe.failureThreshold ?? 3) * 1000).toBeLessThan(drainMs(env))
  })

  it('sizes the pod from the measurements: one page per requested CPU, memory above the measured 2-page peak', () => {
    const cpus = quantity(container.resources.requests.cpu)
    expect(config.browserConcurrency).toBe(cpus)
    // docs/operations.md#overload and docs/benchmarks.md: 803-921 MiB peak with 2 pages; up to 1,619 MiB with 4.
    expect(quantity(container.resources.requests.memory)).toBeGreaterThanOrEqual(921 * 1024 ** 2)
    expect(quantity(container.resources.limits.memory)).toBeGreaterThanOrEqual(1619 * 1024 ** 2)
    expect(quantity(container.resources.limits.memory)).toBeGreaterThanOrEqual(quantity(container.resources.requests.memory))
  })

  it('runs as the image\'s unprivileged user, with no capabilities and a read-only root (Chromium runs without its sandbox)', () => {
    const user = /useradd[^\n]*--uid (\d+) pagecast/.exec(read('Dockerfile'))?.[1]
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: Number(user) })
    expect(container.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } })
    // What Chromium writes (profiles in TMPDIR, caches in HOME) lands on writable volumes.
    const mounts = Object.fromEntries(container.volumeMounts.map((m) => [m.mountPath, m.name]))
    expect(mounts[env.TMPDIR ?? '']).toBeDefined()
    expect(mounts[env.HOME ?? '']).toBeDefined()
    for (const name of Object.values(mounts)) expect(pod.volumes.map((v) => v.name)).toContain(name)
  })

  it('selects the Deployment\'s pods from the Service and the PodDisruptionBudget, on both listeners', () => {
    const service = only<ServiceDoc>('Service')
    const labels = deployment.spec.template.metadata.labels
    expect(deployment.spec.selector.matchLabels).toEqual(service.spec.selector)
    for (const [key, value] of Object.entries(service.spec.selector)) expect(labels[key]).toBe(value)
    expect(service.spec.ports.map((p) => [p.port, portOf(p.targetPort)])).toEqual([[config.freePort, config.freePort], [config.proPort, config.proPort]])
    // /metrics stays inside the cluster: the Service does not expose it.
    expect(service.spec.ports.map((p) => p.targetPort)).not.toContain('metrics')
    const pdb = only<PdbDoc>('PodDisruptionBudget')
    expect(pdb.spec.selector.matchLabels).toEqual(deployment.spec.selector.matchLabels)
    expect(pdb.spec.minAvailable).toBeLessThan(only<HpaDoc>('HorizontalPodAutoscaler').spec.minReplicas)
  })

  it('scales the Deployment on CPU with a HorizontalPodAutoscaler, from at least 2 replicas', () => {
    const hpa = only<HpaDoc>('HorizontalPodAutoscaler')
    expect(hpa.apiVersion).toBe('autoscaling/v2')
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: deployment.apiVersion, kind: 'Deployment', name: deployment.metadata.name })
    expect(hpa.spec.minReplicas).toBeGreaterThanOrEqual(2)
    expect(hpa.spec.maxReplicas).toBeGreaterThan(hpa.spec.minReplicas)
    expect(hpa.spec.metrics).toEqual([{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: expect.any(Number) } } }])
    expect(deployment.spec.replicas).toBe(hpa.spec.minReplicas)
  })
})
