// Job webhooks (docs/jobs.md#webhooks): the `webhook` field read into a WebhookSpec, checked against the address guard
// when the job is created, and each event POSTed through the guarded connector (pinned to the checked address, no
// redirects followed), signed twice with the tenant's webhookSecret or WEBHOOK_SECRET: Firecrawl's
// `X-Firecrawl-Signature: sha256=<hex HMAC of the raw body>` and Standard Webhooks (`webhook-id`, `webhook-timestamp`,
// `webhook-signature: v1,<base64>`, by the `standardwebhooks` package, the spec's reference library). A delivery that
// fails (network error, non-2xx) is tried again after each of WEBHOOK_RETRY_DELAYS, from the delivery queue
// (deliveries.ts: delayed BullMQ jobs with Redis, so another instance makes a retry this one scheduled). Each attempt
// reads the secret from the delivery's owner; the secret is never queued, stored or logged.
import { createHmac, randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import { Webhook } from 'standardwebhooks'
import { AppError } from '../errors.ts'
import type { AddressGuard } from '../net/guard.ts'
import { createDispatchers } from '../net/connectors.ts'
import type { Delivery, DeliveryQueue, JobKind, JobOwner, SecretOf, WebhookSpec } from './types.ts'

export const WEBHOOK_EVENTS = ['started', 'page', 'completed', 'failed'] as const
export type WebhookEvent = typeof WEBHOOK_EVENTS[number]

/** Headers a webhook's `headers` may not set: the signature, the framing and the content type are ours. */
const RESERVED = /^(host|content-length|content-type|transfer-encoding|connection|x-firecrawl-signature|webhook-(id|timestamp|signature))$/i
const DELIVERY_TIMEOUT_MS = 10_000

function invalid (detail: string): AppError {
  return new AppError('EINVALQUERY', { data: { webhook: detail } })
}

function isPlainObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** The `webhook` field (a URL, or {url, headers, metadata, events}) as a spec; EINVALQUERY naming what is wrong. */
export function parseWebhook (value: unknown): WebhookSpec | undefined {
  if (value === undefined || value === null) return undefined
  const spec = typeof value === 'string' ? { url: value } : value
  if (!isPlainObject(spec) || typeof spec.url !== 'string') throw invalid('`webhook` must be a URL or an object with a `url`.')
  let url: URL
  try { url = new URL(spec.url) } catch { throw invalid(`The webhook URL \`${spec.url}\` is not valid.`) }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid('The webhook URL must be http or https.')
  const headers: Record<string, string> = {}
  if (spec.headers !== undefined) {
    if (!isPlainObject(spec.headers)) throw invalid('`webhook.headers` must be an object of strings.')
    for (const [name, v] of Object.entries(spec.headers)) {
      if (typeof v !== 'string' || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name) || /[\r\n]/.test(v)) throw invalid(`\`webhook.headers.${name}\` is not a valid header.`)
      if (!RESERVED.test(name)) headers[name.toLowerCase()] = v
    }
  }
  if (spec.metadata !== undefined && !isPlainObject(spec.metadata)) throw invalid('`webhook.metadata` must be an object.')
  const events = spec.events ?? WEBHOOK_EVENTS
  if (!Array.isArray(events) || events.some(e => !(WEBHOOK_EVENTS as readonly unknown[]).includes(e))) {
    throw invalid(`\`webhook.events\` must list some of ${WEBHOOK_EVENTS.join(', ')}.`)
  }
  return { url: url.href, headers, metadata: (spec.metadata ?? {}) as Record<string, unknown>, events: events as string[] }
}

/** The guard's full check of the webhook URL (DNS included): a private address is refused when the job is created. */
export async function assertWebhookAllowed (spec: WebhookSpec, guard: AddressGuard): Promise<void> {
  await guard.assertUrlResolvesAllowed(new URL(spec.url))
}

/** The two signatures of `body` under `secret` (docs/jobs.md#verifying). */
export function signWebhook (body: string, secret: string, id: string, timestamp: Date): Record<string, string> {
  return {
    'x-firecrawl-signature': `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`,
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
    'webhook-signature': standardSigner(secret).sign(id, timestamp, body)
  }
}

/** Standard Webhooks keys are base64 after `whsec_`; a secret that is not base64 is used as its UTF-8 bytes. */
function standardSigner (secret: string): Webhook {
  try {
    return new Webhook(secret)
  } catch {
    return new Webhook(new TextEncoder().encode(secret))
  }
}

export interface WebhookEventInput {
  kind: JobKind
  jobId: string
  spec: WebhookSpec
  event: WebhookEvent
  /** The documents of a `page` event; empty otherwise. */
  data?: unknown[]
  error?: string
  /** Whose secret signs it (the tenant's, else WEBHOOK_SECRET), read at each attempt; unsigned without one. */
  owner: JobOwner
}

export interface WebhookSender {
  /** Queues the event when the spec asks for it; failed attempts are retried after WEBHOOK_RETRY_DELAYS. */
  send (input: WebhookEventInput): void
  /** Starts making delivery attempts on this instance, signed with `secretOf` of each delivery's owner. */
  work (secretOf: SecretOf): void
  /** Stops this instance's attempts and waits for those in flight (on Redis, pending retries stay for others). */
  close (): Promise<void>
}

export function createWebhookSender (options: { guard: AddressGuard, retryMs: readonly number[], queue: DeliveryQueue }, deps: { log: Logger }): WebhookSender {
  const { queue } = options
  const dispatchers = createDispatchers({ guard: options.guard })
  const stop = new AbortController()
  const adding = new Set<Promise<void>>()

  async function post (url: URL, headers: Record<string, string>, body: string): Promise<number> {
    const signal = AbortSignal.any([stop.signal, AbortSignal.timeout(DELIVERY_TIMEOUT_MS)])
    options.guard.assertUrlAllowed(url)
    const response = await dispatchers.for(undefined).request({ origin: url.origin, path: `${url.pathname}${url.search}`, method: 'POST', headers, body, signal })
    await response.body.dump()
    return response.statusCode
  }

  /** One attempt: signed now (a fresh timestamp, the same webhook-id), thrown when not answered 2xx. */
  function attemptWith (secretOf: SecretOf) {
    return async (delivery: Delivery, attempt: number): Promise<void> => {
      const secret = secretOf(delivery.owner)
      const signed = secret === undefined ? {} : signWebhook(delivery.body, secret, delivery.id, new Date())
      const headers = { ...delivery.headers, ...signed, 'content-type': 'application/json', 'user-agent': 'pagecast-webhooks' }
      const url = new URL(delivery.url)
      let outcome: string
      try {
        const status = await post(url, headers, delivery.body)
        if (status >= 200 && status < 300) return
        outcome = `status ${status}`
      } catch (err) {
        outcome = err instanceof AppError ? err.code : (err as Error).message
      }
      const retryInMs = options.retryMs[attempt] ?? null
      deps.log.info({ job: delivery.job, event: delivery.event, host: url.host, attempt: attempt + 1, outcome, retryInMs }, 'webhook delivery failed')
      throw new Error(`webhook delivery failed: ${outcome}`)
    }
  }

  return {
    send (input) {
      if (!input.spec.events.includes(input.event) || stop.signal.aborted) return
      const body = JSON.stringify({
        success: input.event !== 'failed',
        type: `${input.kind}.${input.event}`,
        id: input.jobId,
        data: input.data ?? [],
        metadata: input.spec.metadata,
        ...(input.error === undefined ? {} : { error: input.error })
      })
      const delivery: Delivery = { id: randomUUID(), job: input.jobId, event: input.event, url: input.spec.url, headers: input.spec.headers, body, owner: input.owner }
      const work = queue.add(delivery).catch((err: unknown) => { deps.log.warn({ job: input.jobId, err: { message: (err as Error).message } }, 'webhook delivery not queued') })
      adding.add(work)
      void work.finally(() => adding.delete(work))
    },
    work (secretOf) {
      queue.work(attemptWith(secretOf))
    },
    async close () {
      stop.abort()
      await Promise.allSettled([...adding])
      await queue.close()
      await dispatchers.close()
    }
  }
}
