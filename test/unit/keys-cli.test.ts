// npm run keys (scripts/keys.ts): `create` prints a key and the KEYS_FILE line that declares it, `secret` a signing
// secret, `sign` a link under the secret of SIGNING_SECRET or the tenant's newest in KEYS_FILE; bad command lines are
// refused with a message.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { runKeys, UsageError } from '../../scripts/keys.ts'
import { readTenantFile } from '../../src/tenants/directory.ts'
import { signQuery } from '../../src/tenants/signed-links.ts'

const dir = mkdtempSync(path.join(os.tmpdir(), 'pagecast-keys-cli-'))
afterAll(() => { rmSync(dir, { recursive: true, force: true }) })

function run (argv: string[], env: Record<string, string> = {}): string {
  let out = ''
  runKeys(argv, { env, out: (text) => { out += text }, now: () => 1_800_000_000_000 })
  return out
}

describe('npm run keys', () => {
  it('create: a new key each time, and the line that makes it the tenant\'s in KEYS_FILE', () => {
    const out = run(['create', 'acme'])
    const key = /^ {2}(pk_[A-Za-z0-9_-]{43})$/m.exec(out)?.[1]
    const line = /^ {2}("sha256:[0-9a-f]{64}")$/m.exec(out)?.[1]
    expect(key).toBeDefined()
    expect(line).toBeDefined()
    const file = path.join(dir, 'created.json')
    writeFileSync(file, `{"tenants": {"acme": {"keys": [${line!}]}}}`)
    expect([...readTenantFile(file).byDigest.values()].map(t => t.name)).toEqual(['acme'])
    expect(run(['create', 'acme'])).not.toContain(key!)
  })

  it('sign: SIGNING_SECRET first, else the tenant\'s newest secret in KEYS_FILE', () => {
    const file = path.join(dir, 'keys.yaml')
    writeFileSync(file, 'tenants:\n  acme:\n    keys: []\n    signing: ["old-secret-0123456789", "new-secret-0123456789"]\n')
    expect(run(['sign', 'acme', 'url=https%3A%2F%2Fexample.com'], { KEYS_FILE: file })).toBe(`${signQuery('url=https%3A%2F%2Fexample.com', 'acme', 'new-secret-0123456789')}\n`)
    expect(run(['sign', 'acme', 'url=x', '--keys-file', file, '--expires-in', '1h'])).toBe(`${signQuery('url=x', 'acme', 'new-secret-0123456789', 1_800_003_600)}\n`)
    expect(run(['sign', 'acme', 'url=x', '--expires', '1900000000'], { SIGNING_SECRET: 'env', KEYS_FILE: file })).toBe(`${signQuery('url=x', 'acme', 'env', 1_900_000_000)}\n`)
  })

  it('refuses what it cannot do, with a message', () => {
    const file = path.join(dir, 'keys.yaml')
    expect(() => run(['sign', 'acme', 'url=x'])).toThrow(/SIGNING_SECRET/)
    expect(() => run(['sign', 'nobody', 'url=x'], { KEYS_FILE: file })).toThrow(/no tenant named "nobody"/)
    expect(() => run(['sign', 'acme', 'url=x', '--expires', '1', '--expires-in', '1h'], { SIGNING_SECRET: 's' })).toThrow(/not both/)
    expect(() => run(['sign', 'acme', 'url=x', '--expires-in', 'soon'], { SIGNING_SECRET: 's' })).toThrow(/duration/)
    expect(() => run(['create', 'a b'])).toThrow(/tenant's name/)
    expect(() => run(['frobnicate'])).toThrow(UsageError)
  })
})
