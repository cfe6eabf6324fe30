// Signed links (docs/api.md §16, docs/tenants.md#signed-links): a pro URL with no `x-api-key` that ends in
// `&keyId=<tenant>[&expires=<unix seconds>]&signature=<hex>` is served as that tenant when `signature` is the lower-case
// hex HMAC-SHA256, under one of the tenant's `signing` secrets, of the raw query before `&signature=` (bytes as sent).
// node:crypto's createHmac and timingSafeEqual are all it takes: no library. The same scheme is computed by
// `npm run keys -- sign` (scripts/keys.ts) and by the /docs playground in the page (WebCrypto, src/docs/playground.ts).
import { createHmac, timingSafeEqual } from 'node:crypto'
import { AppError } from '../errors.ts'
import { SIGNED_LINK_ROOT } from '../schemas/parameters.ts'
import type { Tenant, TenantDirectory } from './types.ts'

/** The three parameter names, as the parameter table declares them (known names that no option reads). */
export const [KEY_ID, EXPIRES, SIGNATURE] = Object.keys(SIGNED_LINK_ROOT) as ['keyId', 'expires', 'signature']

const SIGNATURE_MARK = `&${SIGNATURE}=`
/** The signed part's tail: `keyId` (first parameter or after `&`), then `expires` if given, at the very end. */
const TAIL = new RegExp(`(?:^|&)${KEY_ID}=([^&]*)(?:&${EXPIRES}=([^&]*))?$`)
/** Whether a raw query names one of the three (as a parameter name, not inside a value). */
const MENTION = new RegExp(`(?:^|&)(?:${KEY_ID}|${SIGNATURE})=`)
const HEX_SHA256 = /^[0-9a-f]{64}$/
const UNIX_SECONDS = /^\d{1,12}$/

/** The lower-case hex HMAC-SHA256 of `signed` (a raw query, as its bytes are sent) under `secret`. */
export function signatureOf (signed: string, secret: string): string {
  return createHmac('sha256', secret).update(signed, 'utf8').digest('hex')
}

/**
 * `query` (without its `?`) signed for `tenant`: `&keyId=` (and `&expires=` when given) appended, then the signature
 * of all that. The query is taken as it is written (its escapes kept): the service checks the bytes it receives.
 */
export function signQuery (query: string, tenant: string, secret: string, expires?: number): string {
  const bare = query.startsWith('?') ? query.slice(1) : query
  const signed = `${bare}${bare === '' ? '' : '&'}${KEY_ID}=${encodeURIComponent(tenant)}` +
    (expires === undefined ? '' : `&${EXPIRES}=${Math.floor(expires)}`)
  return `${signed}${SIGNATURE_MARK}${signatureOf(signed, secret)}`
}

/** Whether a raw query (without its `?`) is a signed link's attempt: it names `keyId` or `signature`. */
export function isSignedLink (raw: string): boolean {
  return MENTION.test(raw)
}

function refuse (part: 'keyId' | 'signature' | 'expires', why: string): AppError {
  return new AppError('ESIGNATURE', { data: { [part]: why } })
}

function decoded (text: string): string | undefined {
  try {
    return decodeURIComponent(text)
  } catch {
    return undefined
  }
}

/** Whether `presented` (64 lower-case hex digits) is the HMAC of `signed` under one of `secrets`, in constant time. */
function verifies (signed: string, presented: string, secrets: readonly string[]): boolean {
  const given = Buffer.from(presented, 'hex')
  let match = false
  for (const secret of secrets) {
    const expected = createHmac('sha256', secret).update(signed, 'utf8').digest()
    // Every secret is tried (no early exit), so the time does not tell which one matched.
    match = timingSafeEqual(given, expected) || match
  }
  return match
}

/**
 * The tenant a signed link is served as, or 403 ESIGNATURE with `data` naming the part that failed: `signature`
 * (missing, not last, not 64 lower-case hex digits, or not verifying), `keyId` (missing from its place, unknown, or a
 * tenant without `signing` secrets) or `expires` (not unix seconds, or past). The signature is checked before the
 * expiry, so a link whose `expires` was edited is refused for its signature. `raw` is the query without its `?`.
 */
export function verifySignedLink (raw: string, directory: TenantDirectory, nowMs: number): Tenant {
  const at = raw.lastIndexOf(SIGNATURE_MARK)
  if (at === -1) throw refuse(SIGNATURE, 'A signed link ends in `&signature=<hex>`.')
  const presented = raw.slice(at + SIGNATURE_MARK.length)
  if (presented.includes('&')) throw refuse(SIGNATURE, 'The `signature` must be the last parameter.')
  const signed = raw.slice(0, at)
  const tail = TAIL.exec(signed)
  if (tail === null) throw refuse(KEY_ID, 'A signed link names its tenant in `keyId`, just before `expires` (if any) and `signature`.')
  const name = decoded(tail[1]!)
  const tenant = name === undefined || name === '' ? undefined : directory.byName(name)
  if (tenant === undefined || tenant.signing.length === 0) throw refuse(KEY_ID, 'No tenant of this name signs links.')
  if (!HEX_SHA256.test(presented)) throw refuse(SIGNATURE, 'The `signature` must be 64 lower-case hex digits (HMAC-SHA256).')
  if (!verifies(signed, presented, tenant.signing)) throw refuse(SIGNATURE, 'The `signature` does not verify.')
  const expires = tail[2]
  if (expires !== undefined) {
    if (!UNIX_SECONDS.test(expires)) throw refuse(EXPIRES, 'The `expires` must be a time in unix seconds.')
    if (Number(expires) * 1000 <= nowMs) throw refuse(EXPIRES, `The link expired at ${new Date(Number(expires) * 1000).toISOString()}.`)
  }
  return tenant
}
