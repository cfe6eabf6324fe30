// Reading at most a number of bytes from a stream, shared by the guarded HTTP client (bodies) and the sitemap reader
// (gunzipped files): the stream is pulled one chunk at a time and destroyed at the bound, so a decoder further up the
// chain (which honours backpressure) never inflates more than about one chunk beyond it.
import type { Readable } from 'node:stream'

export interface BoundedBody {
  body: Buffer
  /** The stream had more than the bound. */
  truncated: boolean
}

export interface BoundedReadOptions {
  /** Aborting destroys the stream (the read then rejects). */
  signal?: AbortSignal
  /** A stream that fails (a corrupt gzip member) yields what it gave before the fault instead of rejecting. */
  keepOnError?: boolean
}

export async function readBounded (stream: Readable, maxBytes: number, options: BoundedReadOptions = {}): Promise<BoundedBody> {
  const { signal } = options
  const chunks: Buffer[] = []
  let size = 0
  let truncated = false
  const onAbort = (): void => { stream.destroy(new Error('aborted')) }
  signal?.addEventListener('abort', onAbort, { once: true })
  try {
    for await (const chunk of stream) {
      const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array)
      if (size + buffer.length > maxBytes) {
        chunks.push(buffer.subarray(0, maxBytes - size))
        size = maxBytes
        truncated = true
        break
      }
      chunks.push(buffer)
      size += buffer.length
    }
  } catch (err) {
    if (options.keepOnError !== true || signal?.aborted === true) throw err
  } finally {
    signal?.removeEventListener('abort', onAbort)
    stream.destroy()
  }
  return { body: Buffer.concat(chunks, size), truncated }
}
