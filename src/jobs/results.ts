// A job's documents as stored and as served. A document up to INLINE_BYTES of JSON is kept in the job store itself;
// a larger one (a long page's rawHtml) goes to the storage (src/storage: disk or S3), under a random key, and the job
// store keeps only `{"$ref": key}`: Redis holds counts and small results, never megabytes per page. Served in pages
// of at most `maxBytes` of JSON (10 MiB for the Firecrawl routes), at least one document each.
import { randomBytes } from 'node:crypto'
import { sha256 } from '../util/hash.ts'
import type { Storage } from '../storage/index.ts'
import type { JobStore } from './types.ts'

export const INLINE_BYTES = 256 * 1024
/** Documents read from the store per round trip at most while a page is assembled. */
const READ_CHUNK = 50

/** A document kept on the storage: its key, and its size (so a page is cut without reading it). */
interface Ref { $ref: string, bytes?: number }

function isRef (value: unknown): value is Ref {
  return typeof value === 'object' && value !== null && typeof (value as Ref).$ref === 'string'
}

/** The entry the job store keeps for `document`: its JSON, or a reference to it on the storage. */
export async function storeDocument (storage: Storage, document: Record<string, unknown>, expiresAt: number): Promise<string> {
  return await stashJson(storage, JSON.stringify(document), expiresAt)
}

/**
 * `json` as an entry Redis may hold: itself up to INLINE_BYTES, else a reference to it on the storage (also used for
 * the bodies of pending webhook deliveries, jobs/deliveries.ts). readStashed gives it back.
 */
export async function stashJson (storage: Storage, json: string, expiresAt: number): Promise<string> {
  if (Buffer.byteLength(json) <= INLINE_BYTES) return json
  // A random name (not derived from the job or the URL): the file's URL is public, so it must not be guessable.
  const key = `${sha256(randomBytes(32).toString('hex'))}/document.json`
  const maxAgeSeconds = Math.max(1, Math.ceil((expiresAt - Date.now()) / 1000))
  const body = Buffer.from(json)
  await storage.put(key, body, { contentType: 'application/json', maxAgeSeconds })
  return JSON.stringify({ $ref: key, bytes: body.length })
}

/** The JSON a stashJson entry stands for; undefined when its file is gone from the storage. */
export async function readStashed (storage: Storage, entry: string): Promise<string | undefined> {
  const parsed: unknown = JSON.parse(entry)
  if (!isRef(parsed)) return entry
  const file = await storage.get(parsed.$ref)
  return file?.body.toString('utf8')
}

/** An entry's document and its size in JSON bytes; a reference's file is read only when asked for. */
async function load (storage: Storage, parsed: unknown, entry: string): Promise<{ doc: unknown, bytes: number }> {
  if (!isRef(parsed)) return { doc: parsed, bytes: Buffer.byteLength(entry) }
  const file = await storage.get(parsed.$ref)
  if (file === undefined) return { doc: null, bytes: 4 }
  return { doc: JSON.parse(file.body.toString('utf8')), bytes: file.size }
}

/**
 * Documents from `skip` while they fit in `maxBytes`; `next` when documents remain beyond them. Only the page is read:
 * an entry of the store is at most INLINE_BYTES (a larger document is a reference that carries its size), so each
 * round trip asks for no more entries than can fit in the room left, and a referenced file is read from the storage
 * only when its document is in the page.
 */
export async function readDocuments (store: JobStore, storage: Storage, id: string, skip: number, recorded: number, maxBytes: number): Promise<{ data: unknown[], next?: number }> {
  const data: unknown[] = []
  let bytes = 0
  let at = skip
  while (at < recorded) {
    const room = Math.floor((maxBytes - bytes) / INLINE_BYTES)
    const entries = await store.documents(id, at, Math.max(1, Math.min(READ_CHUNK, room, recorded - at)))
    if (entries.length === 0) break
    for (const entry of entries) {
      const parsed: unknown = JSON.parse(entry)
      // A reference stored before sizes were kept is read to be measured.
      const known = isRef(parsed) ? parsed.bytes : Buffer.byteLength(entry)
      if (known !== undefined && data.length > 0 && bytes + known > maxBytes) return { data, next: at }
      const { doc, bytes: size } = await load(storage, parsed, entry)
      if (data.length > 0 && bytes + size > maxBytes) return { data, next: at }
      data.push(doc)
      bytes += size
      at += 1
    }
  }
  return at < recorded ? { data, next: at } : { data }
}
