// API keys for the pro listener. Entries of API_KEYS are plain keys or `sha256:<hex>` digests, so the
// plain key need not sit in the environment. A presented key is hashed and compared with every
// registered digest in constant time (fixed 32-byte buffers, no early exit).
import { timingSafeEqual } from 'node:crypto'
import { sha256 } from '../util/hash.ts'

function digestOf (value: string): Buffer {
  return Buffer.from(sha256(value), 'hex')
}

export function createKeyVerifier (entries: readonly string[]): (presented: string | undefined) => boolean {
  const digests = entries.map(entry => entry.startsWith('sha256:')
    ? Buffer.from(entry.slice('sha256:'.length), 'hex')
    : digestOf(entry))
  return presented => {
    if (presented === undefined || presented === '' || digests.length === 0) return false
    const candidate = digestOf(presented)
    let match = false
    for (const digest of digests) {
      // Bitwise OR keeps the loop free of data-dependent branches.
      match = timingSafeEqual(candidate, digest) || match
    }
    return match
  }
}
