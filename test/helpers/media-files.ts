// Routes for the media tests on the fixture server: the committed files of test/fixtures/media/files served with
// byte ranges (or without, on request), a virtual file of any size whose bytes are computed, and an endless
// stream. Each route counts the bytes it sent, so tests can assert that a read stayed bounded.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import type http from 'node:http'
import type { FixtureServer } from './fixture-server.ts'

export const MEDIA_DIR = path.resolve(import.meta.dirname, '../fixtures/media/files')

export const MEDIA_TYPES: Record<string, string> = {
  '.mp4': 'video/mp4',
  '.webm': 'video/webm',
  '.ogv': 'video/ogg',
  '.mp3': 'audio/mpeg',
  '.m4a': 'audio/mp4',
  '.ogg': 'audio/ogg',
  '.opus': 'audio/ogg',
  '.wav': 'audio/wav',
  '.flac': 'audio/flac',
  '.png': 'image/png',
  '.jpg': 'image/jpeg'
}

export function mediaFile (name: string): Buffer {
  return readFileSync(path.join(MEDIA_DIR, name))
}

export interface ServedFile {
  /** Bytes sent on this route so far. */
  sent: number
  /** Range headers received, in order ('' for none). */
  ranges: string[]
}

export interface ServeOptions {
  contentType?: string
  /** Answer every request with the whole body and a 200, as a server without range support does. */
  ignoreRanges?: boolean
}

/** A file of `size` bytes whose bytes at [start, end) are `read(start, end)`, served with ranges. */
export function serveVirtual (fx: FixtureServer, pathname: string, size: number, read: (start: number, end: number) => Buffer, options: ServeOptions = {}): ServedFile {
  const served: ServedFile = { sent: 0, ranges: [] }
  const contentType = options.contentType ?? MEDIA_TYPES[path.extname(pathname)] ?? 'application/octet-stream'
  fx.route(pathname, (req: http.IncomingMessage, res: http.ServerResponse) => {
    served.ranges.push(req.headers.range ?? '')
    const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '')
    let start = 0
    let end = size
    if (range !== null && options.ignoreRanges !== true && Number(range[1]) < size) {
      start = Number(range[1])
      end = Math.min(range[2] === '' ? size : Number(range[2]) + 1, size)
      res.writeHead(206, { 'content-type': contentType, 'content-range': `bytes ${start}-${end - 1}/${size}`, 'content-length': end - start, 'accept-ranges': 'bytes' })
    } else {
      res.writeHead(200, { 'content-type': contentType, 'content-length': size })
    }
    // Written in chunks with backpressure, so a client that stops reading stops the sending.
    const CHUNK = 16 * 1024
    let at = start
    const pump = (): void => {
      while (at < end) {
        const chunk = read(at, Math.min(at + CHUNK, end))
        at += chunk.length
        served.sent += chunk.length
        if (!res.write(chunk)) {
          res.once('drain', pump)
          return
        }
      }
      res.end()
    }
    res.on('close', () => { at = end })
    pump()
  })
  return served
}

/** A committed fixture file served at `pathname`. */
export function serveFile (fx: FixtureServer, pathname: string, name: string, options: ServeOptions = {}): ServedFile {
  const body = mediaFile(name)
  const contentType = options.contentType ?? MEDIA_TYPES[path.extname(name)] ?? 'application/octet-stream'
  return serveVirtual(fx, pathname, body.length, (start, end) => body.subarray(start, end), { ...options, contentType })
}

/** A body that never ends (no content-length, ranges ignored): `head`, then zeros for as long as it is read. */
export function serveEndless (fx: FixtureServer, pathname: string, head: Buffer, contentType: string): ServedFile {
  const served: ServedFile = { sent: 0, ranges: [] }
  fx.route(pathname, (req, res) => {
    served.ranges.push(req.headers.range ?? '')
    res.writeHead(200, { 'content-type': contentType })
    let closed = false
    res.on('close', () => { closed = true })
    const zeros = Buffer.alloc(16 * 1024)
    served.sent += head.length
    res.write(head)
    const pump = (): void => {
      while (!closed) {
        served.sent += zeros.length
        if (!res.write(zeros)) {
          res.once('drain', pump)
          return
        }
      }
    }
    pump()
  })
  return served
}

/** A page on the fixture server made of the given head and body HTML. */
export function servePage (fx: FixtureServer, pathname: string, head: string, body = ''): string {
  fx.route(pathname, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    res.end(`<!doctype html><html><head><meta charset="utf-8"><title>Media page</title>${head}</head><body><p>A page with media.</p>${body}</body></html>`)
  })
  return `${fx.origin}${pathname}`
}
