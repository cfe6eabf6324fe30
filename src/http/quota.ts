// The free listener's daily quota: a rolling 24 h window per client that starts at its first request.
import type { Store } from '../store/index.ts'
import { AppError } from '../errors.ts'

export const QUOTA_WINDOW_MS = 24 * 60 * 60 * 1000

export interface QuotaResult {
  headers: Record<string, string>
}

/** Counts the request; throws ERATE (with the quota headers and Retry-After) when the quota is spent. */
export async function consumeQuota (store: Store, subject: string, limit: number): Promise<QuotaResult> {
  const hit = await store.hitWindow(`quota:${subject}`, limit, QUOTA_WINDOW_MS)
  const headers = {
    'x-rate-limit-limit': String(limit),
    'x-rate-limit-remaining': String(Math.max(0, limit - hit.count)),
    'x-rate-limit-reset': String(Math.ceil(hit.resetAt / 1000))
  }
  if (!hit.allowed) {
    const retryAfter = Math.max(1, Math.ceil((hit.resetAt - Date.now()) / 1000))
    throw new AppError('ERATE', {
      data: { quota: `The daily limit of ${limit} requests was reached; it resets at ${new Date(hit.resetAt).toISOString()}.` },
      headers: { ...headers, 'x-rate-limit-remaining': '0', 'retry-after': String(retryAfter) }
    })
  }
  return { headers }
}
