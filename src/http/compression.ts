// Compression of answers (docs/api.md §6): @fastify/compress's settings and its negotiation, declared once here for
// the plugin (app.ts), which compresses answers that are not prepared, and for the prepared variants of an entry's
// bodies (http/prepared.ts), made once each; test/integration/answers.test.ts holds both to the same bytes.
import { constants as zlib } from 'node:zlib'
import negotiate from '@fastify/accept-negotiator'
import { LRUCache } from 'lru-cache'

export type Encoding = 'br' | 'gzip'

export const COMPRESSION = {
  /** Answers from this many bytes up are compressed for clients that accept br or gzip. */
  threshold: 1024,
  /** Answers up to this size are compressed in one synchronous call; larger ones stream (chunked, no length). */
  syncThreshold: 64 * 1024,
  encodings: ['br', 'gzip'] as Encoding[],
  // Quality 4 keeps brotli close to gzip's speed; the default (11) costs milliseconds per answer.
  brotliOptions: { params: { [zlib.BROTLI_PARAM_QUALITY]: 4 } }
}

// @fastify/compress reads `*` (no preference) and `x-gzip` as gzip before negotiating.
const GZIP_ALIAS = /\*|x-gzip/gu
const negotiated = new LRUCache<string, Encoding | 'none'>({ max: 1000 })

/** The encoding @fastify/compress would choose for this request, or undefined for none (identity, unsupported). */
export function encodingFor (acceptEncoding: string | undefined, noCompression: boolean): Encoding | undefined {
  if (acceptEncoding === undefined || noCompression) return undefined
  let chosen = negotiated.get(acceptEncoding)
  if (chosen === undefined) {
    const value = negotiate(acceptEncoding.toLowerCase().replace(GZIP_ALIAS, 'gzip'), COMPRESSION.encodings) as string | null | undefined
    chosen = value === 'br' || value === 'gzip' ? value : 'none'
    negotiated.set(acceptEncoding, chosen)
  }
  return chosen === 'none' ? undefined : chosen
}
