// GET/HEAD /files/<key> over a real disk storage, and its refusal when storage is S3.
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import Fastify, { type FastifyInstance } from 'fastify'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { AppError } from '../../src/errors.ts'
import { createErrorHandler } from '../../src/http/error-handler.ts'
import { filesRoutes } from '../../src/routes/files.ts'
import { createDiskStorage, type DiskStorage } from '../../src/storage/disk.ts'
import { fileKeyOf, type Storage } from '../../src/storage/index.ts'
import { createS3Storage } from '../../src/storage/s3.ts'

const log = pino({ level: 'silent' })

async function appOver (storage: Storage): Promise<FastifyInstance> {
  const app = Fastify({ routerOptions: { maxParamLength: 500 } })
  app.setErrorHandler(createErrorHandler('http://localhost:3000/docs'))
  app.setNotFoundHandler(async () => { throw new AppError('ENOTFOUND', { data: { path: 'No such route.' } }) })
  await app.register(filesRoutes, { ctx: { storage } })
  await app.ready()
  return app
}

describe('files route over disk storage', () => {
  let dir: string
  let storage: DiskStorage
  let app: FastifyInstance
  const png = randomBytes(70_000)
  const pdf = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(5000)])
  const pngKey = fileKeyOf('route', 'screenshot', 'png')
  const pdfKey = fileKeyOf('route', 'pdf', 'pdf', 'annual-report.pdf')

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'pagecast-files-'))
    storage = createDiskStorage({ dir, publicUrl: 'http://localhost:3000', sweepIntervalMs: 0 }, { log })
    app = await appOver(storage)
    await storage.put(pngKey, png, { contentType: 'image/png', maxAgeSeconds: 86_400 })
    await storage.put(pdfKey, pdf, { contentType: 'application/pdf', maxAgeSeconds: 3600, filename: 'annual-report.pdf' })
  })
  afterAll(async () => {
    await app.close()
    await storage.close()
    rmSync(dir, { recursive: true, force: true })
  })

  it('serves a stored file with its type, length, cache and security headers', async () => {
    const url = new URL(storage.urlOf(pngKey))
    expect(url.pathname).toBe(`/files/${pngKey}`)
    const res = await app.inject({ url: url.pathname })
    expect(res.statusCode).toBe(200)
    expect(Buffer.compare(res.rawPayload, png)).toBe(0)
    expect(res.headers['content-type']).toBe('image/png')
    expect(res.headers['content-length']).toBe(String(png.length))
    expect(res.headers['cache-control']).toBe('public, max-age=86400')
    expect(res.headers['content-security-policy']).toBe('sandbox; script-src \'none\'')
    expect(res.headers['x-content-type-options']).toBe('nosniff')
    expect(res.headers['content-disposition']).toBeUndefined()
  })

  it('names a file stored with a filename', async () => {
    const res = await app.inject({ url: `/files/${pdfKey}` })
    expect(res.statusCode).toBe(200)
    expect(Buffer.compare(res.rawPayload, pdf)).toBe(0)
    expect(res.headers['content-type']).toBe('application/pdf')
    expect(res.headers['content-length']).toBe(String(pdf.length))
    expect(res.headers['cache-control']).toBe('public, max-age=3600')
    expect(res.headers['content-disposition']).toBe('inline; filename="annual-report.pdf"')
    expect(res.headers['content-security-policy']).toBe('sandbox; script-src \'none\'')
  })

  it('answers HEAD with the same headers and no body', async () => {
    const get = await app.inject({ url: `/files/${pdfKey}` })
    const head = await app.inject({ method: 'HEAD', url: `/files/${pdfKey}` })
    expect(head.statusCode).toBe(200)
    expect(head.rawPayload.length).toBe(0)
    for (const name of ['content-type', 'content-length', 'cache-control', 'content-disposition', 'content-security-policy', 'x-content-type-options']) {
      expect(head.headers[name], name).toBe(get.headers[name])
    }
    expect(head.headers['content-length']).toBe(String(pdf.length))
  })

  it('serves the new bytes after the same key is stored again', async () => {
    const key = fileKeyOf('route-overwrite', 'screenshot', 'webp')
    await storage.put(key, Buffer.from('old bytes'), { contentType: 'image/webp', maxAgeSeconds: 60 })
    await storage.put(key, Buffer.from('new'), { contentType: 'image/webp', maxAgeSeconds: 60 })
    const res = await app.inject({ url: `/files/${key}` })
    expect(res.body).toBe('new')
    expect(res.headers['content-length']).toBe('3')
  })

  const hash = pngKey.slice(0, 64)
  // [what, URL, whether it reaches the files route]: the URL parser resolves literal `..` and `%2e%2e`
  // segments before routing, so those two end at the not-found handler; the rest are refused by the route.
  const refused: Array<[string, string, boolean]> = [
    ['a parent-folder path', '/files/../etc/passwd', false],
    ['encoded dots', '/files/%2e%2e', false],
    ['an encoded parent-folder path', '/files/..%2f..%2fetc%2fpasswd', true],
    ['encoded dots after a hash', `/files/${hash}/%2e%2e`, true],
    ['encoded dots inside a name', `/files/${hash}/%2e%2e%2fsecret`, true],
    ['upper-case hex', `/files/${hash.toUpperCase()}.png`, true],
    ['a name that is too long', `/files/${hash}/${'a'.repeat(101)}`, true],
    ['a key that is too long', `/files/${hash}0.png`, true],
    ['an unknown extension', `/files/${hash}.gif`, true],
    ['a nested name', `/files/${hash}/a/b.png`, true],
    ['the metadata folder', `/files/.meta/${pngKey}.json`, true],
    ['no key at all', '/files/', true],
    ['a file that was never stored', `/files/${'0'.repeat(64)}.png`, true],
    ['a named file that was never stored', `/files/${hash}/other.png`, true]
  ]
  for (const [what, url, reachesRoute] of refused) {
    it(`answers 404 ENOTFOUND JSON for ${what}`, async () => {
      for (const method of ['GET', 'HEAD'] as const) {
        const res = await app.inject({ method, url })
        expect(res.statusCode).toBe(404)
        expect(res.headers['content-type']).toBe('application/json; charset=utf-8')
        expect(res.headers['cache-control']).toBe('no-store')
        if (method === 'HEAD') continue
        expect(res.json()).toMatchObject({ status: 'fail', code: 'ENOTFOUND', more: 'http://localhost:3000/docs#enotfound' })
        expect(res.json().data).toEqual(reachesRoute ? { file: expect.any(String) } : { path: 'No such route.' })
        expect(res.body).not.toContain('root:')
      }
    })
  }

  it('stops serving a file once the sweep removed it', async () => {
    const key = fileKeyOf('route-swept', 'screenshot', 'jpg')
    await storage.put(key, Buffer.from('jpg'), { contentType: 'image/jpeg', maxAgeSeconds: 1 })
    expect((await app.inject({ url: `/files/${key}` })).statusCode).toBe(200)
    await storage.sweep(Date.now() + 24 * 3600_000)
    expect((await app.inject({ url: `/files/${key}` })).statusCode).toBe(404)
  })
})

describe('files route over S3 storage', () => {
  it('answers 404 ENOTFOUND even for an object that exists: S3 files are served by the CDN', async () => {
    const s3 = inject('s3')
    const storage = createS3Storage({
      bucket: s3.bucket,
      endpoint: s3.endpoint,
      region: 'us-east-1',
      accessKeyId: s3.accessKeyId,
      secretAccessKey: s3.secretAccessKey,
      forcePathStyle: true,
      cdnUrl: `${s3.endpoint}/${s3.bucket}`
    }, { log })
    const app = await appOver(storage)
    try {
      const key = fileKeyOf(`route-s3-${randomBytes(6).toString('hex')}`, 'screenshot', 'png')
      await storage.put(key, Buffer.from('png'), { contentType: 'image/png', maxAgeSeconds: 60 })
      expect(await storage.get(key)).toBeDefined()
      const res = await app.inject({ url: `/files/${key}` })
      expect(res.statusCode).toBe(404)
      expect(res.json()).toMatchObject({ code: 'ENOTFOUND' })
    } finally {
      await app.close()
      await storage.close()
    }
  })
})
