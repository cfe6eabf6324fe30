// Content digests, decided once: SHA-256 over the UTF-8 bytes of a string, in hex.
import { hash } from 'node:crypto'

/** The hex SHA-256 of `value`'s UTF-8 bytes (one-shot: no Hash object per digest). */
export function sha256 (value: string): string {
  return hash('sha256', value, 'hex')
}
