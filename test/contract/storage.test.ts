import { createHash, randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { Readable, Writable } from 'node:stream'
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3'
import pino from 'pino'
import { afterAll, describe, expect, inject, it, vi } from 'vitest'
import { loadConfig } from '../../src/config.ts'
import { createDiskStorage } from '../../src/storage/disk.ts'
import { createStorage, fileKeyOf, isValidFileKey } from '../../src/storage/index.ts'
import { createS3Storage, toS3ClientConfig, type S3StorageOptions } from '../../src/storage/s3.ts'
import { storageContract } from './storage.contract.ts'
import { freePort } from '../setup/global-setup.ts'

const log = pino({ level: 'silent' })
const tempDirs: string[] = []
function tempDir (): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pagecast-storage-'))
  tempDirs.push(dir)
  return dir
}
afterAll(() => { for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true }) })

function s3Options (overrides: Partial<S3StorageOptions> = {}): S3StorageOptions {
  const s3 = inject('s3')
  return {
    bucket: s3.bucket,
    endpoint: s3.endpoint,
    region: 'us-east-1',
    accessKeyId: s3.accessKeyId,
    secretAccessKey: s3.secretAccessKey,
    forcePathStyle: true,
    // s3rver serves objects path-style, so the bucket URL stands in for the CDN.
    cdnUrl: `${s3.endpoint}/${s3.bucket}`,
    ...overrides
  }
}

const sha = (buf: Buffer): string => createHash('sha256').update(buf).digest('hex')

storageContract('disk', async () => ({
  storage: createDiskStorage({ dir: path.join(tempDir(), 'not', 'yet', 'there'), publicUrl: 'http://files.test:3000/' }, { log }),
  publicBase: 'http://files.test:3000/files'
}))

// s3rver rewrites objects in place (real S3 replaces them in one step), so the atomicity check is off.
storageContract('s3 (s3rver)', async () => ({
  storage: createS3Storage(s3Options(), { log }),
  publicBase: `${inject('s3').endpoint}/${inject('s3').bucket}`
}), { atomicOverwrite: false })

describe('file keys', () => {
  const cacheKey = 'a'.repeat(64)

  it('hashes the cache key with the kind, and keeps the extension or the name', () => {
    const hash = createHash('sha256').update(`${cacheKey}:screenshot`).digest('hex')
    expect(fileKeyOf(cacheKey, 'screenshot', 'png')).toBe(`${hash}.png`)
    expect(fileKeyOf(cacheKey, 'screenshot', 'png', 'home.png')).toBe(`${hash}/home.png`)
    expect(fileKeyOf(cacheKey, 'pdf', 'pdf')).toBe(`${createHash('sha256').update(`${cacheKey}:pdf`).digest('hex')}.pdf`)
    // Deterministic, and distinct per kind and per cache key.
    expect(fileKeyOf(cacheKey, 'screenshot', 'webp')).toBe(fileKeyOf(cacheKey, 'screenshot', 'webp'))
    expect(fileKeyOf(cacheKey, 'pdf', 'pdf').slice(0, 64)).not.toBe(fileKeyOf(cacheKey, 'screenshot', 'pdf').slice(0, 64))
    expect(fileKeyOf('b'.repeat(64), 'screenshot', 'png')).not.toBe(fileKeyOf(cacheKey, 'screenshot', 'png'))
    for (const ext of ['png', 'jpg', 'webp', 'pdf'] as const) expect(isValidFileKey(fileKeyOf(cacheKey, 'screenshot', ext))).toBe(true)
  })

  it('refuses a name that cannot be a key', () => {
    for (const name of ['', '..', '.', 'a/b.png', 'a b.png', 'x'.repeat(101), 'é.png']) {
      expect(() => fileKeyOf(cacheKey, 'screenshot', 'png', name), name).toThrow(RangeError)
    }
    expect(fileKeyOf(cacheKey, 'screenshot', 'png', 'x'.repeat(100))).toMatch(/\/x{100}$/)
  })

  it('accepts exactly the keys of docs/api.md §8', () => {
    const hash = 'f'.repeat(64)
    for (const key of [`${hash}.png`, `${hash}.jpg`, `${hash}.webp`, `${hash}.pdf`, `${hash}/a`, `${hash}/A-b_c.1.PNG`, `${hash}/${'z'.repeat(100)}`, `${hash}/.hidden`]) {
      expect(isValidFileKey(key), key).toBe(true)
    }
    for (const key of [`${hash}.jpeg`, `${hash}.PNG`, `${'F'.repeat(64)}.png`, `${hash}x.png`, `${'f'.repeat(63)}.png`, `${hash}/`, `${hash}/..`, `${hash}/.`,
      `${hash}/a/b`, `${hash}/${'z'.repeat(101)}`, `${hash}/a%20b`, `${hash}.png\n`, `x${hash}.png`, 42, undefined]) {
      expect(isValidFileKey(key), String(key)).toBe(false)
    }
  })
})

describe('createStorage', () => {
  it('chooses S3 when S3_BUCKET is set, else the disk', async () => {
    const s3 = inject('s3')
    const withS3 = createStorage(loadConfig({ S3_BUCKET: s3.bucket, S3_ENDPOINT: s3.endpoint, S3_FORCE_PATH_STYLE: 'true', S3_ACCESS_KEY_ID: s3.accessKeyId, S3_SECRET_ACCESS_KEY: s3.secretAccessKey, CDN_URL: 'https://cdn.test/' }), { log })
    const onDisk = createStorage(loadConfig({ STORAGE_DIR: tempDir(), PUBLIC_URL: 'https://api.test' }), { log })
    try {
      expect(withS3.kind).toBe('s3')
      expect(withS3.urlOf(fileKeyOf('k', 'pdf', 'pdf'))).toBe(`https://cdn.test/${fileKeyOf('k', 'pdf', 'pdf')}`)
      expect(await withS3.health()).toBe(true)
      expect(onDisk.kind).toBe('disk')
      expect(onDisk.urlOf(fileKeyOf('k', 'pdf', 'pdf'))).toBe(`https://api.test/files/${fileKeyOf('k', 'pdf', 'pdf')}`)
    } finally {
      await withS3.close()
      await onDisk.close()
    }
  })
})

describe('disk storage', () => {
  const ttl = 60

  it('creates its folder on demand and keeps plain files at <dir>/<key>, with no temp files left', async () => {
    const dir = path.join(tempDir(), 'a', 'b')
    const storage = createDiskStorage({ dir, publicUrl: 'http://x', sweepIntervalMs: 0 }, { log })
    try {
      expect(await storage.health()).toBe(true)
      const body = randomBytes(1000)
      const key = fileKeyOf('plain', 'screenshot', 'png')
      const named = fileKeyOf('plain', 'pdf', 'pdf', 'doc.pdf')
      await storage.put(key, body, { contentType: 'image/png', maxAgeSeconds: ttl })
      await storage.put(named, body, { contentType: 'application/pdf', maxAgeSeconds: ttl })
      expect(Buffer.compare(await fs.readFile(path.join(dir, key)), body)).toBe(0)
      expect(Buffer.compare(await fs.readFile(path.join(dir, ...named.split('/'))), body)).toBe(0)
      expect(await fs.readdir(path.join(dir, '.tmp'))).toEqual([])
    } finally {
      await storage.close()
    }
  })

  it('fails with EFATAL, and reports unhealthy, when its folder cannot be used', async () => {
    const blocker = path.join(tempDir(), 'a-file')
    writeFileSync(blocker, 'not a folder')
    const storage = createDiskStorage({ dir: blocker, publicUrl: 'http://x', sweepIntervalMs: 0 }, { log })
    try {
      await expect(storage.put(fileKeyOf('x', 'pdf', 'pdf'), Buffer.from('x'), { contentType: 'application/pdf', maxAgeSeconds: ttl }))
        .rejects.toMatchObject({ code: 'EFATAL', status: 500 })
      expect(await storage.health()).toBe(false)
    } finally {
      await storage.close()
    }
  })

  it('sweeps files once 2 × ttl (plus the margin) is over, and nothing before', async () => {
    const dir = tempDir()
    const margin = 1_000
    const storage = createDiskStorage({ dir, publicUrl: 'http://x', sweepIntervalMs: 0, retentionMarginMs: margin }, { log })
    try {
      const short = fileKeyOf('sweep-short', 'screenshot', 'png')
      const shortNamed = fileKeyOf('sweep-short', 'pdf', 'pdf', 'short.pdf')
      const long = fileKeyOf('sweep-long', 'screenshot', 'png')
      const before = Date.now()
      await storage.put(short, Buffer.from('s'), { contentType: 'image/png', maxAgeSeconds: ttl })
      await storage.put(shortNamed, Buffer.from('s'), { contentType: 'application/pdf', maxAgeSeconds: ttl })
      await storage.put(long, Buffer.from('l'), { contentType: 'image/png', maxAgeSeconds: 10 * ttl })

      // Past the ttl, within retention: kept, so a stale entry can still serve its files.
      expect(await storage.sweep(before + 2 * ttl * 1000 - 1)).toEqual({ expired: 0, strays: 0 })
      expect(await storage.get(short)).toBeDefined()

      const after = Date.now()
      expect(await storage.sweep(after + 2 * ttl * 1000 + margin + 1)).toEqual({ expired: 2, strays: 0 })
      expect(await storage.get(short)).toBeUndefined()
      expect(await storage.get(shortNamed)).toBeUndefined()
      expect((await storage.get(long))!.body.toString()).toBe('l')
      // Nothing of the swept files is left on disk, the named file's folders included.
      await expect(fs.access(path.join(dir, short))).rejects.toThrow()
      await expect(fs.access(path.join(dir, shortNamed.slice(0, 64)))).rejects.toThrow()
      await expect(fs.access(path.join(dir, '.meta', shortNamed.slice(0, 64)))).rejects.toThrow()

      // A recomputation stores the file again with a fresh expiry.
      await storage.put(short, Buffer.from('t'), { contentType: 'image/png', maxAgeSeconds: ttl })
      expect(await storage.sweep(Date.now() + ttl * 1000)).toEqual({ expired: 0, strays: 0 })
      expect((await storage.get(short))!.body.toString()).toBe('t')
    } finally {
      await storage.close()
    }
  })

  it('sweeps leftovers of a crash once they are old: temp files, bodies without metadata', async () => {
    const dir = tempDir()
    const storage = createDiskStorage({ dir, publicUrl: 'http://x', sweepIntervalMs: 0, strayAfterMs: 60_000 }, { log })
    try {
      await storage.put(fileKeyOf('kept', 'screenshot', 'png'), Buffer.from('k'), { contentType: 'image/png', maxAgeSeconds: ttl })
      const orphan = fileKeyOf('orphan', 'screenshot', 'png')
      await fs.writeFile(path.join(dir, orphan), 'half-done')
      await fs.writeFile(path.join(dir, '.tmp', 'partial'), 'half-written')
      await fs.writeFile(path.join(dir, 'README.txt'), 'not ours')
      expect(await storage.sweep(Date.now())).toEqual({ expired: 0, strays: 0 })
      expect(await storage.sweep(Date.now() + 61_000)).toEqual({ expired: 0, strays: 2 })
      expect(await fs.readdir(path.join(dir, '.tmp'))).toEqual([])
      await expect(fs.access(path.join(dir, orphan))).rejects.toThrow()
      expect(await fs.readFile(path.join(dir, 'README.txt'), 'utf8')).toBe('not ours')
      expect(await storage.get(fileKeyOf('kept', 'screenshot', 'png'))).toBeDefined()
    } finally {
      await storage.close()
    }
  })

  it('sweeps on its own timer, and close() stops the timer', async () => {
    const dir = tempDir()
    const storage = createDiskStorage({ dir, publicUrl: 'http://x', sweepIntervalMs: 30, retentionMarginMs: 0 }, { log })
    const key = fileKeyOf('timer', 'screenshot', 'png')
    // maxAge 0: past retention at once.
    await storage.put(key, Buffer.from('x'), { contentType: 'image/png', maxAgeSeconds: 0 })
    await vi.waitFor(async () => { expect(await storage.get(key)).toBeUndefined() }, { timeout: 3_000, interval: 20 })
    await storage.close()
    await storage.put(key, Buffer.from('x'), { contentType: 'image/png', maxAgeSeconds: 0 })
    await new Promise(r => setTimeout(r, 200))
    expect(await storage.get(key)).toBeDefined()
  })

  it('never reads outside its folder, even when the key is not checked first', async () => {
    const parent = tempDir()
    const dir = path.join(parent, 'files')
    const storage = createDiskStorage({ dir, publicUrl: 'http://x', sweepIntervalMs: 0 }, { log })
    try {
      await fs.writeFile(path.join(parent, 'secret.png'), 'secret')
      await storage.put(fileKeyOf('y', 'pdf', 'pdf'), Buffer.from('x'), { contentType: 'application/pdf', maxAgeSeconds: ttl })
      for (const key of ['../secret.png', `${'0'.repeat(64)}/../../secret.png`, '/etc/passwd', '.meta/x.json']) {
        expect(await storage.get(key)).toBeUndefined()
      }
    } finally {
      await storage.close()
    }
  })
})

describe('s3 storage', () => {
  it('stores bytes that read back byte for byte over plain HTTP, with the headers set on upload', async () => {
    const storage = createS3Storage(s3Options(), { log })
    try {
      const body = randomBytes(3 * 1024 * 1024 + 17)
      const key = fileKeyOf(`http-${randomBytes(8).toString('hex')}`, 'pdf', 'pdf', 'report.pdf')
      const url = await storage.put(key, body, { contentType: 'application/pdf', maxAgeSeconds: 3600, filename: 'report.pdf' })
      // The path-style URL of the object on s3rver: no SDK in between.
      expect(url).toBe(`${inject('s3').endpoint}/${inject('s3').bucket}/${key}`)
      const res = await fetch(url)
      expect(res.status).toBe(200)
      const got = Buffer.from(await res.arrayBuffer())
      expect(got.length).toBe(body.length)
      expect(sha(got)).toBe(sha(body))
      expect(res.headers.get('content-type')).toBe('application/pdf')
      expect(res.headers.get('cache-control')).toBe('public, max-age=3600')
      expect(res.headers.get('content-disposition')).toBe('inline; filename="report.pdf"')
    } finally {
      await storage.close()
    }
  })

  it('uses client settings under which even a streamed upload is stored without aws-chunked framing', async () => {
    const options = s3Options()
    const client = new S3Client(toS3ClientConfig(options))
    try {
      const body = randomBytes(256 * 1024)
      const key = fileKeyOf(`stream-${randomBytes(8).toString('hex')}`, 'screenshot', 'png')
      await client.send(new PutObjectCommand({ Bucket: options.bucket, Key: key, Body: Readable.from([body.subarray(0, 1000), body.subarray(1000)]), ContentLength: body.length }))
      const got = Buffer.from(await (await fetch(`${options.cdnUrl}/${key}`)).arrayBuffer())
      expect(got.length).toBe(body.length)
      expect(sha(got)).toBe(sha(body))
    } finally {
      client.destroy()
    }
  })

  it('maps an unreachable service to EFATAL and reports unhealthy', async () => {
    const storage = createS3Storage(s3Options({ endpoint: 'http://127.0.0.1:9' }), { log }, { maxAttempts: 1, healthTimeoutMs: 2_000 })
    try {
      const key = fileKeyOf('down', 'screenshot', 'png')
      await expect(storage.put(key, Buffer.from('x'), { contentType: 'image/png', maxAgeSeconds: 60 })).rejects.toMatchObject({ code: 'EFATAL', status: 500 })
      await expect(storage.get(key)).rejects.toMatchObject({ code: 'EFATAL' })
      expect(await storage.health()).toBe(false)
    } finally {
      await storage.close()
    }
  })

  it('reports unhealthy and fails uploads when the bucket does not exist', async () => {
    const storage = createS3Storage(s3Options({ bucket: 'no-such-bucket-here' }), { log }, { maxAttempts: 1 })
    try {
      expect(await storage.health()).toBe(false)
      await expect(storage.put(fileKeyOf('nb', 'pdf', 'pdf'), Buffer.from('x'), { contentType: 'application/pdf', maxAgeSeconds: 60 }))
        .rejects.toMatchObject({ code: 'EFATAL' })
      // A missing bucket is a failure, not a missing file.
      await expect(storage.get(fileKeyOf('nb', 'pdf', 'pdf'))).rejects.toMatchObject({ code: 'EFATAL' })
    } finally {
      await storage.close()
    }
  })
})

describe('s3 storage failures, said plainly (the run\'s s3rver)', () => {
  /** An S3 storage on `overrides`, one attempt per call, and the log lines it writes. */
  function failing (overrides: Partial<S3StorageOptions>): { storage: ReturnType<typeof createS3Storage>, lines: Array<Record<string, unknown>> } {
    const lines: Array<Record<string, unknown>> = []
    const logger = pino({ level: 'debug' }, new Writable({
      write (chunk: Buffer, _enc, cb) { lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>); cb() }
    }))
    return { storage: createS3Storage(s3Options(overrides), { log: logger }, { maxAttempts: 1, healthTimeoutMs: 5000 }), lines }
  }
  const key = fileKeyOf('s3-failures', 'screenshot', 'png')

  it.each([
    ['a missing bucket', () => ({ bucket: 'no-such-bucket' }), 'bucket missing', /"no-such-bucket" does not exist .*S3_BUCKET/],
    ['wrong credentials', () => ({ accessKeyId: 'NOBODY', secretAccessKey: 'not-the-secret' }), 'access denied', /S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY/],
    ['a closed port', async () => ({ endpoint: `http://127.0.0.1:${await freePort()}` }), 'endpoint unreachable', /ECONNREFUSED.*S3_ENDPOINT/]
  ] as const)('%s: the health log and a failed put name it', async (_name, overrides, reason, detail) => {
    const { storage, lines } = failing(await overrides())
    try {
      expect(await storage.health()).toBe(false)
      const warned = lines.find(line => line.reason !== undefined)
      expect(warned).toMatchObject({ reason, msg: `storage bucket is not reachable: ${reason}` })
      expect(String(warned?.detail)).toMatch(detail)
      const err = await storage.put(key, Buffer.from('x'), { contentType: 'image/png', maxAgeSeconds: 60 }).then(() => undefined, (e: unknown) => e)
      expect(err).toMatchObject({ code: 'EFATAL', cause: { name: 'S3Failure', reason } })
      expect((err as { cause: Error }).cause.message).toMatch(detail)
      const logged = JSON.stringify(lines)
      expect(logged).not.toContain('UnknownError')
      expect(logged).not.toContain('not-the-secret')
      expect((err as { cause: Error }).cause.message).not.toContain('not-the-secret')
      // Nor the access key id an SDK error carries (InvalidAccessKeyId's AWSAccessKeyId), however the error is logged.
      expect(JSON.stringify((err as { cause: unknown }).cause)).not.toContain('NOBODY')
      expect((err as { cause: { cause?: unknown } }).cause.cause).toBeUndefined()
    } finally {
      await storage.close()
    }
  })
})
