// API keys for the pro listener. Entries of API_KEYS are plain keys or `sha256:<hex>` digests, so the
// plain key need not sit in the environment. A presented key is hashed and compared with every
// registered digest in constant time (fixed 32-byte buffers, no early exit). Keys that verified are remembered
// (a few, by their whole string), so a client's next request with the same key costs a map lookup instead of a hash:
// a lookup answers only for the exact string of a registered key, which tells nothing a 200 would not.
import { hash, timingSafeEqual } from 'node:crypto'

/** The 32-byte SHA-256 of the key's UTF-8 bytes, in one call (no Hash object, no hex round trip). */
function digestOf (value: string): Buffer {
  return hash('sha256', value, 'buffer')
}

const MAX_REMEMBERED = 1024

export function createKeyVerifier (entries: readonly string[]): (presented: string | undefined) => boolean {
  const digests = entries.map(entry => entry.startsWith('sha256:')
    ? Buffer.from(entry.slice('sha256:'.length), 'hex')
    : digestOf(entry))
  const verified = new Set<string>()
  return presented => {
    if (presented === undefined || presented === '' || digests.length === 0) return false
    if (verified.has(presented)) return true
    const candidate = digestOf(presented)
    let match = false
    for (const digest of digests) {
      // Bitwise OR keeps the loop free of data-dependent branches.
      match = timingSafeEqual(candidate, digest) || match
    }
    if (match) {
      // Only registered keys get here, so the set stays as small as API_KEYS; the bound is belt and braces.
      if (verified.size >= MAX_REMEMBERED) verified.clear()
      verified.add(presented)
    }
    return match
  }
}
