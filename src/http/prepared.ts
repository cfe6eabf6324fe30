// What is prepared per cache entry (docs/architecture.md#prepared-answers): everything an answer from an entry
// derives from it alone, made the first time an answer needs it and kept with the entry: the headers of the entry
// as strings, its parsed envelope, its JSON body and the text bodies of its embeds (with their `x-markdown-tokens`),
// each body's compressed variants, and the MCP results by call. This is the one place that keeps anything by entry;
// a new prepared answer goes here, as one more member of Prepared.
//
// THE RULE it rests on: an entry object never changes. A changed entry is a new object (parsed from the store,
// written, or computed anew), so what was prepared from one can never answer for another. It is enforced here: the
// entry and its meta are frozen when first prepared, so a later write to either throws (ESM code is strict) instead
// of leaving stale prepared answers behind.
import { brotliCompressSync, gzipSync } from 'node:zlib'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { CacheEntry, Envelope } from '../cache/entries.ts'
import { COMPRESSION, type Encoding } from './compression.ts'
import { pretty } from './timing.ts'

/** The headers of an entry that are the same on every answer from it, as strings. */
export interface EntryHeaders {
  readonly ttl: string
  readonly timestamp: string
  readonly fetchTime: string
}

/** A body sent as it is, with its length in bytes and its compressed forms (made once per encoding). */
export class PreparedBody {
  readonly text: string
  readonly length: number
  /** Headers that depend on the body (`x-markdown-tokens`), in the order they are sent. */
  readonly headers: Readonly<Record<string, string>>
  private readonly variants: Partial<Record<Encoding, Buffer>> = {}

  constructor (text: string, headers: Readonly<Record<string, string>> = {}) {
    this.text = text
    this.length = Buffer.byteLength(text)
    this.headers = headers
  }

  /** Whether @fastify/compress would compress this body in one synchronous call (else it sends or streams it itself). */
  get compressible (): boolean {
    return this.length >= COMPRESSION.threshold && this.length <= COMPRESSION.syncThreshold
  }

  /** The body compressed with `encoding` and @fastify/compress's settings: the same bytes it would send. */
  encoded (encoding: Encoding): Buffer {
    return this.variants[encoding] ??= encoding === 'br' ? brotliCompressSync(this.text, COMPRESSION.brotliOptions) : gzipSync(this.text)
  }
}

interface Prepared {
  readonly headers: EntryHeaders
  envelope?: Envelope
  json?: PreparedBody
  /** Text answers by content type and embed path. */
  readonly texts: Map<string, PreparedBody>
  /** MCP results by call (tool, embed, filter: mcpCallKey). */
  readonly results: Map<string, CallToolResult>
}

const prepared = new WeakMap<CacheEntry, Prepared>()

function of (entry: CacheEntry): Prepared {
  let p = prepared.get(entry)
  if (p === undefined) {
    Object.freeze(entry.meta)
    Object.freeze(entry)
    const { meta } = entry
    p = { headers: { ttl: String(meta.ttl), timestamp: String(meta.createdAt), fetchTime: pretty(meta.fetchTime) }, texts: new Map(), results: new Map() }
    prepared.set(entry, p)
  }
  return p
}

export function entryHeaders (entry: CacheEntry): EntryHeaders {
  return of(entry).headers
}

/** The entry's envelope, parsed once. */
export function preparedEnvelope (entry: CacheEntry): Envelope {
  const p = of(entry)
  return p.envelope ??= JSON.parse(entry.body) as Envelope
}

/** The entry's JSON answer (its body as stored). */
export function preparedJson (entry: CacheEntry): PreparedBody {
  const p = of(entry)
  return p.json ??= new PreparedBody(entry.body)
}

/** The text answer of `value`, the entry's value at `path`, as `type`; `headers` makes its own headers the first time. */
export async function preparedText (
  entry: CacheEntry, path: string, type: string, value: string, headers?: (body: string) => Promise<Record<string, string>>
): Promise<PreparedBody> {
  const p = of(entry)
  const key = `${type}\u0000${path}`
  const known = p.texts.get(key)
  if (known !== undefined) return known
  const body = new PreparedBody(value, headers === undefined ? {} : await headers(value))
  p.texts.set(key, body)
  return body
}

/** The result of an MCP call (its key names the tool, embed and filter) from the entry, made once. */
export function preparedResult (entry: CacheEntry, call: string, make: () => CallToolResult): CallToolResult {
  const results = of(entry).results
  let result = results.get(call)
  if (result === undefined) results.set(call, result = make())
  return result
}
