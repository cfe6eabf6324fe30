// The one answer to "is this HTML?" (src/media/content-kind.ts), as a table: the content type decides when it says
// something, the bytes when it says nothing. Every caller asks it (the plain fetch, prerender=auto, the metadata, the
// rules' document), so a row here is what all of them do.
import { describe, expect, it } from 'vitest'
import { isHtml } from '../../src/media/content-kind.ts'
import { classifyTarget } from '../../src/metadata/extractor.ts'
import { parseTarget } from '../../src/extract/document.ts'

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex')

const TABLE: Array<[contentType: string | undefined, body: string | Buffer, html: boolean]> = [
  ['text/html', '', true],
  ['text/html; charset=utf-8', '{"a":1}', true],
  ['  TEXT/HTML ;charset=latin1', 'plain words', true],
  ['application/xhtml+xml', '<?xml version="1.0"?><html/>', true],
  [undefined, '<!DOCTYPE html><html>', true],
  ['', '  \n<html lang="en">', true],
  [undefined, '\uFEFF<!doctype html>', true],
  [undefined, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('<html>')]), true],
  [undefined, '<div class="x">', true],
  [undefined, '<!-- a comment -->', true],
  ['application/octet-stream', '<head><title>t</title>', true],
  ['binary/octet-stream', '<p>text', true],
  [undefined, '{"a":1}', false],
  [undefined, '<htmlx>', false],
  [undefined, '<svg xmlns="http://www.w3.org/2000/svg">', false],
  [undefined, PNG, false],
  ['application/json', '<html>', false],
  ['text/plain', '<!doctype html><html>', false],
  ['text/xml', '<html>', false],
  ['image/svg+xml', '<html>', false],
  ['text/htmlx', '<html>', false]
]

describe('isHtml: one rule for the whole service', () => {
  it.each(TABLE)('%j with %j is HTML: %s', (contentType, body, html) => {
    expect(isHtml(contentType, Buffer.from(body))).toBe(html)
  })

  it('is what the metadata and the rules\' document take as HTML', () => {
    for (const [contentType, body, html] of TABLE) {
      const headers: Record<string, string> = contentType === undefined ? {} : { 'content-type': contentType }
      expect(classifyTarget(headers, Buffer.from(body)) === 'html', `${String(contentType)} ${String(body)}`).toBe(html)
      const document = parseTarget({ url: 'https://example.com/', headers, body: Buffer.from(body), rendered: false }, 1024 * 1024)
      expect(document.kind === 'html', `${String(contentType)} ${String(body)}`).toBe(html)
    }
  })

  it('reads only the first 512 bytes', () => {
    expect(isHtml(undefined, Buffer.from(' '.repeat(600) + '<html>'))).toBe(false)
  })
})
