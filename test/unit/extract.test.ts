// The pieces of `data` rules that need no page (docs/api.md §3.3, §14): the document parsed once and shared with
// the metadata extractor, the types, and the Markdown converter.
import { describe, expect, it } from 'vitest'
import { createMetadataExtractor } from '../../src/metadata/extractor.ts'
import { parseTarget, parsedHtmlOf, toMarkdown } from '../../src/extract/index.ts'
import { applyType } from '../../src/extract/types.ts'
import type { Probe } from '../../src/net/types.ts'

const noProbe: Probe = async () => { throw new Error('no probe expected') }
const URL_ = 'http://example.test/dir/page'

describe('one parse per request', () => {
  it('hands the parsed document to metascraper instead of parsing the body again', async () => {
    const body = Buffer.from('<!doctype html><title>From the body</title>')
    const document = parseTarget({ url: URL_, headers: { 'content-type': 'text/html' }, body, rendered: false }, 1024 * 1024)
    // The shared document is the one read: change it, and the metadata follows.
    document.$('title').text('From the parsed document')
    const result = await createMetadataExtractor({ probe: noProbe }).extract({
      url: URL_, statusCode: 200, headers: { 'content-type': 'text/html' }, body, fields: ['title'],
      ping: { image: false, logo: false }, signal: new AbortController().signal, document: parsedHtmlOf(document)
    })
    expect(result.title).toBe('From the parsed document')
  })

  it('takes the text of a rendered JSON or text target back out of the browser viewer', () => {
    const body = Buffer.from('<html><head></head><body><pre>{"a":1}</pre><div class="json-formatter-container"></div></body></html>')
    const document = parseTarget({ url: URL_, headers: { 'content-type': 'application/json' }, body, rendered: true }, 1024)
    expect(document).toMatchObject({ kind: 'json', source: '{"a":1}' })
    const fetched = parseTarget({ url: URL_, headers: { 'content-type': 'application/json' }, body: Buffer.from('{"a":1}'), rendered: false }, 1024)
    expect(fetched.$.html()).toBe(document.$.html())
  })
})

describe('types', () => {
  const context = { url: URL_, media: async () => null }
  it.each([
    ['number', '€ 1,299.50', 1299.5],
    ['number', 'none', null],
    ['boolean', 'Off', false],
    ['string', 42, '42'],
    ['object', '[1]', [1]],
    ['object', '"text"', null],
    ['email', 'mailto:Jane%40Example.com?subject=hi', 'jane@example.com'],
    ['email', 'a@x.io <img src="logo@2x.png"> B@x.io a@X.io', ['a@x.io', 'b@x.io']],
    ['ip', '::1', '::1'],
    ['ip', '1.2.3', null],
    ['lang', 'pt_BR', 'pt'],
    ['regexp', '/a+/gi', '/a+/gi'],
    ['regexp', '/(/', null],
    ['url', '../x?q=1', 'http://example.test/x?q=1'],
    ['url', 'javascript:alert(1)', null],
    ['url', 'HTTP://EXAMPLE.test:80/a b', 'http://example.test/a%20b'],
    ['date', 'not a date', null],
    ['title', '  A \n title ', 'A title'],
    ['author', 'https://example.com/jane', null],
    ['auto', '', null]
  ] as const)('%s of %j is %j', async (type, value, expected) => {
    expect(await applyType(value, type, context)).toEqual(expected)
  })
})

describe('Markdown', () => {
  it('writes CommonMark with ATX headings, - bullets, fenced code, GitHub tables and absolute URLs', () => {
    const markdown = toMarkdown(`<h2>Title</h2><ul><li>one</li><li>two</li></ul>
      <p><a href="/a">a</a> <a href="javascript:void(0)">js</a> <img src="i.png" alt="i"></p>
      <pre><code class="language-ts">let a = 1</code></pre>
      <table><tr><th>H</th></tr><tr><td>c</td></tr></table>
      <template><p>template</p></template><noscript>noscript</noscript>`, URL_)
    expect(markdown).toBe([
      '## Title', '', '-   one', '-   two', '', '[a](http://example.test/a) js ![i](http://example.test/dir/i.png)', '',
      '```ts', 'let a = 1', '```', '', '| H   |', '| --- |', '| c   |'
    ].join('\n'))
  })

  it('converts a whole document as its body: head content is never text, and nothing parses the page twice', async () => {
    const { readFileSync } = await import('node:fs')
    for (const page of ['test/fixtures/pages/rules/index.html', 'test/fixtures/pages/article/index.html']) {
      const html = readFileSync(page, 'utf8')
      const document = parseTarget({ url: URL_, headers: { 'content-type': 'text/html' }, body: Buffer.from(html), rendered: false }, 1024 * 1024)
      // The whole-document conversion reads the decoded source, not the tree (which is parsed here only to compare).
      const whole = toMarkdown(document.source, URL_)
      expect(whole).toBe(toMarkdown(document.$('body').html() ?? '', URL_))
      expect(whole).not.toMatch(/Pagecast Tests<\/title>|application\/ld\+json/)
    }
    const withHead = '<!doctype html><html><head><title>T</title><meta name="d" content="x"><style>p{}</style>' +
      '<script type="application/ld+json">{"a":1}</script><base href="/b/"></head><body hidden-not><p>Body</p></body></html>'
    expect(toMarkdown(withHead, URL_)).toBe('Body')
  })

  it('leaves out hidden elements, scripts and styles', () => {
    expect(toMarkdown('<p>kept</p><p hidden>h</p><div aria-hidden="TRUE">a</div><span style="display: none !important">d</span><script>s()</script><style>p{}</style>', URL_))
      .toBe('kept')
  })
})
