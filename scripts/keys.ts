// npm run keys: the operator's tool for tenants (docs/tenants.md).
//
//   npm run keys -- create <tenant>            a new random API key, shown once, and the KEYS_FILE line to add
//   npm run keys -- secret                     a new random signing secret for a tenant's `signing` list
//   npm run keys -- sign <tenant> '<query>' [--expires <unix seconds> | --expires-in <duration>]
//                                              the query signed as a link (docs/api.md §16)
//
// `sign` takes the secret from the environment variable SIGNING_SECRET when it is set, else the tenant's newest
// `signing` secret (the last) in the file named by KEYS_FILE (or --keys-file). Never from an argument: a command
// line is visible to every user of the machine (ps) and lands in shell histories.
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import ms from 'ms'
import { signQuery } from '../src/tenants/signed-links.ts'
import { keyDigest, readTenantFile, TENANT_NAME } from '../src/tenants/directory.ts'

export const SECRET_ENV = 'SIGNING_SECRET'

const USAGE = `usage:
  npm run keys -- create <tenant>
  npm run keys -- secret
  npm run keys -- sign <tenant> '<query>' [--expires <unix seconds> | --expires-in <duration, e.g. 1h or 7d>]
                                          [--keys-file <path>]   (the secret: $${SECRET_ENV}, else KEYS_FILE)
`

export class UsageError extends Error {}

export interface KeysIo {
  env: Readonly<Record<string, string | undefined>>
  out: (text: string) => void
  /** Now, in ms (tests fix it). */
  now?: () => number
}

/** A random key or secret: 32 bytes, base64url (43 characters), with a prefix that tells what it is. */
function randomToken (prefix: string): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`
}

/** The `signing` secrets KEYS_FILE declares for `tenant`, read and checked as the service reads it. */
function fileSecrets (file: string, tenant: string): readonly string[] {
  let declared
  try {
    declared = readTenantFile(file).byName.get(tenant)
  } catch (err) {
    throw new UsageError(`cannot use ${file}: ${(err as Error).message}`)
  }
  if (declared === undefined) throw new UsageError(`${file} declares no tenant named ${JSON.stringify(tenant)}`)
  if (declared.signing.length === 0) throw new UsageError(`the tenant ${JSON.stringify(tenant)} has no \`signing\` secrets in ${file}`)
  return declared.signing
}

function expiryOf (values: { expires?: string, 'expires-in'?: string }, now: number): number | undefined {
  if (values.expires !== undefined && values['expires-in'] !== undefined) throw new UsageError('give --expires or --expires-in, not both')
  if (values.expires !== undefined) {
    if (!/^\d{1,12}$/.test(values.expires)) throw new UsageError('--expires takes unix seconds')
    return Number(values.expires)
  }
  if (values['expires-in'] !== undefined) {
    const span = /^\d+$/.test(values['expires-in']) ? Number(values['expires-in']) * 1000 : ms(values['expires-in'] as ms.StringValue)
    if (typeof span !== 'number' || !Number.isFinite(span) || span <= 0) throw new UsageError('--expires-in takes seconds or a duration such as 1h or 7d')
    return Math.ceil((now + span) / 1000)
  }
  return undefined
}

/** Runs one command; throws UsageError for a bad command line or file. */
export function runKeys (argv: readonly string[], io: KeysIo): void {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: { expires: { type: 'string' }, 'expires-in': { type: 'string' }, 'keys-file': { type: 'string' } }
  })
  const [command, tenant, query, ...rest] = positionals
  if (tenant !== undefined && command !== 'secret' && !TENANT_NAME.test(tenant)) {
    throw new UsageError(`a tenant's name is 1-64 of A-Z a-z 0-9 . _ - (starting with a letter or digit): ${JSON.stringify(tenant)} is not`)
  }
  if (command === 'create' && tenant !== undefined && query === undefined) {
    const key = randomToken('pk_')
    io.out(`New key for ${tenant} (shown once; hand it over now):\n  ${key}\n` +
      `Add this line to tenants.${tenant}.keys in KEYS_FILE (it is read again within 2 s):\n  "sha256:${keyDigest(key)}"\n`)
    return
  }
  if (command === 'secret' && tenant === undefined) {
    io.out(`New signing secret (add it last to the tenant's \`signing\` list; links signed with it verify at once):\n  ${randomToken('ss_')}\n`)
    return
  }
  if (command === 'sign' && tenant !== undefined && query !== undefined && rest.length === 0) {
    const fromEnv = io.env[SECRET_ENV]
    let secret: string
    if (fromEnv !== undefined && fromEnv !== '') {
      secret = fromEnv
    } else {
      const file = values['keys-file'] ?? io.env.KEYS_FILE
      if (file === undefined || file === '') throw new UsageError(`set ${SECRET_ENV}, or KEYS_FILE (or --keys-file) to read the tenant's secret from`)
      secret = fileSecrets(file, tenant).at(-1)!
    }
    io.out(`${signQuery(query, tenant, secret, expiryOf(values, io.now?.() ?? Date.now()))}\n`)
    return
  }
  throw new UsageError(USAGE)
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    runKeys(process.argv.slice(2), { env: process.env, out: (text) => process.stdout.write(text) })
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`)
    process.exitCode = 2
  }
}
