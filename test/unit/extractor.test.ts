// The metadata extractor's HTML limit is the configured MAX_HTML_BYTES, passed in (docs/api.md §9).
import { describe, expect, it } from 'vitest'
import { createMetadataExtractor } from '../../src/metadata/extractor.ts'
import { DEFAULT_MAX_HTML_BYTES } from '../../src/config.ts'
import type { Probe } from '../../src/net/types.ts'

const noProbe: Probe = async () => { throw new Error('no probe expected') }

/** An HTML document whose <title> starts after `fillerBytes` bytes. */
function lateTitle (fillerBytes: number): Buffer {
  return Buffer.from(`<!doctype html><html><head><meta name="filler" content="${'a'.repeat(fillerBytes)}"><title>Late title</title></head><body></body></html>`)
}

async function titleOf (body: Buffer, maxHtmlBytes?: number): Promise<unknown> {
  const extractor = createMetadataExtractor({ probe: noProbe, ...(maxHtmlBytes === undefined ? {} : { maxHtmlBytes }) })
  const result = await extractor.extract({
    url: 'http://example.test/',
    statusCode: 200,
    headers: { 'content-type': 'text/html; charset=utf-8' },
    body,
    fields: ['title'],
    ping: { image: false, logo: false },
    signal: new AbortController().signal
  })
  return result.title
}

describe('MAX_HTML_BYTES in the extractor', () => {
  it('parses no HTML past the configured limit', async () => {
    expect(await titleOf(lateTitle(4000), 8192)).toBe('Late title')
    expect(await titleOf(lateTitle(10_000), 8192)).toBeNull()
  })

  it('defaults to the config default, 10 MiB', async () => {
    expect(DEFAULT_MAX_HTML_BYTES).toBe(10 * 1024 * 1024)
    expect(await titleOf(lateTitle(100_000))).toBe('Late title')
    expect(await titleOf(lateTitle(100_000), 50_000)).toBeNull()
  })
})
