// The security headers, decided once (docs/api.md §5, §8).

/** On every answer: a client takes the declared content type, never a sniffed one. */
export const NOSNIFF_HEADERS = { 'x-content-type-options': 'nosniff' } as const

/**
 * On embeds and stored files, whose bytes come from the target: opened directly they are shown in a sandbox with
 * no script, so a page or SVG that came through us cannot run as our origin.
 */
export const SANDBOX_HEADERS = {
  'content-security-policy': "sandbox; script-src 'none'",
  ...NOSNIFF_HEADERS
} as const
