// Content digests, decided once: SHA-256 over the UTF-8 bytes of a string, in hex.
import { createHash } from 'node:crypto'

/** The hex SHA-256 of `value`'s UTF-8 bytes. */
export function sha256 (value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex')
}
