// One contract, run against every Storage backend.
import { createHash, randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AppError } from '../../src/errors.ts'
import { fileKeyOf, type Storage } from '../../src/storage/index.ts'

export interface StorageUnderTest {
  storage: Storage
  /** What urlOf(key) must give: `<base>/<key>`. */
  publicBase: string
}

function sha (buf: Buffer): string {
  return createHash('sha256').update(buf).digest('hex')
}

export interface ContractOptions {
  /**
   * Whether the backend replaces a file in one step (S3 and the disk backend do). s3rver, the S3 stand-in
   * of the tests, truncates and rewrites objects in place, so it cannot pass that check.
   */
  atomicOverwrite?: boolean
}

export function storageContract (name: string, make: () => Promise<StorageUnderTest>, { atomicOverwrite = true }: ContractOptions = {}): void {
  describe(`storage contract: ${name}`, () => {
    let storage: Storage
    let publicBase: string
    // Unique keys per run, so a shared bucket never hands back another run's objects.
    const run = randomBytes(8).toString('hex')
    const keyOf = (label: string, ext: 'png' | 'jpg' | 'webp' | 'pdf' = 'png', filename?: string): string =>
      fileKeyOf(`${run}:${label}`, ext === 'pdf' ? 'pdf' : 'screenshot', ext, filename)

    beforeAll(async () => { ({ storage, publicBase } = await make()) })
    afterAll(async () => { await storage.close() })

    it('gives back every byte value as it was stored, and returns the public URL', async () => {
      const body = Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, i) => i)), Buffer.from('\r\n0\r\n\r\n'), randomBytes(4096)])
      const key = keyOf('bytes')
      const url = await storage.put(key, body, { contentType: 'image/png', maxAgeSeconds: 86_400 })
      expect(url).toBe(`${publicBase}/${key}`)
      const file = await storage.get(key)
      expect(file).toBeDefined()
      expect(file!.size).toBe(body.length)
      expect(Buffer.compare(file!.body, body)).toBe(0)
      expect(file!.contentType).toBe('image/png')
      expect(file!.maxAgeSeconds).toBe(86_400)
      expect(file!.contentDisposition).toBeUndefined()
    })

    it('round-trips a 5 MiB file byte for byte', async () => {
      const body = randomBytes(5 * 1024 * 1024)
      const key = keyOf('large', 'pdf')
      await storage.put(key, body, { contentType: 'application/pdf', maxAgeSeconds: 60 })
      const file = await storage.get(key)
      expect(file!.size).toBe(body.length)
      expect(file!.body.length).toBe(body.length)
      expect(sha(file!.body)).toBe(sha(body))
      expect(file!.contentType).toBe('application/pdf')
    })

    it('keeps each file\'s own content type and max-age', async () => {
      const types = { png: 'image/png', jpg: 'image/jpeg', webp: 'image/webp', pdf: 'application/pdf' } as const
      for (const [ext, contentType] of Object.entries(types) as Array<[keyof typeof types, string]>) {
        const key = keyOf(`type-${ext}`, ext)
        await storage.put(key, Buffer.from(ext), { contentType, maxAgeSeconds: 3600 + ext.length })
        const file = await storage.get(key)
        expect(file).toMatchObject({ contentType, size: ext.length, maxAgeSeconds: 3600 + ext.length })
      }
    })

    it('replaces the bytes when the same key is stored again', async () => {
      const key = keyOf('overwrite')
      const first = randomBytes(200_000)
      const second = randomBytes(1_000)
      await storage.put(key, first, { contentType: 'image/png', maxAgeSeconds: 600 })
      await storage.put(key, second, { contentType: 'image/png', maxAgeSeconds: 120 })
      const file = await storage.get(key)
      expect(file!.size).toBe(second.length)
      expect(Buffer.compare(file!.body, second)).toBe(0)
      expect(file!.maxAgeSeconds).toBe(120)
    })

    it.skipIf(!atomicOverwrite)('never shows a reader half a file while the same key is being rewritten', async () => {
      const key = keyOf('race')
      const versions = [randomBytes(300_000), randomBytes(300_000), randomBytes(300_000)]
      const digests = new Set(versions.map(sha))
      await storage.put(key, versions[0]!, { contentType: 'image/png', maxAgeSeconds: 60 })
      let writing = true
      const writes = (async () => {
        for (let i = 1; i <= 6; i++) await storage.put(key, versions[i % 3]!, { contentType: 'image/png', maxAgeSeconds: 60 })
        writing = false
      })()
      let reads = 0
      while (writing) {
        const file = await storage.get(key)
        expect(file).toBeDefined()
        expect(digests.has(sha(file!.body))).toBe(true)
        reads++
      }
      await writes
      expect(reads).toBeGreaterThan(0)
      expect(sha((await storage.get(key))!.body)).toBe(sha(versions[0]!))
    })

    it('gives named files their content-disposition, and the name as the last URL segment', async () => {
      const key = keyOf('named', 'pdf', 'quarterly-report_v2.pdf')
      expect(key).toMatch(/^[0-9a-f]{64}\/quarterly-report_v2\.pdf$/)
      const url = await storage.put(key, Buffer.from('%PDF-1.7\n'), { contentType: 'application/pdf', maxAgeSeconds: 60, filename: 'quarterly-report_v2.pdf' })
      expect(url).toBe(`${publicBase}/${key}`)
      expect(url.endsWith('/quarterly-report_v2.pdf')).toBe(true)
      const file = await storage.get(key)
      expect(file!.contentDisposition).toBe('inline; filename="quarterly-report_v2.pdf"')
      expect(file!.body.toString()).toBe('%PDF-1.7\n')

      // A named key carries its name even when put() is not told it again.
      const other = keyOf('named-implicit', 'png', 'shot.png')
      await storage.put(other, Buffer.from('png'), { contentType: 'image/png', maxAgeSeconds: 60 })
      expect((await storage.get(other))!.contentDisposition).toBe('inline; filename="shot.png"')
    })

    it('answers undefined for keys that were never stored', async () => {
      expect(await storage.get(keyOf('never'))).toBeUndefined()
      expect(await storage.get(keyOf('never', 'pdf', 'never.pdf'))).toBeUndefined()
      // The unnamed key exists; the same hash with a name does not.
      const key = keyOf('only-unnamed')
      await storage.put(key, Buffer.from('x'), { contentType: 'image/png', maxAgeSeconds: 60 })
      expect(await storage.get(`${key.slice(0, 64)}/only-unnamed.png`)).toBeUndefined()
      expect(await storage.get(`${key.slice(0, 64)}.jpg`)).toBeUndefined()
    })

    it('refuses invalid keys: put rejects with EFATAL and stores nothing, get finds nothing', async () => {
      const hash = keyOf('invalid').slice(0, 64)
      const invalid = [
        '../etc/passwd', `${hash}/../../x`, `${hash}/..`, `${hash}/.`, `${hash.toUpperCase()}.png`, `${hash}.gif`,
        `${hash}`, `${hash}/`, `${hash}/${'a'.repeat(101)}`, `${hash}/a/b`, `${hash.slice(1)}.png`, `/${hash}.png`,
        `${hash}/a b`, `${hash}/%2e%2e`, ''
      ]
      for (const key of invalid) {
        const err = await storage.put(key, Buffer.from('x'), { contentType: 'image/png', maxAgeSeconds: 60 }).then(() => undefined, (e: unknown) => e)
        expect(err, key).toBeInstanceOf(AppError)
        expect((err as AppError).code).toBe('EFATAL')
        expect(await storage.get(key), key).toBeUndefined()
      }
    })

    it('refuses bad put options with EFATAL', async () => {
      const key = keyOf('bad-options')
      const bad = [
        { contentType: '', maxAgeSeconds: 60 },
        { contentType: 'image/png\r\nx-evil: 1', maxAgeSeconds: 60 },
        { contentType: 'image/png', maxAgeSeconds: -1 },
        { contentType: 'image/png', maxAgeSeconds: 1.5 },
        { contentType: 'image/png', maxAgeSeconds: 60, filename: 'a"b.png' }
      ]
      for (const options of bad) {
        await expect(storage.put(key, Buffer.from('x'), options)).rejects.toMatchObject({ code: 'EFATAL' })
      }
      expect(await storage.get(key)).toBeUndefined()
    })

    it('builds URLs as <base>/<key>', () => {
      const key = keyOf('url')
      expect(storage.urlOf(key)).toBe(`${publicBase}/${key}`)
      const named = keyOf('url', 'pdf', 'a.pdf')
      expect(storage.urlOf(named)).toBe(`${publicBase}/${named}`)
    })

    it('reports health', async () => {
      expect(await storage.health()).toBe(true)
    })
  })
}
