// What counts as a web URL, decided once: the http and https schemes with a host. Every other scheme (data:,
// javascript:, file:, ...) is something else, whatever the caller does with it.

/** The absolute http(s) URL `value` names (resolved against `base` when given), as its href; else undefined. */
export function toHttpUrl (value: string, base?: string): string | undefined {
  try {
    const url = new URL(value.trim(), base)
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') return undefined
    return url.href
  } catch {
    return undefined
  }
}

/**
 * Whether `text` is itself an absolute http(s) URL, written out with `http://` or `https://`: a source given by URL
 * rather than inline (a script, a style, a theme, an overlay background). `http:foo` parses, but is not written as one.
 */
export function isHttpUrl (text: string): boolean {
  return /^https?:\/\//i.test(text.trim()) && toHttpUrl(text) !== undefined
}

const DEFAULT_PORTS: Readonly<Record<string, number>> = { 'http:': 80, 'https:': 443, 'ws:': 80, 'wss:': 443 }

/** The port a scheme (`http:`, `https:`, `ws:`, `wss:`) connects to when a URL names none; undefined for others. */
export function defaultPort (protocol: string): number | undefined {
  return DEFAULT_PORTS[protocol]
}

/** The port `url` connects to: its own, else its scheme's default; undefined for a scheme with none. */
export function effectivePort (url: URL): number | undefined {
  return url.port === '' ? defaultPort(url.protocol) : Number(url.port)
}
