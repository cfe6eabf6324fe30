// The Firecrawl job routes (docs/jobs.md, API.md §17), in the Firecrawl scope (its JSON body parser and error
// envelope): POST /v1|v2/batch/scrape and /v1|v2/crawl answer at once with {success, id, url}; GET of a job gives its
// status and documents in pages of at most 10 MiB with `next`; DELETE cancels; GET …/errors; GET /v2/crawl/ongoing
// (and `active`, the name the JS SDK calls). A job is visible only to whoever started it (its tenant, or its free
// client); any other caller gets 404. The first registration also starts this instance's worker.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { AppContext } from '../context.ts'
import type { Plan } from '../config.ts'
import { AppError } from '../errors.ts'
import { JSON_TYPE } from '../http/reply.ts'
import { assertWebhookAllowed, type JobKind, type JobOwner, type JobRecord } from '../jobs/index.ts'
import type { Caller } from '../tenants/types.ts'
import { callerOf } from './auth.ts'
import type { Tenant } from '../tenants/types.ts'
import { callerOfOwner, createPageHandler } from './jobs-pages.ts'
import { readBatchRequest, readCrawlRequest, type JobRequest } from './jobs-request.ts'
import { BATCH_BODY_SCHEMA, CRAWL_BODY_SCHEMA, JOB_PAGE_BYTES } from '../schemas/firecrawl-jobs.ts'
import type { ApiVersion } from './request.ts'

export interface JobRouteOptions {
  ctx: AppContext
  plan: Plan
  version: ApiVersion
  /** The path prefixes of the version (`/v2`, and `//v2` after a base URL that ended in a slash). */
  prefixes: readonly string[]
}

const started = new WeakSet<AppContext>()

function ownerOf (caller: Caller): JobOwner {
  return caller.listener === 'free'
    ? { listener: 'free', ...(caller.client === undefined ? {} : { client: caller.client }) }
    : { listener: 'pro', ...(caller.tenant === undefined ? {} : { tenant: caller.tenant.name }) }
}

function sameOwner (a: JobOwner, b: JobOwner): boolean {
  return a.listener === b.listener && a.tenant === b.tenant && a.client === b.client
}

/** The scheme and host the client reached us at: the base of `url` and `next`. */
function baseOf (request: FastifyRequest): string {
  return `${request.protocol}://${request.host}`
}

function skipOf (request: FastifyRequest): number {
  const raw = new URL(request.url, 'http://x').searchParams.get('skip')
  if (raw === null) return 0
  if (!/^\d{1,9}$/.test(raw)) throw new AppError('EINVALQUERY', { message: '`skip` must be a whole number.', data: { skip: raw } })
  return Number(raw)
}

const notFound = (): AppError => new AppError('ENOTFOUND', { message: 'Job not found.', data: { id: 'No job of yours has this id (it may have expired).' } })

/**
 * The caller's job with this id; 404 for any other (another owner's, an expired one). Either path reads either kind:
 * the v1 client polls a batch scrape at /v1/crawl/:id.
 */
async function ownJob (ctx: AppContext, caller: Caller, id: string): Promise<JobRecord> {
  const job = /^[0-9a-f-]{36}$/.test(id) ? await ctx.jobs.get(id) : undefined
  if (job === undefined || !sameOwner(job.owner, ownerOf(caller))) throw notFound()
  return job
}

export async function jobRoutes (app: FastifyInstance, { ctx, plan, version, prefixes }: JobRouteOptions): Promise<void> {
  const tenantByName = (name: string): Tenant | undefined => ctx.tenants.byName(name)
  if (!started.has(ctx)) {
    started.add(ctx)
    ctx.jobs.work(createPageHandler(ctx, tenantByName), (owner) => callerOfOwner(owner, tenantByName)?.tenant?.webhookSecret ?? ctx.config.jobs.webhookSecret)
  }

  async function create (request: FastifyRequest, kind: JobKind, read: () => JobRequest, path: string): Promise<Record<string, unknown>> {
    const caller = callerOf(ctx, plan, request)
    const job = read()
    if (job.webhook !== undefined) await assertWebhookAllowed(job.webhook, ctx.guard)
    const record = await ctx.jobs.start({
      kind,
      owner: ownerOf(caller),
      first: job.first,
      limit: job.limit,
      ...(job.maxConcurrency === undefined ? {} : { maxConcurrency: job.maxConcurrency }),
      request: job.stored as unknown as Record<string, unknown>,
      ...(job.webhook === undefined ? {} : { webhook: job.webhook })
    })
    return { success: true, id: record.id, url: `${baseOf(request)}/${version}/${path}/${record.id}`, ...(job.invalidURLs === undefined ? {} : { invalidURLs: job.invalidURLs }) }
  }

  async function status (request: FastifyRequest, path: string): Promise<Record<string, unknown>> {
    const { id } = request.params as { id: string }
    await ownJob(ctx, callerOf(ctx, plan, request), id)
    const skip = skipOf(request)
    const page = await ctx.jobs.page(id, skip, JOB_PAGE_BYTES)
    if (page === undefined) throw notFound()
    const { record } = page
    return {
      success: true,
      status: record.status,
      completed: record.completed,
      total: record.total,
      creditsUsed: record.completed + record.failed,
      expiresAt: new Date(record.expiresAt).toISOString(),
      ...(page.nextSkip === undefined ? {} : { next: `${baseOf(request)}/${version}/${path}/${id}?skip=${page.nextSkip}` }),
      data: page.data,
      ...(record.error === undefined ? {} : { error: record.error })
    }
  }

  const paths = ['batch/scrape', 'crawl']
  for (const prefix of prefixes) {
    app.post(`${prefix}/batch/scrape`, { schema: { body: BATCH_BODY_SCHEMA } }, async (request, reply) =>
      await reply.type(JSON_TYPE).send(await create(request, 'batch_scrape', () => readBatchRequest(request.body as Record<string, unknown>, version), 'batch/scrape')))
    app.post(`${prefix}/crawl`, { schema: { body: CRAWL_BODY_SCHEMA } }, async (request, reply) =>
      await reply.type(JSON_TYPE).send(await create(request, 'crawl', () => readCrawlRequest(request.body as Record<string, unknown>, version, plan), 'crawl')))
    for (const path of paths) {
      app.get(`${prefix}/${path}/:id`, async (request, reply) => await reply.type(JSON_TYPE).send(await status(request, path)))
      app.delete(`${prefix}/${path}/:id`, async (request, reply) => {
        const { id } = request.params as { id: string }
        await ownJob(ctx, callerOf(ctx, plan, request), id)
        await ctx.jobs.cancel(id)
        const after = await ctx.jobs.get(id)
        return await reply.type(JSON_TYPE).send({ success: true, status: after?.status ?? 'cancelled' })
      })
      app.get(`${prefix}/${path}/:id/errors`, async (request, reply) => {
        const { id } = request.params as { id: string }
        await ownJob(ctx, callerOf(ctx, plan, request), id)
        return await reply.type(JSON_TYPE).send({ success: true, ...await ctx.jobs.errors(id) })
      })
    }
    for (const name of ['ongoing', 'active']) {
      app.get(`${prefix}/crawl/${name}`, async (request, reply) => {
        const caller = callerOf(ctx, plan, request)
        const crawls = await ctx.jobs.ongoing(ownerOf(caller))
        const teamId = caller.tenant?.name ?? 'free'
        return await reply.type(JSON_TYPE).send({
          success: true,
          crawls: crawls.map(c => ({ id: c.id, teamId, url: c.url, options: (c.request as { rules?: unknown }).rules ?? null }))
        })
      })
    }
  }
}
