// The tenant directory (docs/tenants.md, docs/api.md §16): KEYS_FILE (JSON, or YAML when its name ends in .yaml or
// .yml) and API_KEYS (one tenant `default` with no limits), looked up by the SHA-256 of a presented key in one Map
// (hex digest -> tenant), never by a scan. The file is read again within 2 s of a change: fs.watch on its directory
// (an editor's rename or a Kubernetes ConfigMap's symlink swap included) plus a cheap stat poll as a fallback, with a
// debounce. An invalid file at start throws a ConfigError (startup stops); on reload it is logged, without a key,
// hash or secret, and the previous declarations stay in force.
import { hash } from 'node:crypto'
import { readFileSync, statSync, watch, type FSWatcher } from 'node:fs'
import { basename, dirname } from 'node:path'
import type { Logger } from 'pino'
import { parse as parseYaml } from 'yaml'
import { ConfigError } from '../config.ts'
import { parseDuration } from '../schemas/readers.ts'
import type { Tenant, TenantDirectory, TenantPlan } from './types.ts'

/** The name of the tenant API_KEYS declares. */
export const DEFAULT_TENANT = 'default'
/** A tenant's name: a metric label, a signed link's keyId and part of its counters' keys, so a plain token. */
export const TENANT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/
const HASHED_KEY = /^sha256:[0-9a-f]{64}$/
const PLAN_FIELDS = new Set(['daily', 'monthly', 'concurrency', 'maxTtl', 'deny'])
const TENANT_FIELDS = new Set(['keys', 'plan', 'signing', 'webhookSecret'])

/** The lower-case hex SHA-256 of a key's UTF-8 bytes: the directory's lookup key and the file's `sha256:` form. */
export function keyDigest (key: string): string {
  return hash('sha256', key, 'hex')
}

/** The declarations: tenants by the hex digest of each of their keys, and by name. */
export interface Declarations {
  readonly byDigest: ReadonlyMap<string, Tenant>
  readonly byName: ReadonlyMap<string, Tenant>
}

/** A problem with the file's content; its message names the place (`tenants.acme.plan.daily`), never a value. */
export class TenantFileError extends Error {}

function fail (where: string, what: string): never {
  throw new TenantFileError(`${where} ${what}`)
}

function isObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function count (value: unknown, where: string): number | undefined {
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) fail(where, 'must be a whole number of 1 or more')
  return value
}

function planOf (value: unknown, where: string): TenantPlan {
  if (value === undefined || value === null) return Object.freeze({})
  if (!isObject(value)) fail(where, 'must be an object')
  for (const field of Object.keys(value)) if (!PLAN_FIELDS.has(field)) fail(`${where}.${field}`, `is not a plan field (${[...PLAN_FIELDS].join(', ')})`)
  const plan: { -readonly [K in keyof TenantPlan]: TenantPlan[K] } = {}
  const daily = count(value.daily, `${where}.daily`)
  const monthly = count(value.monthly, `${where}.monthly`)
  const concurrency = count(value.concurrency, `${where}.concurrency`)
  if (daily !== undefined) plan.daily = daily
  if (monthly !== undefined) plan.monthly = monthly
  if (concurrency !== undefined) plan.concurrency = concurrency
  if (value.maxTtl !== undefined && value.maxTtl !== null) {
    const ms = typeof value.maxTtl === 'string' || typeof value.maxTtl === 'number' ? parseDuration(value.maxTtl) : undefined
    if (ms === undefined || ms <= 0) fail(`${where}.maxTtl`, 'must be a duration such as "7d" or a number of milliseconds')
    plan.maxTtl = ms
  }
  if (value.deny !== undefined && value.deny !== null) {
    if (!Array.isArray(value.deny) || value.deny.some(name => typeof name !== 'string' || !/^[A-Za-z][\w-]*(\.[\w-]+)*$/.test(name))) {
      fail(`${where}.deny`, 'must be a list of parameter names (dotted prefixes such as "insights" or "insights.lighthouse")')
    }
    plan.deny = Object.freeze([...value.deny as string[]])
  }
  return Object.freeze(plan)
}

function secrets (value: unknown, where: string): readonly string[] {
  if (value === undefined || value === null) return Object.freeze([])
  if (!Array.isArray(value) || value.some(s => typeof s !== 'string' || s.length < 16)) fail(where, 'must be a list of secrets of 16 characters or more')
  return Object.freeze([...value as string[]])
}

/** Checks one parsed KEYS_FILE document and builds its declarations; throws TenantFileError naming the place. */
export function declarationsOf (document: unknown, apiKeys: readonly string[] = []): Declarations {
  const byDigest = new Map<string, Tenant>()
  const byName = new Map<string, Tenant>()
  const add = (tenant: Tenant, digests: readonly string[], where: string): void => {
    if (byName.has(tenant.name)) fail(where, 'is declared twice (API_KEYS is the tenant "default")')
    byName.set(tenant.name, tenant)
    digests.forEach((digest, i) => {
      if (byDigest.has(digest)) fail(`${where}.keys[${i}]`, 'is a key that another entry declares already (a key belongs to one tenant)')
      byDigest.set(digest, tenant)
    })
  }
  if (apiKeys.length > 0) {
    const digests = apiKeys.map(key => key.startsWith('sha256:') ? key.slice(7).toLowerCase() : keyDigest(key))
    add(Object.freeze({ name: DEFAULT_TENANT, plan: Object.freeze({}), signing: Object.freeze([]) }), digests, 'API_KEYS')
  }
  if (document === undefined) return { byDigest, byName }
  if (!isObject(document) || !isObject(document.tenants)) fail('the file', 'must hold an object {"tenants": {"<name>": {...}}}')
  for (const [name, declared] of Object.entries(document.tenants)) {
    const where = `tenants.${name}`
    if (!TENANT_NAME.test(name)) fail(where, 'has a name that is not 1 to 64 letters, digits, ".", "_" or "-" (starting with a letter or digit)')
    if (!isObject(declared)) fail(where, 'must be an object')
    for (const field of Object.keys(declared)) if (!TENANT_FIELDS.has(field)) fail(`${where}.${field}`, `is not a tenant field (${[...TENANT_FIELDS].join(', ')})`)
    const keys = declared.keys ?? []
    if (!Array.isArray(keys)) fail(`${where}.keys`, 'must be a list of "sha256:<64 lower-case hex digits>"')
    keys.forEach((key, i) => {
      if (typeof key !== 'string' || !HASHED_KEY.test(key)) fail(`${where}.keys[${i}]`, 'must be "sha256:" and the 64 lower-case hex digits of the key\'s SHA-256 (plain keys are not accepted; `npm run keys -- create <tenant>` prints the line)')
    })
    const webhookSecret = declared.webhookSecret
    if (webhookSecret !== undefined && (typeof webhookSecret !== 'string' || webhookSecret === '')) fail(`${where}.webhookSecret`, 'must be a string')
    const tenant: Tenant = Object.freeze({
      name,
      plan: planOf(declared.plan, `${where}.plan`),
      signing: secrets(declared.signing, `${where}.signing`),
      ...(webhookSecret === undefined ? {} : { webhookSecret })
    })
    add(tenant, (keys as string[]).map(key => key.slice('sha256:'.length)), where)
  }
  return { byDigest, byName }
}

/** Reads and checks KEYS_FILE; throws TenantFileError (a parse error keeps its line and column, not the text). */
export function readTenantFile (path: string, apiKeys: readonly string[] = []): Declarations {
  const text = readFileSync(path, 'utf8')
  let document: unknown
  try {
    document = /\.ya?ml$/i.test(path) ? parseYaml(text) : JSON.parse(text)
  } catch (err) {
    // JSON.parse and yaml quote part of the text in some messages: only the position is kept.
    const at = err instanceof Error ? /(line \d+,? column \d+|position \d+)/i.exec(err.message)?.[1] : undefined
    fail('the file', `is not valid ${/\.ya?ml$/i.test(path) ? 'YAML' : 'JSON'}${at === undefined ? '' : ` (at ${at})`}`)
  }
  return declarationsOf(document, apiKeys)
}

export interface TenantDirectoryOptions {
  /** API_KEYS: plain keys or `sha256:<hex>`, the tenant `default`. */
  apiKeys: readonly string[]
  /** KEYS_FILE, when set. */
  keysFile?: string | undefined
  log: Logger
  /** The fallback poll's period (default 1 s); the watch usually sees a change first. */
  pollMs?: number
  /** Called after each reload that took effect (tests wait on it). */
  onReload?: () => void
}

/** Whether the file changed since the last read, by what a stat tells (no read). */
function fingerprint (path: string): string {
  try {
    const s = statSync(path)
    return `${s.mtimeMs}:${s.size}:${s.ino}`
  } catch {
    return 'missing'
  }
}

/**
 * The directory of API_KEYS and KEYS_FILE, kept current. Throws ConfigError (KEYS_FILE) when the file is missing or
 * invalid at start.
 */
export function loadTenantDirectory (options: TenantDirectoryOptions): TenantDirectory {
  const { apiKeys, keysFile, log } = options
  let current: Declarations
  try {
    current = keysFile === undefined ? declarationsOf(undefined, apiKeys) : readTenantFile(keysFile, apiKeys)
  } catch (err) {
    const variable = keysFile === undefined ? 'API_KEYS' : 'KEYS_FILE'
    const message = err instanceof TenantFileError ? err.message : err instanceof Error && 'code' in err ? `could not be read (${String(err.code)})` : 'could not be read'
    throw new ConfigError(variable, message)
  }
  let seen = keysFile === undefined ? '' : fingerprint(keysFile)
  let watcher: FSWatcher | undefined
  let poll: NodeJS.Timeout | undefined
  let debounce: NodeJS.Timeout | undefined

  function reload (): void {
    if (keysFile === undefined) return
    const now = fingerprint(keysFile)
    if (now === seen) return
    seen = now
    try {
      current = readTenantFile(keysFile, apiKeys)
      log.info({ tenants: current.byName.size }, 'KEYS_FILE reloaded')
      options.onReload?.()
    } catch (err) {
      const reason = err instanceof TenantFileError ? err.message : err instanceof Error && 'code' in err ? `could not be read (${String(err.code)})` : 'could not be read'
      log.error({ reason }, 'KEYS_FILE not reloaded: the previous declarations stay in force')
    }
  }
  // Several events come for one save (truncate, write, rename): one read after they settle.
  function soon (): void {
    clearTimeout(debounce)
    debounce = setTimeout(reload, 100)
    debounce.unref()
  }

  if (keysFile !== undefined) {
    const name = basename(keysFile)
    try {
      watcher = watch(dirname(keysFile), { persistent: false }, (_event, changed) => {
        if (changed === null || changed === name || changed.startsWith('..')) soon()
      })
      watcher.on('error', () => { watcher?.close(); watcher = undefined })
    } catch {
      watcher = undefined // the poll alone then
    }
    poll = setInterval(reload, options.pollMs ?? 1000)
    poll.unref()
  }

  return {
    byKey (presented) {
      if (presented === '') return undefined
      return current.byDigest.get(keyDigest(presented))
    },
    byName (name) {
      return current.byName.get(name)
    },
    get size () { return current.byName.size },
    close () {
      watcher?.close()
      clearInterval(poll)
      clearTimeout(debounce)
    }
  }
}
