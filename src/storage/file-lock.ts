// A lock on a storage key that holds across processes and hosts sharing one folder (STORAGE_SCOPE=shared,
// docs/operations.md#storage-rule). It is a directory: mkdir either creates it or fails with EEXIST, in one step, on
// local file systems and on NFS alike (the same primitive as proper-lockfile). A put holds it while it renames the
// body and then the metadata into place, and the sweep while it checks and deletes an expired file, so a sweep on one
// instance never deletes a file another instance has just rewritten. Holders keep it for milliseconds; one older
// than `staleMs` was left by a process that died holding it, and is broken.
import { randomUUID } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { sha256 } from '../util/hash.ts'

export const LOCK_DIR = '.locks'

export interface FileLockOptions {
  /** A lock older than this is a dead holder's and is broken (default 30 s). */
  staleMs?: number
  /** How long to wait for the lock before giving up (default 10 s); 0 tries once. */
  waitMs?: number
}

export class LockBusyError extends Error {
  constructor (key: string) {
    super(`storage key is locked by another process: ${key}`)
    this.name = 'LockBusyError'
  }
}

/** The lock folder of a key under the storage root (keys hold a `/`, so the folder is named by their hash). */
export function lockPathOf (root: string, key: string): string {
  return path.join(root, LOCK_DIR, sha256(key))
}

async function breakIfStale (lock: string, staleMs: number): Promise<void> {
  let mtimeMs: number
  try {
    mtimeMs = (await fs.stat(lock)).mtimeMs
  } catch {
    return // released meanwhile
  }
  if (Date.now() - mtimeMs < staleMs) return
  // Renamed away first, so that of two processes breaking the same stale lock only one succeeds; the other's
  // rename fails and it goes back to mkdir.
  const away = `${lock}.stale-${randomUUID()}`
  try {
    await fs.rename(lock, away)
  } catch {
    return
  }
  await fs.rm(away, { recursive: true, force: true })
}

/** Runs `fn` holding the key's lock; rejects with LockBusyError when the lock is not had within `waitMs`. */
export async function withFileLock<T> (root: string, key: string, fn: () => Promise<T>, options: FileLockOptions = {}): Promise<T> {
  const lock = lockPathOf(root, key)
  const staleMs = options.staleMs ?? 30_000
  const deadline = Date.now() + (options.waitMs ?? 10_000)
  await fs.mkdir(path.dirname(lock), { recursive: true })
  for (let attempt = 0; ; attempt++) {
    try {
      await fs.mkdir(lock)
      break
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err
    }
    await breakIfStale(lock, staleMs)
    if (Date.now() >= deadline) throw new LockBusyError(key)
    // Short, growing, jittered waits: holders keep the lock for a few milliseconds.
    await sleep(Math.min(2 + attempt * 2, 25) * (0.5 + Math.random()))
  }
  try {
    return await fn()
  } finally {
    await fs.rmdir(lock).catch(() => undefined)
  }
}
