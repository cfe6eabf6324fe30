// Builds the real app (both listeners) over a real context, for inject-driven tests.
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { Writable } from 'node:stream'
import type { FastifyInstance } from 'fastify'
import { loadConfig, type Config } from '../../src/config.ts'
import { createLogger } from '../../src/logger.ts'
import { closeContext, createContext, type AppContext, type ContextOverrides } from '../../src/context.ts'
import { buildApp } from '../../src/app.ts'

export interface Built {
  ctx: AppContext
  free: FastifyInstance
  pro: FastifyInstance
  config: Readonly<Config>
  /** Every log line written, parsed. */
  logs: Array<Record<string, unknown>>
  /** Every log line written, raw. */
  rawLogs: string[]
  close (): Promise<void>
}

export async function build (env: Record<string, string> = {}, overrides: ContextOverrides = {}): Promise<Built> {
  const storageDir = mkdtempSync(path.join(os.tmpdir(), 'pagecast-files-'))
  // Each built app is one instance with its own temporary folder: STORAGE_SCOPE=instance says so, which the storage
  // rule requires when a test gives Redis and no S3 (docs/operations.md#storage-rule). A test may override it.
  const config = loadConfig({ LOG_LEVEL: 'debug', STORAGE_DIR: storageDir, STORAGE_SCOPE: 'instance', ...env })
  const rawLogs: string[] = []
  const logs: Array<Record<string, unknown>> = []
  const destination = new Writable({
    write (chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line === '') continue
        rawLogs.push(line)
        try { logs.push(JSON.parse(line) as Record<string, unknown>) } catch {}
      }
      cb()
    }
  })
  const log = createLogger({ level: config.logLevel, destination })
  const ctx = await createContext(config, log, overrides)
  const free = await buildApp(ctx, { plan: 'free' })
  const pro = await buildApp(ctx, { plan: 'pro' })
  await Promise.all([free.ready(), pro.ready()])
  return {
    ctx,
    free,
    pro,
    config,
    logs,
    rawLogs,
    async close () {
      await Promise.all([free.close(), pro.close()])
      await closeContext(ctx)
      rmSync(storageDir, { recursive: true, force: true })
    }
  }
}

/** A query string from an object, values URI-encoded. */
export function qs (params: Record<string, string | number | boolean>): string {
  return Object.entries(params).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`).join('&')
}
