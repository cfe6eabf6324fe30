// The socket error codes that mean "the server could not be reached, or the connection to it went": the S3 client's
// plain-words failure and the job system's Redis connections (logged at debug, the store warns) both ask this.

const UNREACHABLE_CODES: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE'])

/** Whether `err` carries one of UNREACHABLE_CODES. */
export function isUnreachable (err: unknown): boolean {
  const code = (err as { code?: unknown } | null | undefined)?.code
  return typeof code === 'string' && UNREACHABLE_CODES.has(code)
}
