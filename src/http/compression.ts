// Compression of answers (docs/api.md §6): @fastify/compress on the Fastify path, and the same settings and the same
// negotiation for the hit lane (routes/hit-lane.ts), which keeps an entry's compressed bodies once made. Declared
// once here so both paths answer alike; test/integration/hit-lane.test.ts compares them byte for byte.
import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib'
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

const COMPRESS: Readonly<Record<Encoding, (body: Buffer) => Buffer>> = {
  br: body => brotliCompressSync(body, COMPRESSION.brotliOptions),
  gzip: body => gzipSync(body)
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

// Compressed forms by the body they were made from: a body held in process is compressed once per encoding.
const compressed = new WeakMap<{ readonly text: string }, Partial<Record<Encoding, Buffer>>>()

/** The body's text compressed with `encoding`, made once per body object. */
export function compressedBody (body: { readonly text: string }, encoding: Encoding): Buffer {
  let variants = compressed.get(body)
  if (variants === undefined) compressed.set(body, variants = {})
  return variants[encoding] ??= COMPRESS[encoding](Buffer.from(body.text))
}
