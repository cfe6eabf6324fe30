// A real HTTP implementation of the `Probe` contract (src/net/types.ts) for tests, which must only ever connect
// to 127.0.0.1: every host name is pinned to 127.0.0.1 in the connection's DNS lookup (as the guarded client
// pins the address it checked), and IP literals other than 127.0.0.1 are refused. So fixture pages can live on
// names like `news.example.co.uk` and still be served by the loopback test server.
import { isIP } from 'node:net'
import type { LookupAddress, LookupOptions } from 'node:dns'
import { Agent, request } from 'undici'
import { AppError } from '../../src/errors.ts'
import type { ProbeOptions, ProbeResult } from '../../src/net/types.ts'

export const LOOPBACK = '127.0.0.1'
const DEFAULT_MAX_BYTES = 64 * 1024
const MAX_REDIRECTS = 10

export interface FetchedResponse {
  url: string
  statusCode: number
  headers: Record<string, string>
  body: Buffer
}

export interface LoopbackClient {
  /** Ranged GET of the first bytes (the `Probe` contract). */
  probe: (url: string, options: ProbeOptions) => Promise<ProbeResult>
  /** A whole GET following redirects, as the pipeline fetches a target before extraction. */
  fetch: (url: string, signal: AbortSignal) => Promise<FetchedResponse>
  close: () => Promise<void>
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void

function pinnedLookup (_hostname: string, options: LookupOptions, callback: LookupCallback): void {
  if (options.all === true) callback(null, [{ address: LOOPBACK, family: 4 }])
  else callback(null, LOOPBACK, 4)
}

function assertLoopbackUrl (url: URL): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new AppError('EFORBIDDENURL', { data: { url: url.href }, cause: new Error(`scheme ${url.protocol}`) })
  }
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname
  if (isIP(host) !== 0 && host !== LOOPBACK) {
    throw new AppError('EFORBIDDENURL', { data: { url: url.href }, cause: new Error(`address ${host} is not loopback`) })
  }
}

function flattenHeaders (raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue
    headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value
  }
  return headers
}

/** The total size from `content-range: bytes a-b/total`, else a full response's `content-length`. */
export function totalSizeOf (statusCode: number, headers: Record<string, string>): number | null {
  const range = /\/(\d+)\s*$/.exec(headers['content-range'] ?? '')
  if (range !== null) return Number(range[1])
  if (statusCode === 200 && headers['content-length'] !== undefined) {
    const length = Number(headers['content-length'])
    return Number.isSafeInteger(length) && length >= 0 ? length : null
  }
  return null
}

export function createLoopbackClient (): LoopbackClient {
  const agent = new Agent({ connect: { lookup: pinnedLookup } })

  async function get (url: string, signal: AbortSignal, maxBytes: number, range: boolean) {
    let current = url
    for (let hop = 0; ; hop++) {
      const target = new URL(current)
      assertLoopbackUrl(target)
      let response: Awaited<ReturnType<typeof request>>
      try {
        response = await request(target, {
          dispatcher: agent,
          method: 'GET',
          signal,
          headers: range ? { range: `bytes=0-${maxBytes - 1}`, 'accept-encoding': 'identity' } : { 'accept-encoding': 'identity' }
        })
      } catch (err) {
        if (signal.aborted) throw err
        throw new AppError('EINVALURL', { data: { url: current }, cause: err })
      }
      const headers = flattenHeaders(response.headers)
      if (response.statusCode >= 300 && response.statusCode < 400 && headers.location !== undefined) {
        await response.body.dump()
        if (hop >= MAX_REDIRECTS) throw new AppError('EMAXREDIRECTS')
        current = new URL(headers.location, current).href
        continue
      }
      const chunks: Buffer[] = []
      let length = 0
      for await (const chunk of response.body) {
        const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array)
        chunks.push(buffer)
        length += buffer.length
        if (length >= maxBytes) break
      }
      if (!response.body.destroyed) response.body.destroy()
      const body = Buffer.concat(chunks).subarray(0, maxBytes)
      return { url: current, statusCode: response.statusCode, headers, body }
    }
  }

  return {
    async probe (url, options) {
      const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES
      const result = await get(url, options.signal, maxBytes, true)
      return { ...result, totalSize: totalSizeOf(result.statusCode, result.headers) }
    },
    fetch (url, signal) {
      return get(url, signal, 10 * 1024 * 1024, false)
    },
    close () {
      return agent.close()
    }
  }
}
