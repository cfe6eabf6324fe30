// The service's version: package.json's, read once (docs/operations.md, `pagecast_build_info`).
import { readFileSync } from 'node:fs'

let version: string | undefined

export function serviceVersion (): string {
  if (version === undefined) {
    const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: unknown }
    version = typeof manifest.version === 'string' ? manifest.version : 'unknown'
  }
  return version
}
