// Local file storage under STORAGE_DIR, served by GET /files/<key> (docs/api.md §8, local mode).
//
// Layout under the root (keys never start with a dot, so the dot folders can never be addressed):
//   <key>                 the bytes: `<hash>.<ext>`, or `<hash>/<name>` for named files
//   .meta/<key>.json      content type, max-age, content-disposition and the expiry of the file
//   .tmp/<uuid>           writes in progress; renamed into place, so a reader never sees half a file
//   .locks/<sha256(key)>/ a key's lock across processes (file-lock.ts), held while a put renames its two files into
//                         place and while the sweep deletes an expired file: safe on a folder several instances share
// A periodic sweep deletes files past retention (2 × ttl, plus a margin), stray temp files and bodies
// whose metadata never landed.
import { randomUUID } from 'node:crypto'
import { constants as fsConstants } from 'node:fs'
import fs from 'node:fs/promises'
import path from 'node:path'
import type { Logger } from 'pino'
import { AppError } from '../errors.ts'
import { LOCK_DIR, LockBusyError, withFileLock } from './file-lock.ts'
import { assertPutArgs, contentDispositionOf, isValidFileKey } from './file-keys.ts'
import type { Storage, StoredFile } from './types.ts'

export interface DiskStorageOptions {
  dir: string
  /** Base of the public URLs: `<publicUrl>/files/<key>`. */
  publicUrl: string
  /** How often the retention sweep runs (default 10 minutes); 0 turns the timer off. */
  sweepIntervalMs?: number
  /** Added to 2 × ttl before a file is swept, so a file outlives the cache entry written just after it (default 5 min). */
  retentionMarginMs?: number
  /** Age after which temp files and bodies without metadata count as leftovers of a crash (default 1 h). */
  strayAfterMs?: number
  /** Age after which a key's cross-process lock counts as a dead holder's (default 30 s). */
  lockStaleMs?: number
}

export interface SweepResult {
  /** Files deleted because their retention was over. */
  expired: number
  /** Temp files, metadata without bodies, and bodies without metadata, deleted as leftovers. */
  strays: number
}

export interface DiskStorage extends Storage {
  readonly kind: 'disk'
  /** The absolute root folder. */
  readonly dir: string
  /** Runs one sweep as if the time were `now`; the timer calls it with the real time. */
  sweep (now?: number): Promise<SweepResult>
}

interface Meta {
  v: 1
  contentType: string
  maxAgeSeconds: number
  contentDisposition?: string
  createdAt: number
  expiresAt: number
}

const META_DIR = '.meta'
const TMP_DIR = '.tmp'

function isMissing (err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code
  return code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR'
}

function parseMeta (raw: string): Meta | undefined {
  let value: unknown
  try { value = JSON.parse(raw) } catch { return undefined }
  if (typeof value !== 'object' || value === null) return undefined
  const m = value as Partial<Meta>
  if (m.v !== 1 || typeof m.contentType !== 'string' || typeof m.maxAgeSeconds !== 'number' ||
    typeof m.createdAt !== 'number' || typeof m.expiresAt !== 'number' ||
    (m.contentDisposition !== undefined && typeof m.contentDisposition !== 'string')) return undefined
  return m as Meta
}

export function createDiskStorage (options: DiskStorageOptions, deps: { log: Logger }): DiskStorage {
  const root = path.resolve(options.dir)
  const metaRoot = path.join(root, META_DIR)
  const tmpRoot = path.join(root, TMP_DIR)
  const publicBase = `${options.publicUrl.replace(/\/+$/, '')}/files/`
  const marginMs = options.retentionMarginMs ?? 5 * 60_000
  const strayAfterMs = options.strayAfterMs ?? 60 * 60_000
  const lockStaleMs = options.lockStaleMs ?? 30_000
  const log = deps.log.child({ component: 'storage' })

  // One operation at a time per key inside this process, so a sweep never deletes a file being rewritten.
  const locks = new Map<string, Promise<unknown>>()
  async function withLock<T> (key: string, fn: () => Promise<T>): Promise<T> {
    const previous = locks.get(key) ?? Promise.resolve()
    const run = previous.then(fn, fn)
    const tail = run.catch(() => undefined)
    locks.set(key, tail)
    try {
      return await run
    } finally {
      if (locks.get(key) === tail) locks.delete(key)
    }
  }

  function inside (base: string, relative: string): string {
    const full = path.join(base, relative)
    if (!full.startsWith(base + path.sep)) throw new AppError('EFATAL', { cause: new Error(`file key escapes the storage folder: ${relative}`) })
    return full
  }
  const bodyPath = (key: string): string => inside(root, key)
  const metaPath = (key: string): string => inside(metaRoot, `${key}.json`)

  async function readMeta (key: string): Promise<Meta | undefined> {
    let raw: string
    try {
      raw = await fs.readFile(metaPath(key), 'utf8')
    } catch (err) {
      if (isMissing(err)) return undefined
      throw err
    }
    const meta = parseMeta(raw)
    if (meta === undefined) log.warn({ key }, 'unreadable file metadata, treating the file as missing')
    return meta
  }

  async function unlinkQuiet (file: string): Promise<boolean> {
    try {
      await fs.unlink(file)
      return true
    } catch (err) {
      if (isMissing(err)) return false
      throw err
    }
  }

  /** rename, recreating the target's `<hash>/` folder when a sweep (here or on another instance) removed it meanwhile. */
  async function renameInto (from: string, to: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await fs.rename(from, to)
        return
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt === 3) throw err
        await fs.mkdir(path.dirname(to), { recursive: true })
      }
    }
  }

  async function rmdirQuiet (dir: string): Promise<void> {
    // Only empty `<hash>/` folders go; a folder still holding a file stays.
    await fs.rmdir(dir).catch(() => undefined)
  }

  async function ageOf (file: string, now: number): Promise<number | undefined> {
    try {
      return now - (await fs.stat(file)).mtimeMs
    } catch (err) {
      if (isMissing(err)) return undefined
      throw err
    }
  }

  /** The keys a folder tree holds, from the files directly in it and in its `<hash>/` subfolders. */
  async function listKeys (base: string, suffix: string): Promise<string[]> {
    const keys: string[] = []
    let entries
    try {
      entries = await fs.readdir(base, { withFileTypes: true })
    } catch (err) {
      if (isMissing(err)) return keys
      throw err
    }
    for (const entry of entries) {
      if (entry.name.startsWith('.')) continue
      if (entry.isDirectory()) {
        if (!/^[0-9a-f]{64}$/.test(entry.name)) continue
        const inner = await fs.readdir(path.join(base, entry.name), { withFileTypes: true }).catch(() => [])
        for (const file of inner) {
          if (file.isFile() && file.name.endsWith(suffix)) keys.push(`${entry.name}/${file.name.slice(0, file.name.length - suffix.length)}`)
        }
      } else if (entry.isFile() && entry.name.endsWith(suffix)) {
        keys.push(entry.name.slice(0, entry.name.length - suffix.length))
      }
    }
    return keys.filter(isValidFileKey)
  }

  async function removeFile (key: string): Promise<void> {
    await unlinkQuiet(bodyPath(key))
    await unlinkQuiet(metaPath(key))
    const slash = key.indexOf('/')
    if (slash !== -1) {
      await rmdirQuiet(path.join(root, key.slice(0, slash)))
      await rmdirQuiet(path.join(metaRoot, key.slice(0, slash)))
    }
  }

  async function sweep (now = Date.now()): Promise<SweepResult> {
    const result: SweepResult = { expired: 0, strays: 0 }

    // A key another process holds is being written: it is fresh, so the sweep leaves it (waitMs 0).
    const locked = async (key: string, fn: () => Promise<void>): Promise<void> => {
      await withLock(key, async () => {
        await withFileLock(root, key, fn, { staleMs: lockStaleMs, waitMs: 0 }).catch((err: unknown) => {
          if (!(err instanceof LockBusyError)) throw err
        })
      })
    }

    for (const key of await listKeys(metaRoot, '.json')) {
      await locked(key, async () => {
        const meta = await readMeta(key)
        if (meta !== undefined && meta.expiresAt > now) return
        if (meta === undefined) {
          // Unreadable metadata: only a leftover once it is old, in case a writer is replacing it.
          const age = await ageOf(metaPath(key), now)
          if (age === undefined || age < strayAfterMs) return
          result.strays += 1
        } else {
          result.expired += 1
        }
        await removeFile(key)
      })
    }

    for (const key of await listKeys(root, '')) {
      await locked(key, async () => {
        if ((await ageOf(metaPath(key), now)) !== undefined) return
        const age = await ageOf(bodyPath(key), now)
        if (age === undefined || age < strayAfterMs) return
        result.strays += 1
        await removeFile(key)
      })
    }

    const temps = await fs.readdir(tmpRoot).catch(() => [])
    for (const name of temps) {
      const file = path.join(tmpRoot, name)
      const age = await ageOf(file, now)
      if (age !== undefined && age >= strayAfterMs && await unlinkQuiet(file)) result.strays += 1
    }

    // Locks left by processes that died holding them (a live holder keeps one for milliseconds).
    const lockRoot = path.join(root, LOCK_DIR)
    for (const name of await fs.readdir(lockRoot).catch(() => [])) {
      const lock = path.join(lockRoot, name)
      const age = await ageOf(lock, now)
      if (age === undefined || age < strayAfterMs) continue
      await fs.rm(lock, { recursive: true, force: true })
      result.strays += 1
    }
    return result
  }

  // /ready polls health(): log when the folder becomes unusable, not on every probe.
  let healthy = true
  let sweeping: Promise<unknown> | undefined
  let timer: NodeJS.Timeout | undefined
  const intervalMs = options.sweepIntervalMs ?? 10 * 60_000
  if (intervalMs > 0) {
    timer = setInterval(() => {
      if (sweeping !== undefined) return
      sweeping = sweep()
        .then(r => { if (r.expired + r.strays > 0) log.info(r, 'storage sweep') })
        .catch((err: unknown) => { log.warn({ err }, 'storage sweep failed') })
        .finally(() => { sweeping = undefined })
    }, intervalMs)
    timer.unref()
  }

  return {
    kind: 'disk',
    dir: root,

    async put (key, body, putOptions) {
      assertPutArgs(key, body, putOptions)
      const now = Date.now()
      const meta: Meta = {
        v: 1,
        contentType: putOptions.contentType,
        maxAgeSeconds: putOptions.maxAgeSeconds,
        createdAt: now,
        expiresAt: now + 2 * putOptions.maxAgeSeconds * 1000 + marginMs
      }
      const disposition = contentDispositionOf(key, putOptions.filename)
      if (disposition !== undefined) meta.contentDisposition = disposition

      await withLock(key, async () => {
        const tmpBody = path.join(tmpRoot, randomUUID())
        const tmpMeta = path.join(tmpRoot, randomUUID())
        try {
          await Promise.all([
            fs.mkdir(tmpRoot, { recursive: true }),
            fs.mkdir(path.dirname(bodyPath(key)), { recursive: true }),
            fs.mkdir(path.dirname(metaPath(key)), { recursive: true })
          ])
          await Promise.all([
            fs.writeFile(tmpBody, body, { flag: 'wx' }),
            fs.writeFile(tmpMeta, JSON.stringify(meta), { flag: 'wx' })
          ])
          // The temp files sit in the same folder tree, so each rename is atomic: a reader, in this process or
          // another, sees the old file or the new one, never part of one. Bytes first: once the metadata is in
          // place, the body it describes is too. The cross-process lock keeps another instance's put of the same
          // key from interleaving its renames with these, and its sweep from deleting the file in between.
          await withFileLock(root, key, async () => {
            await renameInto(tmpBody, bodyPath(key))
            await renameInto(tmpMeta, metaPath(key))
          }, { staleMs: lockStaleMs })
        } catch (err) {
          await Promise.all([unlinkQuiet(tmpBody), unlinkQuiet(tmpMeta)]).catch(() => undefined)
          throw err instanceof AppError ? err : new AppError('EFATAL', { cause: err })
        }
      })
      return publicBase + key
    },

    async get (key): Promise<StoredFile | undefined> {
      if (!isValidFileKey(key)) return undefined
      try {
        const meta = await readMeta(key)
        if (meta === undefined) return undefined
        let body: Buffer
        try {
          body = await fs.readFile(bodyPath(key))
        } catch (err) {
          if (isMissing(err)) return undefined
          throw err
        }
        const file: StoredFile = { body, contentType: meta.contentType, size: body.length, maxAgeSeconds: meta.maxAgeSeconds }
        if (meta.contentDisposition !== undefined) file.contentDisposition = meta.contentDisposition
        return file
      } catch (err) {
        throw err instanceof AppError ? err : new AppError('EFATAL', { cause: err })
      }
    },

    urlOf (key) {
      return publicBase + key
    },

    async health () {
      try {
        await fs.mkdir(tmpRoot, { recursive: true })
        await fs.access(root, fsConstants.R_OK | fsConstants.W_OK)
        await fs.access(tmpRoot, fsConstants.R_OK | fsConstants.W_OK)
        if (!healthy) log.info({ dir: root }, 'storage folder is usable again')
        healthy = true
      } catch (err) {
        if (healthy) log.warn({ dir: root, err: { message: (err as Error).message } }, 'storage folder is not usable')
        healthy = false
      }
      return healthy
    },

    sweep,

    async close () {
      if (timer !== undefined) clearInterval(timer)
      await sweeping
      await Promise.allSettled([...locks.values()])
    }
  }
}
