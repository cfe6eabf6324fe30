// What every answered request leaves behind: the request metrics and one access line (docs/operations.md#logs),
// written by the listener's onResponse hook (app.ts).
import type { Logger } from 'pino'
import type { Plan } from '../config.ts'
import type { ServiceMetrics } from '../metrics.ts'
import { redactUrl } from '../logger.ts'

export interface Answered {
  reqId: string
  method: string
  url: string
  status: number
  ms: number
  /** The error code the answer carries, '' for none. */
  code: string
  /** x-cache-status, when the answer has one. */
  cache: unknown
  /** Whether the request counts in the request metrics (/metrics itself does not: docs/api.md §12.2). */
  counted: boolean
  /** The request, logged (through the `req` serializer, redacted) at debug level only. */
  req?: unknown
}

export type AccessLog = (answered: Answered) => void

export function createAccessLog (log: Logger, metrics: ServiceMetrics, plan: Plan): AccessLog {
  // The listener's logger with the request id bound per line rather than per request (Fastify's request.log is a
  // child made for each request), and without the redaction paths, which match nothing in this line: its URL goes
  // through redactUrl and its headers (debug only) through the req serializer.
  const accessLog = log.child({ listener: plan }, { redact: { paths: [] } })
  return function answered (a) {
    if (a.counted) metrics.request(plan, a.status, a.code === '' ? 'none' : a.code, a.ms / 1000)
    // One short line per request; headers only at debug (they are redacted there too).
    const line: Record<string, unknown> = { reqId: a.reqId, method: a.method, url: redactUrl(a.url) }
    if (a.req !== undefined) line.req = a.req
    line.status = a.status
    line.ms = Math.round(a.ms * 10) / 10
    line.cache = a.cache
    accessLog.info(line, 'request')
  }
}
