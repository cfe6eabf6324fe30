// Plain Chromium for tests and benches that drive a page directly (outside the pool), and serving a
// folder of fixture pages through the loopback fixture server.
import { readFile, readdir } from 'node:fs/promises'
import path from 'node:path'
import { chromium, type Browser } from 'playwright-core'
import { launchCommand } from '../../src/browser/chromium.ts'
import type { FixtureServer } from './fixture-server.ts'

/** The flags a root process on a closed network needs (no sandbox, no dialling out). */
export const RAW_CHROMIUM_ARGS: readonly string[] = [
  '--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run',
  '--disable-quic', '--disable-gpu'
]

/**
 * `poolFeatures`: also without the pool's DISABLED_FEATURES, launched as the pool launches (launchCommand), for a
 * comparison at equal Chromium settings; otherwise Playwright's defaults, as a raw user's browser.
 */
export async function launchTestBrowser (executablePath = '/usr/bin/chromium', options: { poolFeatures?: boolean } = {}): Promise<Browser> {
  if (options.poolFeatures !== true) return await chromium.launch({ executablePath, args: [...RAW_CHROMIUM_ARGS] })
  const env = Object.fromEntries(Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined))
  return await chromium.launch({ ...launchCommand(executablePath, env), args: [...RAW_CHROMIUM_ARGS] })
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
