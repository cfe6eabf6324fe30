// GET/HEAD /files/<key>: generated files kept on local disk (docs/api.md §8). With S3 storage the files live
// behind CDN_URL, so this route answers 404 like any unknown path.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { AppError } from '../errors.ts'
import { isValidFileKey, type Storage } from '../storage/index.ts'
import { SANDBOX_HEADERS } from '../http/security-headers.ts'

function notFound (): AppError {
  return new AppError('ENOTFOUND', { data: { file: 'No such file. File URLs come from `screenshot.url` and `pdf.url`.' } })
}

export async function filesRoutes (app: FastifyInstance, { ctx }: { ctx: { storage: Storage } }): Promise<void> {
  async function serve (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    if (ctx.storage.kind !== 'disk') throw notFound()
    const key = (request.params as { '*'?: string })['*']
    if (!isValidFileKey(key)) throw notFound()
    const file = await ctx.storage.get(key)
    if (file === undefined) throw notFound()

    reply
      .headers(SANDBOX_HEADERS)
      .header('content-type', file.contentType)
      .header('content-length', file.size)
      .header('cache-control', `public, max-age=${file.maxAgeSeconds ?? 0}`)
    if (file.contentDisposition !== undefined) reply.header('content-disposition', file.contentDisposition)
    if (request.method === 'HEAD') return await reply.send()
    return await reply.send(file.body)
  }

  app.route({ method: ['GET', 'HEAD'], url: '/files/*', handler: serve })
}
