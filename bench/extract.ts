// Extraction's benchmark (docs/benchmarks.md): (c) /markdown on a cold cache against the raw libraries (undici GET
// + turndown with the same GitHub plugin) on the same page; (d) /markdown on a warm cache against a cache hit of
// GET / for the same page; (e) a rules-heavy request (selectorAll over 500 items with nested rules) against plain
// metadata of the same page, both in fetch mode. Loopback only; bounded in time.
import pino from 'pino'
import { request } from 'undici'
import TurndownService from 'turndown'
import { gfm } from '@joplin/turndown-plugin-gfm'
import { loadConfig } from '../src/config.ts'
import { createLogger } from '../src/logger.ts'
import { closeContext, createContext } from '../src/context.ts'
import { buildApp } from '../src/app.ts'
import { startFixtureServer } from '../test/helpers/fixture-server.ts'
import { fmt, load, median } from './lib.ts'

const KEY = 'bench-key'
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

export async function benchExtract (): Promise<Record<string, number>> {
  const fx = await startFixtureServer()
  fx.route('/catalog/', (_req, res) => { res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }); res.end(catalogPage()) })
  const sink = pino.destination({ dest: '/dev/null', sync: false })
  const config = loadConfig({ API_KEYS: KEY, ALLOW_PRIVATE_HOSTS: fx.host, LOG_LEVEL: 'info' })
  const ctx = await createContext(config, createLogger({ level: 'info', destination: sink }))
  const pro = await buildApp(ctx, { plan: 'pro' })
  const proUrl = await pro.listen({ port: 0, host: '127.0.0.1' })
  const headers = { 'x-api-key': KEY }
  const figures: Record<string, number> = {}
  const get = async (url: string): Promise<Response> => {
    const res = await fetch(url, { headers })
    if (res.status !== 200) throw new Error(`${url}: ${res.status}`)
    await res.arrayBuffer()
    return res
  }

  try {
    // (c) cold /markdown against undici + turndown, interleaved, distinct URLs so every one of ours is a MISS.
    const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' }).use(gfm)
    const article = `${fx.origin}/article/`
    const raw = async (i: number): Promise<void> => {
      const res = await request(`${article}?raw=${i}`)
      turndown.turndown(await res.body.text())
    }
    const ours = async (i: number): Promise<void> => {
      const res = await get(`${proUrl}/markdown?url=${encodeURIComponent(`${article}?md=${i}`)}&prerender=false`)
      if (res.headers.get('x-cache-status') !== 'MISS') throw new Error('cold /markdown was not a MISS')
    }
    for (let i = 0; i < 10; i++) { await raw(1000 + i); await ours(1000 + i) }
    const rawTimes: number[] = []
    const ourTimes: number[] = []
    for (let i = 0; i < ROUNDS; i++) {
      rawTimes.push(...await timed(1, async () => { await raw(i) }))
      ourTimes.push(...await timed(1, async () => { await ours(i) }))
    }
    figures.mdColdOurs = median(ourTimes)
    figures.mdColdRaw = median(rawTimes)
    figures.mdColdRatio = figures.mdColdOurs / figures.mdColdRaw

    // (d) warm: /markdown hits against GET / hits of the same page, 50 connections.
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
    await pro.close()
    await closeContext(ctx)
    await fx.close()
  }
  return figures
}

export function printExtract (f: Record<string, number>): void {
  const line = (s: string): void => { process.stdout.write(`${s}\n`) }
  line('## extraction (data rules, /markdown)')
  line(`(c) cold /markdown: pagecast ${fmt(f.mdColdOurs!)} ms, raw undici GET + turndown ${fmt(f.mdColdRaw!)} ms (median); ratio ${fmt(f.mdColdRatio!)} (target <= 1.20)`)
  line(`(d) warm /markdown: ${fmt(f.mdWarmRps!, 0)} req/s against ${fmt(f.jsonWarmRps!, 0)} req/s for a GET / hit; cost ratio ${fmt(f.mdWarmRatio!)} (target <= 1.10)`)
  line(`(e) selectorAll over 500 items with nested rules: ${fmt(f.rulesMs!)} ms against ${fmt(f.plainMs!)} ms for plain metadata (median, fetch mode); ratio ${fmt(f.rulesRatio!)} (target <= 1.50)`)
}
