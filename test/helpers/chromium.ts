// Plain Chromium for tests and benches that drive a page directly (outside the pool), and serving a
// folder of fixture pages through the loopback fixture server.
import { readFile, readdir } from 'node:fs/promises'
import path from 'node:path'
import { chromium, type Browser } from 'playwright-core'
import type { FixtureServer } from './fixture-server.ts'

/** The flags a root process on a closed network needs (no sandbox, no dialling out). */
export const RAW_CHROMIUM_ARGS: readonly string[] = [
  '--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run',
  '--disable-quic', '--disable-gpu'
]

export async function launchTestBrowser (executablePath = '/usr/bin/chromium'): Promise<Browser> {
  return await chromium.launch({ executablePath, args: [...RAW_CHROMIUM_ARGS] })
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript'
}

/** Adds a route `/<name>` for every file of `dir` (not recursive). */
export async function servePages (server: FixtureServer, dir: string): Promise<void> {
  for (const name of await readdir(dir)) {
    server.route(`/${name}`, async (_req, res) => {
      const body = await readFile(path.join(dir, name))
      res.writeHead(200, { 'content-type': TYPES[path.extname(name)] ?? 'application/octet-stream' })
      res.end(body)
    })
  }
}
