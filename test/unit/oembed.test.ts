// oEmbed pieces that need no network (docs/api.md §3.4 `iframe`): the bundled registry's matching and the endpoint
// URL that would be called, discovery links, response parsing by type, and scripts moved out of the HTML. Nothing
// here connects anywhere: the client given to createOembed throws if it is used.
import { describe, expect, it } from 'vitest'
import { load } from 'cheerio'
import {
  bundledProviders, createOembed, createRegistry, discoverEndpoints, discoverOembed, iframeOf, registryEndpoint, splitScripts, withParams
} from '../../src/oembed/index.ts'
import { compileScheme } from '../../src/oembed/registry.ts'
import type { HttpClient } from '../../src/net/types.ts'

const noHttp: HttpClient = {
  fetchPage: async () => { throw new Error('no connection expected') },
  probe: async () => { throw new Error('no connection expected') },
  close: async () => {}
}

describe('the bundled registry (oembed-providers)', () => {
  const providers = bundledProviders()
  const registry = createRegistry(providers)

  it('is the oembed.com list, read from the package', () => {
    expect(providers.length).toBeGreaterThan(300)
    expect(registry.size).toBeGreaterThan(500)
  })

  it.each([
    ['https://www.youtube.com/watch?v=x', 'https://www.youtube.com/oembed?url=https%3A%2F%2Fwww.youtube.com%2Fwatch%3Fv%3Dx&format=json'],
    ['https://youtu.be/abc', 'https://www.youtube.com/oembed?url=https%3A%2F%2Fyoutu.be%2Fabc&format=json'],
    // `{format}` in the path is filled in and no format parameter is added.
    ['https://vimeo.com/76979871', 'https://vimeo.com/api/oembed.json?url=https%3A%2F%2Fvimeo.com%2F76979871'],
    // A scheme written for http matches the https page.
    ['https://www.flickr.com/photos/bees/2341623661/', 'https://www.flickr.com/services/oembed/?url=https%3A%2F%2Fwww.flickr.com%2Fphotos%2Fbees%2F2341623661%2F&format=json']
  ])('maps %s to %s', (page, endpoint) => {
    expect(registryEndpoint(registry, page)).toEqual({ url: endpoint, format: 'json', source: 'registry' })
  })

  it.each([
    'https://example.com/watch?v=x',
    // A host wildcard stands for host characters only.
    'https://evil.test/.youtube.com/watch?v=x',
    'https://www.youtube.com.evil.test/watch?v=x',
    'ftp://www.youtube.com/watch?v=x',
    'not a url'
  ])('does not map %s', (page) => {
    expect(registryEndpoint(registry, page)).toBeNull()
  })

  it('adds the iframe.* parameters, lower-cased by the parser, and keeps the page url', () => {
    const endpoint = registryEndpoint(registry, 'https://www.youtube.com/watch?v=x')
    expect(endpoint).not.toBeNull()
    if (endpoint === null) return
    const url = new URL(withParams(endpoint, { maxwidth: '400', url: 'https://elsewhere.test/' }).url)
    expect(url.searchParams.get('maxwidth')).toBe('400')
    expect(url.searchParams.get('url')).toBe('https://www.youtube.com/watch?v=x')
  })

  it('lists discovery links first, then the registry, without calling anything', () => {
    const client = createOembed({ http: noHttp, providers })
    const $ = load('<link rel="alternate" type="application/json+oembed" href="/oembed?url=x">', { baseURI: 'https://www.youtube.com/watch?v=x' })
    const discovered = discoverOembed($, 'https://www.youtube.com/watch?v=x')
    expect(client.endpointsFor({ url: 'https://www.youtube.com/watch?v=x', discovered, params: { maxheight: '300' } }).map((e) => [e.source, e.url])).toEqual([
      ['discovery', 'https://www.youtube.com/oembed?url=x&maxheight=300'],
      ['registry', 'https://www.youtube.com/oembed?url=https%3A%2F%2Fwww.youtube.com%2Fwatch%3Fv%3Dx&format=json&maxheight=300']
    ])
  })
})

describe('scheme patterns', () => {
  it.each([
    ['https://*.example.com/v/*', 'www.example.com/v/1', true],
    ['https://*.example.com/v/*', 'example.com/v/1', false],
    ['https://example.com', 'example.com/', true],
    ['https://example.com/a?b=*', 'example.com/a?b=1', true],
    ['https://example.com/a?b=*', 'example.com/aXb=1', false],
    ['spotify:*', 'spotify:track', false]
  ])('%s against %s is %s', (scheme, subject, expected) => {
    expect(compileScheme(scheme)?.test(subject) ?? false).toBe(expected)
  })
})

describe('discovery links', () => {
  const page = 'https://site.test/a/page'
  it('takes the first JSON and the first XML link, JSON first, resolved against the page', () => {
    const $ = load(`<head>
      <link rel="alternate" type="text/xml+oembed" href="/x.xml">
      <link rel="ALTERNATE nofollow" type="Application/JSON+oembed" href="../j.json">
      <link rel="alternate" type="application/json+oembed" href="/second.json">
      <link rel="stylesheet" type="application/json+oembed" href="/not-alternate">
      <link rel="alternate" type="application/json+oembed" href="javascript:alert(1)">
    </head>`)
    expect(discoverEndpoints($, page)).toEqual([
      { url: 'https://site.test/j.json', format: 'json', source: 'discovery' },
      { url: 'https://site.test/x.xml', format: 'xml', source: 'discovery' }
    ])
  })

  it('finds nothing in a page without links', () => {
    expect(discoverEndpoints(load('<p>nothing</p>'), page)).toEqual([])
  })
})

describe('responses', () => {
  const endpoint = 'https://provider.test/oembed'
  it('moves scripts out of the html: src absolute, async/defer booleans, charset or null; inline ones dropped', () => {
    const html = '<blockquote class="t"><p>Hi &amp; bye</p></blockquote>\n<script async src="//cdn.test/w.js" charset="utf-8"></script>' +
      '<script defer src="/x.js"></script><script>alert(1)</script><script src="javascript:void 0"></script>'
    expect(splitScripts(html, endpoint)).toEqual({
      html: '<blockquote class="t"><p>Hi &amp; bye</p></blockquote>\n',
      scripts: [
        { src: 'https://cdn.test/w.js', async: true, defer: false, charset: 'utf-8' },
        { src: 'https://provider.test/x.js', async: false, defer: true, charset: null }
      ]
    })
  })

  it('keeps html without scripts as sent', () => {
    expect(splitScripts('<iframe src="https://p.test/e"  allowfullscreen></iframe>', endpoint))
      .toEqual({ html: '<iframe src="https://p.test/e"  allowfullscreen></iframe>', scripts: [] })
  })

  it.each([
    ['rich with html', '{"type":"rich","version":"1.0","html":"<div>r</div>"}', { html: '<div>r</div>', scripts: [] }],
    ['video with html', '{"type":"video","html":"<iframe src=\\"https://p.test/v\\"></iframe>","width":640}', { html: '<iframe src="https://p.test/v"></iframe>', scripts: [] }],
    ['video without html', '{"type":"video","width":640}', null],
    ['rich with empty html', '{"type":"rich","html":"  "}', null],
    ['photo without html: an img, escaped', '{"type":"photo","url":"/p.jpg?a=1&b=\\"","width":300,"height":"200","title":"<Bees>"}',
      { html: '<img src="https://provider.test/p.jpg?a=1&amp;b=%22" width="300" height="200" alt="&lt;Bees&gt;">', scripts: [] }],
    ['photo with a javascript url', '{"type":"photo","url":"javascript:alert(1)"}', null],
    ['photo with html', '{"type":"photo","url":"https://p.test/p.jpg","html":"<figure>f</figure>"}', { html: '<figure>f</figure>', scripts: [] }],
    ['link without html', '{"type":"link","title":"t"}', null],
    ['link with html', '{"type":"link","html":"<a href=\\"https://p.test\\">l</a>"}', { html: '<a href="https://p.test">l</a>', scripts: [] }],
    ['bad JSON', '{"type":"rich","html":', null],
    ['a JSON array', '[{"type":"rich","html":"<b>x</b>"}]', null],
    ['a JSON string', '"<b>x</b>"', null],
    ['XML rich', '<?xml version="1.0" encoding="utf-8"?>\n<oembed><type>rich</type><html>&lt;div&gt;x&lt;/div&gt;&lt;script async src="https://cdn.test/a.js"&gt;&lt;/script&gt;</html></oembed>',
      { html: '<div>x</div>', scripts: [{ src: 'https://cdn.test/a.js', async: true, defer: false, charset: null }] }],
    ['XML with CDATA', '<oembed><type>video</type><html><![CDATA[<iframe src="https://p.test/v"></iframe>]]></html></oembed>',
      { html: '<iframe src="https://p.test/v"></iframe>', scripts: [] }],
    ['XML photo', '<oembed><type>photo</type><url>https://p.test/p.png</url><width>10</width><height>20</height></oembed>',
      { html: '<img src="https://p.test/p.png" width="10" height="20" alt="">', scripts: [] }],
    ['XML with another root', '<html><type>rich</type><html>x</html></html>', null],
    ['broken XML', '<oembed><type>rich</type><html>', null]
  ])('%s', (_name, body, expected) => {
    expect(iframeOf(body, endpoint)).toEqual(expected)
  })
})

describe('answers past the DOM bounds (issue 20)', () => {
  const deep = '<script src="https://cdn.test/e.js"></script><p>first</p>' + '<div>'.repeat(100_000) + 'deep text' + '</div>'.repeat(100_000)

  it('reads a JSON answer whose html nests 100,000 levels quickly, without overflowing the stack', () => {
    const started = performance.now()
    const iframe = iframeOf(JSON.stringify({ type: 'rich', html: deep }), 'https://provider.test/oembed')
    // Generous for a loaded machine: the bounded answer takes milliseconds.
    expect(performance.now() - started).toBeLessThan(2_000)
    expect(iframe?.html.startsWith('<p>first</p>')).toBe(true)
    expect(iframe?.scripts.map((script) => script.src)).toEqual(['https://cdn.test/e.js'])
  })

  it('reads an XML answer nested 100,000 levels quickly, without overflowing the stack', () => {
    const xml = `<oembed><type>rich</type><html>x</html><title>${'<b>'.repeat(100_000)}t${'</b>'.repeat(100_000)}</title></oembed>`
    const started = performance.now()
    expect(iframeOf(xml, 'https://provider.test/oembed')?.html).toBe('x')
    expect(performance.now() - started).toBeLessThan(2_000)
  })
})
