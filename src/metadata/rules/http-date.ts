// date: after every document source, the HTTP `last-modified` header, then the HTTP `date` header (§9).
import type { RuleBundle } from './types.ts'

/** An HTTP date header value as ISO 8601 UTC, or undefined when it does not parse. */
export function toHttpDate (value: string | undefined): string | undefined {
  if (value === undefined || value.trim() === '') return undefined
  const time = Date.parse(value.trim())
  return Number.isNaN(time) ? undefined : new Date(time).toISOString()
}

export function httpDateRules (): RuleBundle {
  return {
    date: [
      ({ request }) => toHttpDate(request.headers['last-modified']),
      ({ request }) => toHttpDate(request.headers.date)
    ]
  }
}
