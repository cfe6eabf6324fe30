// Shaping a served result into the HTTP answer: cache and timing headers, `filter`, and `embed` (docs/api.md §5, §6).
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { HttpClient } from '../net/types.ts'
import type { Envelope, Served } from '../cache/entries.ts'
import type { ReplyOptions } from '../schemas/option-groups.ts'
import type { ExtractOptions } from '../schemas/options.ts'
import type { Plan } from '../config.ts'
import { secondsLeft } from '../cache/entries.ts'
import { AppError } from '../errors.ts'
import { SANDBOX_HEADERS } from './security-headers.ts'
import { encodingFor } from './compression.ts'
import { entryHeaders, preparedEnvelope, preparedJson, preparedText, type PreparedBody } from './prepared.ts'
import type { Storage, StoredFile } from '../storage/index.ts'

/** Assets fetched for an embed are capped at 50 MiB (docs/api.md §5). */
const MAX_EMBED_BYTES = 50 * 1024 * 1024

export const JSON_TYPE = 'application/json; charset=utf-8'
const TEXT_TYPE = 'text/plain; charset=utf-8'

declare module 'fastify' {
  interface FastifyReply {
    /** The prepared body this reply sends (sendPrepared), whose compressed variant preparedPayload picks. */
    prepared: PreparedBody | undefined
  }
}

/** Sends a prepared body as `type`, with its own headers; preparedPayload (the onSend hook) sends its variant. */
function sendPrepared (reply: FastifyReply, body: PreparedBody, type: string): FastifyReply {
  for (const name in body.headers) reply.header(name, body.headers[name]!)
  reply.prepared = body
  return reply.type(type).send(body.text)
}

/**
 * The payload of a reply that sends a prepared body (onSend, before @fastify/compress's): its prepared variant for
 * the encoding @fastify/compress would choose, with the headers that plugin sets in the same order (`vary` added to,
 * `content-encoding`); the plugin leaves an answer with a `content-encoding` alone. Anything else goes on unchanged,
 * for the plugin to compress as before. HEAD answers too (they carry no body).
 */
export function preparedPayload (request: FastifyRequest, reply: FastifyReply, payload: unknown): unknown {
  const body = reply.prepared
  if (body === undefined || !body.compressible || request.method !== 'GET') return payload
  const encoding = encodingFor(request.headers['accept-encoding'], request.headers['x-no-compression'] !== undefined)
  if (encoding === undefined) return payload
  const vary = reply.getHeader('vary')
  reply.header('vary', vary === undefined ? 'accept-encoding' : `${String(vary)}, accept-encoding`)
  reply.header('content-encoding', encoding)
  return body.encoded(encoding)
}

/**
 * Who may keep an answer (docs/api.md §6): any cache (`public`), or only the caller's own (`private`, with
 * `Vary: x-api-key`): answers of the pro listener, and any computed with forwarded headers or a proxy.
 */
export type Audience = 'public' | 'private'

export function audienceOf (plan: Plan, options: Readonly<Pick<ExtractOptions, 'headers' | 'proxy'>>): Audience {
  if (plan === 'pro' || options.proxy !== undefined) return 'private'
  for (const _name in options.headers) return 'private'
  return 'public'
}

/**
 * cache-control of an answer from the entry: HIT and MISS may be kept for what is left of the entry's ttl; an
 * incomplete one (never stored, docs/api.md §7) by nobody.
 */
export function cacheControlOf (served: Pick<Served, 'entry' | 'status'>, now: number, audience: Audience): string {
  if (served.entry.meta.incomplete !== undefined) return 'no-store'
  return served.status === 'HIT' || served.status === 'MISS'
    ? `${audience}, immutable, max-age=${secondsLeft(served.entry.meta, now)}`
    : `${audience}, must-revalidate, max-age=0`
}

/** The cache headers of an answer from the entry, in the order they are sent: name, value, name, value, ... */
export function cacheHeaderPairs (served: Pick<Served, 'entry' | 'status'>, now: number, audience: Audience): string[] {
  const { meta } = served.entry
  const prepared = entryHeaders(served.entry)
  const pairs = [
    'x-cache-status', served.status,
    'x-cache-ttl', prepared.ttl,
    'x-timestamp', prepared.timestamp,
    'cache-control', cacheControlOf(served, now, audience),
    'x-fetch-mode', meta.fetchMode,
    'x-fetch-time', prepared.fetchTime
  ]
  // A shared cache in front keeps one copy per key (compression adds `accept-encoding` to this value).
  if (audience === 'private') pairs.push('vary', 'x-api-key')
  return pairs
}

export function setCacheHeaders (reply: FastifyReply, served: Served, now: number, audience: Audience): void {
  const pairs = cacheHeaderPairs(served, now, audience)
  for (let i = 0; i < pairs.length; i += 2) reply.header(pairs[i]!, pairs[i + 1]!)
}

const UNSAFE_SEGMENTS = new Set(['__proto__', 'constructor', 'prototype'])

/** The value at a dot path (own properties only), or undefined. */
export function getPath (root: unknown, path: string): unknown {
  let node: unknown = root
  for (const segment of path.split('.')) {
    if (segment === '' || UNSAFE_SEGMENTS.has(segment)) return undefined
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, segment)) return undefined
    node = (node as Record<string, unknown>)[segment]
  }
  return node
}

/** Keeps only the listed dot paths of data, nested as they were; unknown paths are ignored. */
export function applyFilter (data: Record<string, unknown>, paths: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const path of paths) {
    const value = getPath(data, path)
    if (value === undefined) continue
    const segments = path.split('.')
    let node = out
    segments.forEach((segment, i) => {
      if (i === segments.length - 1) {
        node[segment] = value
      } else {
        const next = node[segment]
        if (next === null || typeof next !== 'object' || Array.isArray(next)) node[segment] = {}
        node = node[segment] as Record<string, unknown>
      }
    })
  }
  return out
}

/** The envelope: the computation's own object when it ran in this process, else the entry's, parsed once. */
export function envelopeOf (served: Pick<Served, 'entry' | 'fresh'>): Envelope {
  return served.fresh !== undefined ? served.fresh.envelope : preparedEnvelope(served.entry)
}

function isMediaObject (value: unknown): value is { url: string, type: unknown } {
  return value !== null && typeof value === 'object' && typeof (value as { url?: unknown }).url === 'string' && 'type' in value
}

/** What answering needs besides the served result: storage for generated files, the guarded client for page assets. */
export interface ReplyDeps {
  storage: Pick<Storage, 'get'>
  http: Pick<HttpClient, 'fetchPage'>
}

/** How an embedded text value is answered instead of `text/plain` (the content endpoints, docs/api.md §14). */
export interface TextAnswer {
  type: string
  /** Headers that depend on the body (`x-markdown-tokens`). */
  headers?: (body: string) => Promise<Record<string, string>>
}

/** Sends the served result as JSON, filtered, or embedded. */
export async function sendServed (
  deps: ReplyDeps,
  reply: FastifyReply,
  served: Served,
  options: Readonly<Pick<ReplyOptions, 'embed' | 'filter'>>,
  signal: AbortSignal,
  text?: TextAnswer
): Promise<FastifyReply> {
  if (options.embed !== undefined) return await sendEmbed(deps, reply, served, options.embed, signal, text)
  reply.type(JSON_TYPE)
  if (options.filter !== undefined) {
    const envelope = envelopeOf(served)
    return reply.send(JSON.stringify({ ...envelope, data: applyFilter(envelope.data, options.filter) }))
  }
  return sendPrepared(reply, preparedJson(served.entry), JSON_TYPE)
}

async function sendEmbed (
  deps: ReplyDeps, reply: FastifyReply, served: Served, path: string, signal: AbortSignal, text: TextAnswer | undefined
): Promise<FastifyReply> {
  const { data } = envelopeOf(served)
  const value = getPath(data, path)
  // Every embed answer, whatever its content.
  reply.headers(SANDBOX_HEADERS)
  if (value === undefined || value === null) {
    throw new AppError('ENOTFOUND', { data: { embed: `The \`${path}\` field has no value.` } })
  }
  const segments = path.split('.')
  const parentPath = segments.slice(0, -1).join('.')
  const parent = segments.length > 1 ? getPath(data, parentPath) : undefined
  if (segments.at(-1) === 'url' && isMediaObject(parent) && typeof value === 'string') {
    // Generated files are the ones the computation recorded; any other media URL is a page asset.
    const fileKey = Object.hasOwn(served.entry.meta.files, parentPath) ? served.entry.meta.files[parentPath] : undefined
    if (fileKey !== undefined) {
      const inHand = served.fresh?.files[parentPath]
      return await sendStoredFile(deps, reply, inHand ?? fileKey, path)
    }
    return await sendAsset(deps, reply, value, path, signal)
  }
  if (typeof value === 'object') {
    return reply.type(JSON_TYPE).send(JSON.stringify(value))
  }
  // A text value: prepared once per entry, path and type (its x-markdown-tokens counted then).
  const body = await preparedText(served.entry, path, text?.type ?? TEXT_TYPE, String(value), text?.headers)
  return sendPrepared(reply, body, text?.type ?? TEXT_TYPE)
}

/** Answers with a generated file's bytes: those in hand, or read from storage by key (never a redirect). */
async function sendStoredFile (deps: ReplyDeps, reply: FastifyReply, source: StoredFile | string, path: string): Promise<FastifyReply> {
  const file = typeof source === 'string' ? await deps.storage.get(source) : source
  if (file === undefined) throw new AppError('ENOTFOUND', { data: { embed: `The \`${path}\` file is no longer in storage; request it again with force.` } })
  reply.type(file.contentType).header('content-length', file.size)
  if (file.contentDisposition !== undefined) reply.header('content-disposition', file.contentDisposition)
  return reply.send(file.body)
}

/** Streams a page asset's bytes from its origin, under the address guard, without forwarded headers. */
async function sendAsset (deps: ReplyDeps, reply: FastifyReply, url: string, path: string, signal: AbortSignal): Promise<FastifyReply> {
  if (url.startsWith('data:')) {
    const match = /^data:([^;,]+)?((?:;[^;,]+)*?)(;base64)?,(.*)$/s.exec(url)
    if (match === null) throw new AppError('ENOTFOUND', { data: { embed: `The \`${path}\` asset could not be read.` } })
    const body = match[3] !== undefined ? Buffer.from(match[4] ?? '', 'base64') : Buffer.from(decodeURIComponent(match[4] ?? ''))
    return reply.type(match[1] ?? 'application/octet-stream').header('content-length', body.length).send(body)
  }
  let asset
  try {
    asset = await deps.http.fetchPage(url, { signal, maxBytes: MAX_EMBED_BYTES + 1 })
  } catch (err) {
    if (err instanceof AppError && (err.code === 'ETIMEOUT')) throw err
    throw new AppError('ENOTFOUND', { data: { embed: `The \`${path}\` asset could not be fetched.` }, cause: err })
  }
  if (asset.statusCode >= 400) {
    throw new AppError('ENOTFOUND', { data: { embed: `The \`${path}\` asset answered with status ${asset.statusCode}.` } })
  }
  if (asset.truncated || asset.body.length > MAX_EMBED_BYTES) {
    throw new AppError('ENOTFOUND', { data: { embed: `The \`${path}\` asset is larger than 50 MiB.` } })
  }
  const type = asset.headers['content-type'] ?? 'application/octet-stream'
  return reply.type(type).header('content-length', asset.body.length).send(asset.body)
}
