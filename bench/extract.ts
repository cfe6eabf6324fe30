// Extraction's benchmark (docs/benchmarks.md): (c) /markdown on a cold cache against the raw libraries (undici GET
// + turndown with the same GitHub plugin) on the same page, a small one and a long one, the pair served by a bare
// Fastify route (so both pay the client's HTTP hop) and, for reference, in process; (d) /markdown on a warm cache against a cache hit of
// GET / for the same page; (e) a rules-heavy request (selectorAll over 500 items with nested rules) against plain
// metadata of the same page, both in fetch mode. Loopback only; bounded in time.
import { request } from 'undici'
import Fastify from 'fastify'
import TurndownService from 'turndown'
import { gfm } from '@joplin/turndown-plugin-gfm'
import { startFixtureServer } from '../test/helpers/fixture-server.ts'
import { BENCH_KEY, fmt, line, load, median, startBenchService } from './lib.ts'

const KEY = BENCH_KEY
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
const ROUNDS = 40

/** A page with 500 items, each a title link, a price and a tag list. */
function catalogPage (): string {
  const items = Array.from({ length: 500 }, (_, i) =>
    `<li class="item"><a href="/p/${i}">Product ${i}</a><span class="price">${(i * 1.5).toFixed(2)}</span>` +
    `<ul class="tags"><li>t${i % 7}</li><li>t${i % 11}</li></ul></li>`).join('')
  return `<!doctype html><html lang="en"><head><title>Catalog</title><meta name="description" content="Five hundred products.">` +
    `</head><body><h1>Catalog</h1><ul id="items">${items}</ul></body></html>`
}

/** A long blog post as pages come (~90 KB): a head with styles, scripts and JSON-LD, navigation, 30 sections of
 * paragraphs with links and emphasis, lists, code blocks, tables and figures, comments and a footer. */
function longArticlePage (): string {
  const words = 'build cache layer artifact compile deploy pipeline runner shard queue worker latency budget graph module test'.split(' ')
  const sentence = (i: number, n: number): string => Array.from({ length: n }, (_, j) => words[(i * 7 + j * 3) % words.length]).join(' ')
  const section = (i: number): string => `<section id="s${i}"><h2>Part ${i}: ${sentence(i, 4)}</h2>` +
    Array.from({ length: 4 }, (_, p) => `<p>${sentence(i + p, 18)} <a href="/notes/${i}/${p}?ref=post">${sentence(p, 3)}</a>, ` +
      `<em>${sentence(i, 2)}</em> and <strong>${sentence(p + 1, 2)}</strong>; ${sentence(i * p + 3, 22)}.</p>`).join('') +
    `<ul>${Array.from({ length: 5 }, (_, k) => `<li>${sentence(i + k, 6)} <code>step_${k}()</code></li>`).join('')}</ul>` +
    (i % 3 === 0 ? `<pre><code class="language-ts">${Array.from({ length: 8 }, (_, k) => `const v${k} = await cache.get('k${i}${k}') ?? compute(${k})`).join('\n')}</code></pre>` : '') +
    (i % 5 === 0 ? `<table><thead><tr><th>Stage</th><th>Before</th><th>After</th></tr></thead><tbody>${Array.from({ length: 6 }, (_, k) => `<tr><td>${words[k]}</td><td>${k * 13} s</td><td>${k * 6} s</td></tr>`).join('')}</tbody></table>` : '') +
    (i % 4 === 0 ? `<figure><img src="/img/${i}.png" alt="Chart ${i}"><figcaption>${sentence(i, 8)}</figcaption></figure>` : '') +
    '</section>'
  return '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>How we halved build times | Example Blog</title>' +
    `<meta name="description" content="${sentence(1, 20)}"><style>${'body{margin:0}.post p{line-height:1.6}'.repeat(60)}</style>` +
    `<script type="application/ld+json">{"@type":"BlogPosting","headline":"How we halved build times"}</script>` +
    `<script>${'window.dataLayer=window.dataLayer||[];'.repeat(40)}</script></head><body>` +
    `<header><nav>${Array.from({ length: 12 }, (_, i) => `<a href="/section/${i}">Section ${i}</a>`).join(' ')}</nav></header>` +
    `<main><article class="post"><h1>How we halved build times</h1>${Array.from({ length: 30 }, (_, i) => section(i)).join('')}</article>` +
    `<aside class="comments">${Array.from({ length: 10 }, (_, i) => `<div class="comment"><b>user${i}</b><p>${sentence(i, 25)}</p></div>`).join('')}</aside></main>` +
    `<footer>${Array.from({ length: 20 }, (_, i) => `<a href="/legal/${i}">Footer link ${i}</a>`).join(' ')}</footer></body></html>`
}

const RULES = {
  'data.items.selectorAll': '.item',
  'data.items.attr.title.selector': 'a',
  'data.items.attr.title.attr': 'text',
  'data.items.attr.href.selector': 'a',
  'data.items.attr.href.attr': 'href',
  'data.items.attr.href.type': 'url',
  'data.items.attr.price.selector': '.price',
  'data.items.attr.price.type': 'number'
}

async function timed (rounds: number, work: (i: number) => Promise<void>): Promise<number[]> {
  const times: number[] = []
  for (let i = 0; i < rounds; i++) {
    const t = performance.now()
    await work(i)
    times.push(performance.now() - t)
  }
  return times
}

/**
 * The cold `/markdown` baseline: undici GET + turndown with the same GFM plugin, in process (`turndown`) and behind a
 * bare Fastify route (`url` + `/md?url=<page>`), so that both sides pay the same HTTP hop from the client.
 */
export async function startRawMarkdown (): Promise<{ turndown: TurndownService, url: string, close: () => Promise<void> }> {
  const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' }).use(gfm)
  const bare = Fastify()
  bare.get('/md', async (req, reply) => {
    const res = await request((req.query as { url: string }).url)
    return await reply.type('text/markdown; charset=utf-8').send(turndown.turndown(await res.body.text()))
  })
  const url = await bare.listen({ port: 0, host: '127.0.0.1' })
  return { turndown, url, close: async () => { await bare.close() } }
}

export async function benchExtract (): Promise<Record<string, number>> {
  const fx = await startFixtureServer()
  fx.route('/catalog/', (_req, res) => { res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }); res.end(catalogPage()) })
  const longArticle = longArticlePage()
  fx.route('/long-article/', (_req, res) => { res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }); res.end(longArticle) })
  const service = await startBenchService(fx)
  const { proUrl } = service
  const headers = { 'x-api-key': KEY }
  const figures: Record<string, number> = {}
  const get = async (url: string): Promise<Response> => {
    const res = await fetch(url, { headers })
    if (res.status !== 200) throw new Error(`${url}: ${res.status}`)
    await res.arrayBuffer()
    return res
  }

  try {
    // (c) cold /markdown against undici + turndown, interleaved, distinct URLs so every one of ours is a MISS; the same
    // client (undici's request) on both sides. Two pages: the small article fixture (780 bytes, where fixed
    // per-request costs dominate) and a long post as pages come (~90 KB).
    const { turndown, url: bareUrl, close: closeBare } = await startRawMarkdown()
    // Warm-up rounds bring all three to steady state (the service's path has far more code to compile than the pair).
    for (const [name, pagePath, warmup] of [['mdCold', '/article/', 300], ['mdLong', '/long-article/', 30]] as const) {
      const target = `${fx.origin}${pagePath}`
      const inProcess = async (i: number): Promise<void> => {
        const res = await request(`${target}?raw=${i}`)
        turndown.turndown(await res.body.text())
      }
      const served = async (i: number): Promise<void> => {
        const res = await request(`${bareUrl}/md?url=${encodeURIComponent(`${target}?bare=${i}`)}`)
        await res.body.text()
      }
      const ours = async (i: number): Promise<void> => {
        const res = await request(`${proUrl}/markdown?url=${encodeURIComponent(`${target}?md=${i}`)}&prerender=false`, { headers })
        await res.body.text()
        if (res.statusCode !== 200 || res.headers['x-cache-status'] !== 'MISS') throw new Error(`cold /markdown: ${res.statusCode} ${String(res.headers['x-cache-status'])}`)
      }
      for (let i = 0; i < warmup; i++) { await inProcess(1000 + i); await served(1000 + i); await ours(1000 + i) }
      const rawTimes: number[] = []
      const servedTimes: number[] = []
      const ourTimes: number[] = []
      for (let i = 0; i < ROUNDS; i++) {
        rawTimes.push(...await timed(1, async () => { await inProcess(i) }))
        servedTimes.push(...await timed(1, async () => { await served(i) }))
        ourTimes.push(...await timed(1, async () => { await ours(i) }))
      }
      figures[`${name}Ours`] = median(ourTimes)
      figures[`${name}Raw`] = median(rawTimes)
      figures[`${name}Served`] = median(servedTimes)
      figures[`${name}Ratio`] = median(ourTimes) / median(servedTimes)
    }
    await closeBare()

    // (d) warm: /markdown hits against GET / hits of the same page, 50 connections.
    const article = `${fx.origin}/article/`
    const markdownUrl = `${proUrl}/markdown?url=${encodeURIComponent(article)}&prerender=false`
    const jsonUrl = `${proUrl}/?url=${encodeURIComponent(article)}&prerender=false`
    await get(markdownUrl)
    await get(jsonUrl)
    await load(markdownUrl, { connections: 10, seconds: 1, headers })
    await load(jsonUrl, { connections: 10, seconds: 1, headers })
    const mdHits = await load(markdownUrl, { connections: 50, seconds: SECONDS, headers })
    const jsonHits = await load(jsonUrl, { connections: 50, seconds: SECONDS, headers })
    if (mdHits.non2xx + jsonHits.non2xx > 0) throw new Error('non-2xx answers during the warm runs')
    figures.mdWarmRps = mdHits.rps
    figures.jsonWarmRps = jsonHits.rps
    figures.mdWarmRatio = jsonHits.rps / mdHits.rps

    // (e) rules-heavy against plain metadata, same page, fetch mode, cold (force) and interleaved.
    const catalog = encodeURIComponent(`${fx.origin}/catalog/`)
    const rules = Object.entries(RULES).map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&')
    const plain = async (): Promise<void> => { await get(`${proUrl}/?url=${catalog}&prerender=false&force`) }
    const heavy = async (): Promise<void> => { await get(`${proUrl}/?url=${catalog}&prerender=false&force&${rules}`) }
    for (let i = 0; i < 5; i++) { await plain(); await heavy() }
    const plainTimes: number[] = []
    const heavyTimes: number[] = []
    for (let i = 0; i < ROUNDS; i++) {
      plainTimes.push(...await timed(1, plain))
      heavyTimes.push(...await timed(1, heavy))
    }
    figures.rulesMs = median(heavyTimes)
    figures.plainMs = median(plainTimes)
    figures.rulesRatio = figures.rulesMs / figures.plainMs
  } finally {
    await service.close()
    await fx.close()
  }
  return figures
}

export function printExtract (f: Record<string, number>): void {
  line('## extraction (data rules, /markdown)')
  for (const [key, label] of [['mdCold', 'article fixture (780 B)'], ['mdLong', 'long post (~90 KB)']] as const) {
    line(`(c) cold /markdown, ${label}: pagecast ${fmt(f[`${key}Ours`]!)} ms; undici GET + turndown behind a bare Fastify route ${fmt(f[`${key}Served`]!)} ms, ` +
      `in process ${fmt(f[`${key}Raw`]!)} ms (medians); ratio to the served pair ${fmt(f[`${key}Ratio`]!)} (target <= 1.20)`)
  }
  line(`(d) warm /markdown: ${fmt(f.mdWarmRps!, 0)} req/s against ${fmt(f.jsonWarmRps!, 0)} req/s for a GET / hit; cost ratio ${fmt(f.mdWarmRatio!)} (target <= 1.10)`)
  line(`(e) selectorAll over 500 items with nested rules: ${fmt(f.rulesMs!)} ms against ${fmt(f.plainMs!)} ms for plain metadata (median, fetch mode); ratio ${fmt(f.rulesRatio!)} (target <= 1.50)`)
}
