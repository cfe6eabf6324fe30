// Job webhooks (docs/jobs.md#webhooks): the `webhook` field read into a WebhookSpec, checked against the address guard
// when the job is created, and each event POSTed through the guarded connector (pinned to the checked address, no
// redirects followed), signed twice with the tenant's webhookSecret or WEBHOOK_SECRET: Firecrawl's
// `X-Firecrawl-Signature: sha256=<hex HMAC of the raw body>` and Standard Webhooks (`webhook-id`, `webhook-timestamp`,
// `webhook-signature: v1,<base64>`, by the `standardwebhooks` package, the spec's reference library). A delivery that
// fails (network error, non-2xx) is tried again after each of WEBHOOK_RETRY_DELAYS. The secret never reaches a log.
import { createHmac, randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import { Webhook } from 'standardwebhooks'
import { AppError } from '../errors.ts'
import type { AddressGuard } from '../net/guard.ts'
import { createDispatchers } from '../net/connectors.ts'
import { sleep } from '../util/abort.ts'
import type { JobKind, WebhookSpec } from './types.ts'

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
  /** The signing secret (the tenant's, else WEBHOOK_SECRET); unsigned without one. */
  secret: string | undefined
}

export interface WebhookSender {
  /** Sends the event in the background when the spec asks for it; retries follow WEBHOOK_RETRY_DELAYS. */
  send (input: WebhookEventInput): void
  /** Stops retrying and waits for deliveries in flight. */
  close (): Promise<void>
}

export function createWebhookSender (options: { guard: AddressGuard, retryMs: readonly number[] }, deps: { log: Logger }): WebhookSender {
  const dispatchers = createDispatchers({ guard: options.guard })
  const stop = new AbortController()
  const inFlight = new Set<Promise<void>>()

  async function post (url: URL, headers: Record<string, string>, body: string): Promise<number> {
    const signal = AbortSignal.any([stop.signal, AbortSignal.timeout(DELIVERY_TIMEOUT_MS)])
    options.guard.assertUrlAllowed(url)
    const response = await dispatchers.for(undefined).request({ origin: url.origin, path: `${url.pathname}${url.search}`, method: 'POST', headers, body, signal })
    await response.body.dump()
    return response.statusCode
  }

  async function deliver (input: WebhookEventInput): Promise<void> {
    const { spec } = input
    const body = JSON.stringify({
      success: input.event !== 'failed',
      type: `${input.kind}.${input.event}`,
      id: input.jobId,
      data: input.data ?? [],
      metadata: spec.metadata,
      ...(input.error === undefined ? {} : { error: input.error })
    })
    const messageId = randomUUID()
    const url = new URL(spec.url)
    for (let attempt = 0; ; attempt++) {
      const signed = input.secret === undefined ? {} : signWebhook(body, input.secret, messageId, new Date())
      const headers = { ...spec.headers, ...signed, 'content-type': 'application/json', 'user-agent': 'pagecast-webhooks' }
      let outcome: string
      try {
        const status = await post(url, headers, body)
        if (status >= 200 && status < 300) return
        outcome = `status ${status}`
      } catch (err) {
        if (stop.signal.aborted) return
        outcome = err instanceof AppError ? err.code : (err as Error).message
      }
      const wait = options.retryMs[attempt]
      deps.log.info({ job: input.jobId, event: input.event, host: url.host, attempt: attempt + 1, outcome, retryInMs: wait ?? null }, 'webhook delivery failed')
      if (wait === undefined) return
      try { await sleep(wait, stop.signal) } catch { return }
    }
  }

  return {
    send (input) {
      if (!input.spec.events.includes(input.event)) return
      const work = deliver(input).catch((err: unknown) => { deps.log.warn({ job: input.jobId, err: { message: (err as Error).message } }, 'webhook delivery stopped') })
      inFlight.add(work)
      void work.finally(() => inFlight.delete(work))
    },
    async close () {
      stop.abort()
      await Promise.allSettled([...inFlight])
      await dispatchers.close()
    }
  }
}
