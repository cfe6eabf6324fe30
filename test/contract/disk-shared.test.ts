// Local storage on a folder that several instances share (STORAGE_SCOPE=shared, docs/operations.md#storage-rule):
// writes of one key from two processes at once, readers in a third, the cross-process lock, and the sweep of one
// instance against another's writes. The processes are real ones (test/helpers/shared-disk-worker.ts) on one folder.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, utimesSync, mkdirSync, existsSync } from 'node:fs'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import pino from 'pino'
import { afterAll, describe, expect, it } from 'vitest'
import { createDiskStorage } from '../../src/storage/disk.ts'
import { LOCK_DIR, LockBusyError, lockPathOf, withFileLock } from '../../src/storage/file-lock.ts'
import { fileKeyOf } from '../../src/storage/index.ts'

const log = pino({ level: 'silent' })
const WORKER = path.resolve(import.meta.dirname, '../helpers/shared-disk-worker.ts')
const tempDirs: string[] = []
function tempDir (): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pagecast-shared-'))
  tempDirs.push(dir)
  return dir
}
afterAll(() => { for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true }) })

interface Worker { child: ChildProcessWithoutNullStreams, done: Promise<void> }

/** Starts a worker process and resolves once it is set up (it then waits for go()). */
async function startWorker (args: string[]): Promise<Worker> {
  const child = spawn(process.execPath, [WORKER, ...args], { stdio: ['pipe', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stderr.on('data', (chunk: Buffer) => { err += chunk.toString() })
  const ready = new Promise<void>((resolve) => {
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      if (out.includes('ready\n')) resolve()
    })
  })
  const done = new Promise<void>((resolve, reject) => {
    child.on('exit', (code) => {
      if (code === 0 && out.includes('done\n')) resolve()
      else reject(new Error(`worker ${args.join(' ')} exited ${String(code)}: ${err}`))
    })
  })
  await Promise.race([ready, done])
  return { child, done }
}

const go = (workers: Worker[]): void => { for (const w of workers) w.child.stdin.write('go\n') }

describe('disk storage on a folder shared by several processes', () => {
  it('two processes rewriting one key: every read is one whole file, and the body and metadata that stay match', async () => {
    const dir = tempDir()
    const key = fileKeyOf('shared', 'screenshot', 'png')
    const size = 256 * 1024
    const rounds = 40
    const workers = await Promise.all([1, 2].map(async (fill) => await startWorker(['put', dir, key, String(fill), String(rounds), String(size)])))
    const reader = createDiskStorage({ dir, publicUrl: 'http://x', sweepIntervalMs: 0 }, { log })
    let finished = false
    const all = Promise.all(workers.map(async (w) => await w.done)).finally(() => { finished = true })
    go(workers)
    let reads = 0
    try {
      while (!finished) {
        const file = await reader.get(key)
        if (file !== undefined) {
          reads += 1
          expect(file.size).toBe(size)
          const fill = file.body[0]
          expect([1, 2]).toContain(fill)
          // Whole: every byte is the same writer's.
          expect(file.body.every((byte) => byte === fill)).toBe(true)
        }
        await sleep(1)
      }
      await all
      expect(reads).toBeGreaterThan(0)
      const last = await reader.get(key)
      const fill = last?.body[0] ?? 0
      expect(last?.maxAgeSeconds, 'the metadata is the same writer\'s as the body').toBe(60 + fill)
      expect(await fs.readdir(path.join(dir, '.tmp'))).toEqual([])
      expect(await fs.readdir(path.join(dir, LOCK_DIR))).toEqual([])
    } finally {
      await reader.close()
      for (const w of workers) w.child.kill()
    }
  }, 60_000)

  it('the key lock excludes across processes: the critical sections of two processes never overlap', async () => {
    const dir = tempDir()
    const journal = path.join(dir, 'journal')
    const key = fileKeyOf('lock', 'pdf', 'pdf')
    const workers = await Promise.all(['a', 'b'].map(async (id) => await startWorker(['lock', dir, key, id, '60', journal])))
    go(workers)
    await Promise.all(workers.map(async (w) => await w.done))
    const lines = readFileSync(journal, 'utf8').trim().split('\n')
    expect(lines).toHaveLength(2 * 2 * 60)
    for (let i = 0; i < lines.length; i += 2) {
      // Each enter is followed by the same process's exit, before anyone else enters.
      expect(lines[i], `line ${i}`).toMatch(/^enter [ab]$/)
      expect(lines[i + 1], `line ${i + 1}`).toBe(lines[i]?.replace('enter', 'exit'))
    }
    // Both ran (the journal is not one process after the other by accident of timing: they started together).
    expect(new Set(lines.map((line) => line.slice(-1)))).toEqual(new Set(['a', 'b']))
  }, 60_000)

  it('a put waits for a lock held by another instance, and breaks a lock left by a dead one', async () => {
    const dir = tempDir()
    const storage = createDiskStorage({ dir, publicUrl: 'http://x', sweepIntervalMs: 0, lockStaleMs: 5_000 }, { log })
    const key = fileKeyOf('wait', 'screenshot', 'png')
    try {
      let released = 0
      let putDone = 0
      // Another instance (its own in-process locks) holds the key's lock for 300 ms.
      const holder = withFileLock(dir, key, async () => { await sleep(300); released = Date.now() })
      await sleep(20)
      await storage.put(key, Buffer.from('after'), { contentType: 'image/png', maxAgeSeconds: 60 })
      putDone = Date.now()
      await holder
      expect(putDone).toBeGreaterThanOrEqual(released)

      // A lock whose holder died long ago (its folder is older than lockStaleMs) does not block a put.
      const lock = lockPathOf(dir, key)
      mkdirSync(lock)
      const old = new Date(Date.now() - 60_000)
      utimesSync(lock, old, old)
      const started = Date.now()
      await storage.put(key, Buffer.from('again'), { contentType: 'image/png', maxAgeSeconds: 60 })
      expect(Date.now() - started).toBeLessThan(2_000)
      expect((await storage.get(key))?.body.toString()).toBe('again')
      expect(existsSync(lock)).toBe(false)

      // A fresh lock that is never released makes the lock give up after its wait, naming the key.
      mkdirSync(lock)
      await expect(withFileLock(dir, key, async () => undefined, { waitMs: 100 })).rejects.toBeInstanceOf(LockBusyError)
    } finally {
      await storage.close()
    }
  })

  it('the sweep of one instance leaves a key another instance is writing, and sweeps it once free', async () => {
    const dir = tempDir()
    const margin = 1_000
    const a = createDiskStorage({ dir, publicUrl: 'http://x', sweepIntervalMs: 0, retentionMarginMs: margin }, { log })
    const b = createDiskStorage({ dir, publicUrl: 'http://x', sweepIntervalMs: 0, retentionMarginMs: margin }, { log })
    const key = fileKeyOf('sweep-shared', 'screenshot', 'png')
    try {
      await a.put(key, Buffer.from('x'), { contentType: 'image/png', maxAgeSeconds: 1 })
      const later = Date.now() + 10_000
      // b holds the key (as its put does while renaming): a's sweep must not delete under it.
      let swept: Awaited<ReturnType<typeof a.sweep>> | undefined
      await withFileLock(dir, key, async () => { swept = await a.sweep(later) })
      expect(swept).toEqual({ expired: 0, strays: 0 })
      expect(await b.get(key)).toBeDefined()
      expect(await a.sweep(later)).toEqual({ expired: 1, strays: 0 })
      expect(await b.get(key)).toBeUndefined()
    } finally {
      await a.close()
      await b.close()
    }
  })

  it('sweeps lock folders left by processes that died holding them, once they are old', async () => {
    const dir = tempDir()
    const storage = createDiskStorage({ dir, publicUrl: 'http://x', sweepIntervalMs: 0, strayAfterMs: 60_000 }, { log })
    try {
      const lock = lockPathOf(dir, fileKeyOf('dead', 'pdf', 'pdf'))
      mkdirSync(lock, { recursive: true })
      expect(await storage.sweep(Date.now())).toEqual({ expired: 0, strays: 0 })
      expect(existsSync(lock)).toBe(true)
      expect(await storage.sweep(Date.now() + 120_000)).toEqual({ expired: 0, strays: 1 })
      expect(existsSync(lock)).toBe(false)
    } finally {
      await storage.close()
    }
  })
})
