// The address guard (docs/api.md §10): literal URL checks, and the resolve-then-check that yields the one address a
// connection may go to. The decisions themselves live in address-policy.ts; this file adds DNS and AppErrors.

import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { AppError } from '../errors.ts'
import { decideAddress, isBlockedHostname, isExempt, isExemptHost, parseAllowList } from './address-policy.ts'
import { effectivePort } from '../util/url.ts'

export interface ResolvedAddress {
  address: string
  family: 4 | 6
}

/** Resolves a host name to all of its addresses (an empty list or a rejection means it does not resolve). */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>

export interface AddressGuardOptions {
  /** ALLOW_PRIVATE_HOSTS: exact `host:port` entries exempt from the address checks. */
  allowPrivateHosts: readonly string[]
  /** Defaults to the system resolver (`dns.promises.lookup`, all addresses, in the resolver's order). */
  resolve?: Resolver
}

export interface AddressGuard {
  /**
   * The checks that need no DNS: http(s) only and a non-empty host (EINVALURL), no `localhost`/`*.localhost` and
   * no blocked IP literal (EFORBIDDENURL), unless the URL's host:port is exempt.
   */
  assertUrlAllowed (url: URL): void
  /**
   * Resolves `hostname` (an IP literal is taken as is), checks EVERY address it resolves to, and returns the one
   * address to connect to. A blocked address refuses the whole name (EFORBIDDENURL); a name that does not resolve
   * gives EINVALURL. An exempt host:port pair skips the address check but is still resolved.
   */
  resolveChecked (hostname: string, port: number): Promise<ResolvedAddress>
  /** assertUrlAllowed, then resolveChecked on the URL's host and effective port: the full pre-flight check. */
  assertUrlResolvesAllowed (url: URL): Promise<void>
  /** Whether the URL's host and effective port are exempt (ALLOW_PRIVATE_HOSTS). */
  isExempt (url: URL): boolean
}

export async function systemResolver (hostname: string): Promise<ResolvedAddress[]> {
  const answers = await lookup(hostname, { all: true, order: 'verbatim' })
  return answers.map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 }))
}

function invalidUrl (detail: string, cause?: unknown): AppError {
  return new AppError('EINVALURL', { data: { url: detail }, cause })
}

function forbidden (detail: string, cause: unknown): AppError {
  return new AppError('EFORBIDDENURL', { data: { url: detail }, cause })
}

/**
 * Prefers the first IPv4 answer: a server-side fetcher commonly runs where IPv6 egress is missing, and only one
 * address is tried so that the connected address is exactly the checked one.
 */
function pickAddress (answers: readonly ResolvedAddress[]): ResolvedAddress | undefined {
  return answers.find((answer) => answer.family === 4) ?? answers[0]
}

export function createAddressGuard (options: AddressGuardOptions): AddressGuard {
  const allow = parseAllowList(options.allowPrivateHosts)
  const resolve = options.resolve ?? systemResolver

  function assertUrlAllowed (url: URL): void {
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw invalidUrl(`The URL \`${url.href}\` is not valid: only http and https URLs are supported.`,
        new Error(`unsupported scheme ${url.protocol}`))
    }
    if (url.hostname === '') {
      throw invalidUrl(`The URL \`${url.href}\` is not valid: it has no host.`, new Error('empty host'))
    }
    if (isExempt(url, allow)) return
    if (isBlockedHostname(url.hostname)) {
      throw forbidden(`The URL \`${url.href}\` points to an address that is not allowed.`,
        new Error(`blocked host name ${url.hostname}`))
    }
    const literal = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname
    if (isIP(literal) !== 0) {
      const decision = decideAddress(literal)
      if (!decision.allowed) {
        throw forbidden(`The URL \`${url.href}\` points to an address that is not allowed.`,
          new Error(`blocked address literal ${literal}: ${decision.reason}`))
      }
    }
  }

  async function resolveChecked (hostname: string, port: number): Promise<ResolvedAddress> {
    const host = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname
    if (host === '') throw invalidUrl('The URL is not valid: it has no host.', new Error('empty host'))
    const exempt = isExemptHost(host, port, allow)

    const family = isIP(host)
    if (family !== 0) {
      const decision = exempt ? undefined : decideAddress(host)
      if (decision !== undefined && !decision.allowed) {
        throw forbidden(`The address \`${host}\` is not allowed.`, new Error(`blocked address literal ${host}: ${decision.reason}`))
      }
      return { address: host, family: family === 6 ? 6 : 4 }
    }

    if (!exempt && isBlockedHostname(host)) {
      throw forbidden(`The host \`${host}\` points to an address that is not allowed.`, new Error(`blocked host name ${host}`))
    }

    let answers: ResolvedAddress[]
    try {
      answers = await resolve(host)
    } catch (err) {
      throw invalidUrl(`The host \`${host}\` does not resolve.`, err)
    }
    // Trust only what parses as an IP, and take the family from the address itself.
    const addresses: ResolvedAddress[] = []
    for (const { address } of answers) {
      const kind = isIP(address)
      if (kind === 0) {
        if (!exempt) throw forbidden(`The host \`${host}\` points to an address that is not allowed.`, new Error(`resolver answered a non-IP for ${host}`))
        continue
      }
      addresses.push({ address, family: kind === 6 ? 6 : 4 })
    }
    if (!exempt) {
      for (const { address } of addresses) {
        const decision = decideAddress(address)
        if (!decision.allowed) {
          // The resolved address stays in the internal cause; the client only learns that it is not allowed.
          throw forbidden(`The host \`${host}\` resolves to an address that is not allowed.`,
            new Error(`${host} resolves to ${address}: ${decision.reason}`))
        }
      }
    }
    const chosen = pickAddress(addresses)
    if (chosen === undefined) throw invalidUrl(`The host \`${host}\` does not resolve.`, new Error(`no address for ${host}`))
    return chosen
  }

  async function assertUrlResolvesAllowed (url: URL): Promise<void> {
    assertUrlAllowed(url)
    // assertUrlAllowed lets only http(s) through, which always have a port.
    await resolveChecked(url.hostname, effectivePort(url) ?? 80)
  }

  return {
    assertUrlAllowed,
    resolveChecked,
    assertUrlResolvesAllowed,
    isExempt: (url) => isExempt(url, allow)
  }
}
