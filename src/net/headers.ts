// Hop-by-hop headers (RFC 9110 §7.6.1): they describe one connection, not the resource, so no proxy forwards them and
// an answer's `headers` never reports them (docs/api.md §4.1). In browser mode the connection Chromium read the
// target on was our egress proxy's, whose own `connection`/`keep-alive` would otherwise pass for the target's.

/** The hop-by-hop headers, and the proxy's own. */
export const HOP_BY_HOP: ReadonlySet<string> = new Set([
  'connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer',
  'transfer-encoding', 'upgrade'
])

/** The header names a `connection` header's value lists (hop-by-hop too), lower-case. */
export function connectionOptions (value: string | undefined): Set<string> {
  const named = new Set<string>()
  for (const token of (value ?? '').split(',')) {
    const name = token.trim().toLowerCase()
    if (name !== '') named.add(name)
  }
  return named
}

/** A response's end-to-end headers (names lower-case): the hop-by-hop ones, and those its `connection` lists, left out. */
export function endToEndHeaders (headers: Readonly<Record<string, string>>): Record<string, string> {
  const named = connectionOptions(headers.connection)
  // fromEntries defines own properties, so a `__proto__` header stays a plain key.
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name) && !named.has(name)))
}
