// `data` rules (docs/api.md §3.3) through the API, on fixture pages served on loopback, with a real Chromium: one
// table of rules run with `prerender=false` (the fetched HTML) and `prerender=true` (the rendered DOM), which must
// give the same, expected values; `evaluate` and live form values in the page; media-typed rules probed; the main
// content; Markdown; and the official client, @microlink/mql, pointed at the app, returning our values unchanged.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import mql from '@microlink/mql'
import { build, qs, type Built } from '../helpers/build.ts'
import { startFixtureServer, type FixtureServer } from '../helpers/fixture-server.ts'

let fx: FixtureServer
let app: Built
let freeUrl: string
let page: string
let origin: string

beforeAll(async () => {
  fx = await startFixtureServer()
  origin = fx.origin
  page = `${origin}/rules/`
  for (const [path, type] of [['/rules/clip.mp4', 'video/mp4'], ['/rules/sound.mp3', 'audio/mpeg']] as const) {
    fx.route(path, (_req, res) => { res.writeHead(200, { 'content-type': type, 'content-length': 64 }); res.end(Buffer.alloc(64)) })
  }
  app = await build({ ALLOW_PRIVATE_HOSTS: fx.host, API_KEYS: 'k', BROWSER_CONCURRENCY: '1' })
  freeUrl = await app.free.listen({ port: 0, host: '127.0.0.1' })
}, 120_000)

afterAll(async () => {
  await app?.close()
  await fx?.close()
})

async function extract (query: Record<string, string | number | boolean>, data: Record<string, unknown>) {
  const res = await app.pro.inject({
    method: 'GET',
    url: `/?${qs({ ...query, data: JSON.stringify(data), force: true })}`,
    headers: { 'x-api-key': 'k' }
  })
  return res
}

const PARAGRAPH = 'The build farm used to spend most of its time recompiling'

// Field -> [rule(s), expected value, or a check of it].
const TABLE: Record<string, [unknown, unknown]> = {
  title: [{ selector: 'h1.headline', attr: 'text', type: 'title' }, 'The main story'],
  author: [{ selector: '.byline', attr: 'text', type: 'author' }, 'Ada Lovelace'],
  headlineHtml: [{ selector: 'h1.headline' }, '  The   main   story  '],
  leadOuter: [{ selector: 'p.lead', attr: 'outerHTML' },
    '<p class="lead">Paragraph with a <a href="../docs/guide?x=1#top" title="Guide">relative link</a> and <strong>bold</strong> text.</p>'],
  leadText: [{ selector: 'p.lead', attr: 'text' }, 'Paragraph with a relative link and bold text.'],
  leadMarkdown: [{ selector: 'p.lead', attr: 'markdown' }, 'Paragraph with a [relative link](ORIGIN/docs/guide?x=1#top "Guide") and **bold** text.'],
  leadDescription: [{ selector: 'p.lead', attr: 'text', type: 'description' }, 'Paragraph with a relative link and bold text.'],
  time: [{ selector: 'time', attr: 'datetime', type: 'date' }, '2024-02-29T10:30:00.000Z'],
  naturalDate: [{ selector: '#facts', attr: 'data-date', type: 'date' }, '2021-03-03T10:00:00.000Z'],
  epochDate: [{ selector: '#facts', attr: 'data-epoch', type: 'date' }, '2023-11-14T22:13:20.000Z'],
  ipFallbackAttr: [{ selector: '#facts', attr: ['data-missing', 'data-bad-ip', 'data-ip'], type: 'ip' }, '192.168.0.1'],
  badIp: [{ selector: '#facts', attr: 'data-bad-ip', type: 'ip' }, null],
  number: [{ selector: '.item', attr: 'data-price', type: 'number' }, 1299.5],
  boolean: [{ selector: '.item', attr: 'data-ok', type: 'boolean' }, true],
  object: [{ selector: '#facts', attr: 'data-json', type: 'object' }, { a: 1, b: [true] }],
  lang: [{ selector: '#facts', attr: 'data-lang', type: 'lang' }, 'fr'],
  regexp: [{ selector: '#facts', attr: ['data-bad-re', 'data-re'], type: 'regexp' }, '^a+b$'],
  string: [{ selector: '.item', attr: 'data-id', type: 'string' }, '1'],
  publisher: [{ selector: '#facts', attr: 'data-publisher', type: 'publisher' }, 'Acme Press'],
  url: [{ selector: '.lead a', attr: 'href', type: 'url' }, 'ORIGIN/docs/guide?x=1#top'],
  email: [{ selector: '.contact a', attr: 'href', type: 'email' }, 'sales@example.com'],
  emails: [{ attr: 'html', type: 'email' }, ['sales@example.com', 'support@example.com']],
  htmlLang: [{ attr: 'lang' }, 'en-GB'],
  items: [{
    selectorAll: '.item',
    attr: { name: { selector: 'a', attr: 'text' }, href: { selector: 'a', attr: 'href', type: 'url' }, id: { attr: 'data-id', type: 'number' } }
  }, [
    { name: 'First', href: 'ORIGIN/p/1', id: 1 },
    { name: 'Second', href: 'ORIGIN/p/2', id: 2 },
    { name: 'Third', href: 'https://example.com/p/3', id: 3 }
  ]],
  documentOrder: [{ selectorAll: ['.item:nth-child(3) a', '.items a', 'nav a'], attr: 'text' }, ['Home', 'About', 'First', 'Second', 'Third']],
  droppedItems: [{ selectorAll: '.item', attr: 'data-ok', type: 'boolean' }, [true, false]],
  prices: [{ selectorAll: '.item', attr: 'data-price', type: 'number' }, [1299.5, 15]],
  selectorFallback: [{ selector: ['.nope', 'p.brand'], attr: 'text' }, 'Pagecast Tests'],
  ruleFallback: [[{ selector: '.nope', attr: 'text' }, { selector: '#facts', attr: 'data-empty' }, { selector: '.brand', attr: 'text' }], 'Pagecast Tests'],
  miss: [{ selector: '.nope' }, null],
  allMiss: [[{ selector: '.nope' }, { selector: '#facts', attr: 'data-bad-ip', type: 'ip' }], null],
  emptyAll: [{ selectorAll: '.nope', attr: 'text' }, null],
  invalidSelector: [[{ selector: 'p[', attr: 'text' }, { selector: '.brand', attr: 'text' }], 'Pagecast Tests'],
  jsonOnHtml: [{ attr: 'json' }, null],
  inputVal: [{ selector: 'input[name=q]', attr: 'val' }, 'initial'],
  selectVal: [{ selector: 'select', attr: 'val' }, 'b'],
  textareaVal: [{ selector: 'textarea', attr: 'val' }, 'text area'],
  image: [[
    { selector: 'img[alt=missing]', attr: 'src', type: 'image' },
    { selector: 'img[alt=blocked]', attr: 'src', type: 'image' },
    { selector: 'img[alt=ok]', attr: 'src', type: 'image' }
  ], { url: 'ORIGIN/favicon.png', type: 'png', size: 96, size_pretty: '96 B' }],
  images: [{ selectorAll: 'img.cover', attr: 'src', type: 'image' }, [{ url: 'ORIGIN/favicon.png', type: 'png' }]],
  logo: [{ selector: 'link[rel=icon]', attr: 'href', type: 'logo' }, { url: 'ORIGIN/favicon.png', type: 'png' }],
  video: [{ selector: 'video', attr: 'src', type: 'video' }, { url: 'ORIGIN/rules/clip.mp4', type: 'mp4', size: 64 }],
  audio: [{ selector: 'audio', attr: 'src', type: 'audio' }, { url: 'ORIGIN/rules/sound.mp3', type: 'mp3', size: 64 }],
  mainText: [{ mainContent: true, attr: 'text' }, (value: unknown) => {
    expect(value).toContain('The main story')
    expect(value).toContain(PARAGRAPH)
    expect(value).not.toContain('Copyright footer text')
    expect(value).not.toContain('About')
    expect(value).not.toContain('Second')
  }],
  mainLinks: [{ mainContent: true, selectorAll: 'a', attr: 'href' }, ['ORIGIN/docs/guide?x=1#top']],
  mainMarkdown: [{ mainContent: true, attr: 'markdown' }, (value: unknown) => {
    expect(value).toContain('[relative link](ORIGIN/docs/guide?x=1#top "Guide")')
    expect(value).not.toContain('Copyright footer')
    expect(value).not.toContain('Home')
  }],
  storyMarkdown: [{ selector: '#story', attr: 'markdown' }, (value: unknown) => {
    expect(value).toMatch(/^# The main story\n/)
    expect(value).toContain('![ok](ORIGIN/favicon.png)')
    expect(value).toContain('![missing](ORIGIN/rules/missing.png)')
    // GitHub table (cells may be padded to the column's width).
    expect(String(value).replace(/ +\|/g, ' |')).toContain('| Name | Value |\n| --- | --- |\n| alpha | 1 |\n| beta | 2 |')
    expect(value).toContain('```js\nconst answer = 42\nconsole.log(answer)\n```')
    for (const gone of ['hidden div', 'aria hidden', 'invisible paragraph', 'script text', '.cover {']) expect(value).not.toContain(gone)
  }],
  wholeText: [{ attr: 'text' }, (value: unknown) => {
    expect(value).toMatch(/^Home About Pagecast Tests The main story By @Ada Lovelace/)
    expect(value).toContain('Copyright footer text')
  }]
}

function withOrigin (value: unknown): unknown {
  if (typeof value === 'string') return value.replaceAll('ORIGIN', origin)
  if (Array.isArray(value)) return value.map(withOrigin)
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withOrigin(v)]))
  return value
}

describe('one table of rules in both load modes', () => {
  const results: Record<string, Record<string, unknown>> = {}

  for (const prerender of [false, true]) {
    it(`gives the expected values with prerender=${String(prerender)}`, async () => {
      const rules = Object.fromEntries(Object.entries(TABLE).map(([field, [rule]]) => [field, rule]))
      const res = await extract({ url: page, prerender }, rules)
      expect(res.statusCode, res.body).toBe(200)
      expect(res.headers['x-fetch-mode']).toBe(prerender ? 'prerender' : 'fetch')
      const { data } = res.json()
      results[String(prerender)] = data
      for (const [field, [, expected]] of Object.entries(TABLE)) {
        if (typeof expected === 'function') {
          expected(typeof data[field] === 'string' ? data[field].replaceAll(origin, 'ORIGIN') : data[field])
        } else if (expected !== null && typeof expected === 'object' && !Array.isArray(expected)) {
          expect(data[field], field).toMatchObject(withOrigin(expected) as object)
        } else if (Array.isArray(expected) && expected.some((item) => typeof item === 'object' && item !== null && 'type' in item)) {
          expect(data[field], field).toMatchObject(withOrigin(expected) as object)
        } else {
          expect(data[field], field).toEqual(withOrigin(expected))
        }
      }
      // Metadata fields a rule does not name stay; those it names are overridden.
      expect(data.description).toBe('A page for data rules.')
      expect(data.date).toBe('2024-02-29T10:30:00.000Z')
    }, 60_000)
  }

  it('gives equal results in both modes', () => {
    expect(Object.keys(results)).toHaveLength(2)
    expect(results.true).toEqual(results.false)
  })
})

describe('evaluate, in the page', () => {
  it('gives the value of an expression or a function, through `type`; a throw is a miss', async () => {
    const throws = '() => { throw new Error("boom") }'
    const res = await extract({ url: page }, {
      title: { evaluate: 'document.title' },
      answer: { evaluate: '() => 40 + 2', type: 'number' },
      count: { evaluate: 'async () => document.querySelectorAll(".item").length' },
      object: { evaluate: '({ a: [1, "b"], c: undefined })' },
      thrown: { evaluate: throws },
      afterThrow: [{ evaluate: throws }, { selector: '.brand', attr: 'text' }],
      failsType: { evaluate: '"not a number"', type: 'number' },
      nested: { selector: '#story', attr: { heading: { evaluate: '() => document.querySelector("h1").textContent.trim()' } } }
    })
    expect(res.statusCode, res.body).toBe(200)
    // evaluate needs the browser, so prerender=auto renders at once.
    expect(res.headers['x-fetch-mode']).toBe('prerender')
    expect(res.json().data).toMatchObject({
      title: 'Rules fixture | Pagecast Tests',
      answer: 42,
      count: 3,
      object: { a: [1, 'b'] },
      thrown: null,
      afterThrow: 'Pagecast Tests',
      failsType: null,
      nested: { heading: 'The   main   story' }
    })
  })

  it('makes even prerender=false use the browser', async () => {
    const res = await extract({ url: page, prerender: false }, { title: { evaluate: 'document.title' } })
    // evaluate needs the browser, whatever prerender says (docs/api.md §3.3, §3.6).
    expect(res.headers['x-fetch-mode']).toBe('prerender')
    expect(res.json().data.title).toBe('Rules fixture | Pagecast Tests')
  })

  it('cannot run past the request\'s deadline: an endless loop ends in ETIMEOUT, and the browser serves the next request', async () => {
    // The one slot free, the last test's reset done: with the slot still held by a reset, a 3 s deadline on a loaded
    // machine is refused at admission (EBUSY: a job's measured time is ahead of it), which is not what this tests.
    await vi.waitFor(() => { expect(app.ctx.browser.stats().active).toBe(0) }, { timeout: 20_000 })
    const started = Date.now()
    const res = await extract({ url: page, timeout: 3000 }, { loop: { evaluate: '() => { while (true) {} }' } })
    expect(res.statusCode).toBe(504)
    expect(res.json().code).toBe('ETIMEOUT')
    // The loop never ends by itself: any bound shows the deadline ended it; this one leaves room for a loaded machine.
    expect(Date.now() - started).toBeLessThan(15_000)
    const next = await extract({ url: page }, { title: { evaluate: 'document.title' } })
    expect(next.statusCode).toBe(200)
    expect(next.json().data.title).toBe('Rules fixture | Pagecast Tests')
  }, 30_000)

  it('refuses source that does not parse with EINVALEVAL', async () => {
    const res = await extract({ url: page }, { broken: { evaluate: '() => {' } })
    expect(res.statusCode).toBe(400)
    expect(res.json().code).toBe('EINVALEVAL')
  })
})

describe('val', () => {
  const rules = {
    input: { selector: 'input[name=q]', attr: 'val' },
    select: { selector: 'select', attr: 'val' },
    textarea: { selector: 'textarea', attr: 'val' }
  }

  it('reads the live values in the browser, after a script changed them', async () => {
    const res = await extract({ url: `${origin}/rules/val.html`, prerender: true }, rules)
    expect(res.json().data).toMatchObject({ input: 'set by script', select: 'b', textarea: 'typed text' })
  })

  it('reads the markup (value attribute, selected option, textarea text) in fetch mode', async () => {
    const res = await extract({ url: `${origin}/rules/val.html`, prerender: false }, rules)
    expect(res.json().data).toMatchObject({ input: 'from the markup', select: 'a', textarea: 'markup text' })
  })
})

describe('media-typed rules and ping', () => {
  it('returns unchecked {url, type} objects with ping.image=false, and probes nothing', async () => {
    const before = fx.hitsOf('/rules/missing.png')
    const res = await extract({ url: page, prerender: false, 'ping.image': false, meta: false }, {
      image: { selector: 'img[alt=missing]', attr: 'src', type: 'image' }
    })
    // meta=false loads the page all the same for the rules, and says so.
    expect(res.headers['x-fetch-mode']).toBe('fetch')
    expect(res.json().data.image).toEqual({ url: `${origin}/rules/missing.png`, type: 'png', size: null, size_pretty: null, width: null, height: null })
    expect(fx.hitsOf('/rules/missing.png')).toBe(before)
  })
})

describe('targets that are not HTML', () => {
  const rules = { whole: { attr: 'json' }, text: { attr: 'text' }, markdown: { attr: 'markdown' } }

  it.each([false, true])('reads a JSON body whole (prerender=%s)', async (prerender) => {
    const res = await extract({ url: `${origin}/data.json`, prerender }, rules)
    expect(res.json().data).toMatchObject({
      whole: { hello: 'world', items: [1, 2, 3] },
      text: '{"hello":"world","items":[1,2,3]}',
      markdown: '{"hello":"world","items":\\[1,2,3\\]}'
    })
  })

  it('gives null for an image target', async () => {
    const res = await extract({ url: `${origin}/favicon.png`, prerender: false }, { text: { attr: 'text' } })
    expect(res.json().data.text).toBeNull()
  })
})

describe('mainContent', () => {
  it('falls back to the whole body when there is no article', async () => {
    const res = await extract({ url: `${origin}/plain/`, prerender: false }, { main: { mainContent: true, attr: 'text' } })
    expect(res.json().data.main).toBe('Nothing but a title and some text, and a favicon at the origin.')
  })

  it('is a boolean: anything else is EINVALDATA', async () => {
    const res = await extract({ url: page }, { main: { mainContent: 'maybe', attr: 'text' } })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toMatchObject({ code: 'EINVALDATA', data: { 'data.main': expect.stringContaining('mainContent') } })
  })
})

describe('@microlink/mql against the app', () => {
  // The official clients' collection rules (docs/api.md §3.3), sent the way mql encodes them.
  const collections = {
    links: { selectorAll: 'a', attr: 'href', type: 'url' },
    images: { selectorAll: 'img', attr: 'src', type: 'url' },
    videos: { selectorAll: 'video', attr: 'src', type: 'url' },
    audios: { selectorAll: 'audio', attr: 'src', type: 'url' },
    emails: { attr: 'html', type: 'email' },
    items: TABLE.items?.[0],
    ruleFallback: TABLE.ruleFallback?.[0]
  }

  it('runs the collection rules and returns our values unchanged', async () => {
    const result = await mql(page, { endpoint: freeUrl, prerender: false, data: collections as never, meta: false })
    expect(result.status).toBe('success')
    expect(result.data).toEqual(withOrigin({
      links: ['ORIGIN/', 'ORIGIN/about', 'ORIGIN/docs/guide?x=1#top', 'ORIGIN/p/1', 'ORIGIN/p/2', 'https://example.com/p/3'],
      images: ['ORIGIN/rules/missing.png', 'http://127.0.0.1:9/favicon.png', 'ORIGIN/favicon.png'],
      videos: ['ORIGIN/rules/clip.mp4'],
      audios: ['ORIGIN/rules/sound.mp3'],
      emails: ['sales@example.com', 'support@example.com'],
      items: TABLE.items?.[1],
      ruleFallback: 'Pagecast Tests'
    }))
    const direct = await extract({ url: page, prerender: false, meta: false }, collections)
    expect(result.data).toEqual(direct.json().data)
  })
})
