// Serves test/fixtures/pages on 127.0.0.1:<random port>, plus a few programmable routes, and counts
// every request it receives so tests can assert that something was (not) fetched.
import http from 'node:http'
import { readFile } from 'node:fs/promises'
import path from 'node:path'
import type { AddressInfo } from 'node:net'

export const PAGES_DIR = path.resolve(import.meta.dirname, '../fixtures/pages')

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.json': 'application/json',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.svg': 'image/svg+xml',
  '.txt': 'text/plain; charset=utf-8',
  '.pdf': 'application/pdf',
  '.css': 'text/css',
  '.js': 'text/javascript'
}

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void | Promise<void>

export interface FixtureServer {
  origin: string
  host: string
  port: number
  /** Request count per path (without query). */
  hits: Map<string, number>
  hitsOf (pathname: string): number
  /** Adds or replaces a programmable route. */
  route (pathname: string, handler: Handler): void
  close (): Promise<void>
}

export async function startFixtureServer (): Promise<FixtureServer> {
  const hits = new Map<string, number>()
  const routes = new Map<string, Handler>()
  const server = http.createServer((req, res) => {
    const pathname = new URL(req.url ?? '/', 'http://x').pathname
    hits.set(pathname, (hits.get(pathname) ?? 0) + 1)
    const handler = routes.get(pathname)
    if (handler !== undefined) {
      Promise.resolve(handler(req, res)).catch(() => res.destroy())
      return
    }
    const file = path.join(PAGES_DIR, path.normalize(pathname).replace(/^(\.\.[/\\])+/, ''))
    const target = pathname.endsWith('/') ? path.join(file, 'index.html') : file
    readFile(target).then(body => {
      res.writeHead(200, { 'content-type': TYPES[path.extname(target)] ?? 'application/octet-stream', 'content-length': body.length })
      res.end(req.method === 'HEAD' ? undefined : body)
    }, () => {
      res.writeHead(404, { 'content-type': 'text/html' })
      res.end('<!doctype html><title>Not found</title><h1>Not found</h1>')
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    origin: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    port,
    hits,
    hitsOf: pathname => hits.get(pathname) ?? 0,
    route: (pathname, handler) => { routes.set(pathname, handler) },
    close: () => new Promise(resolve => { server.closeAllConnections(); server.close(() => resolve()) })
  }
}
