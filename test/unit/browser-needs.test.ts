// "Needs the browser" is said by the units that do the work (a page step's, a producer's, an enricher's
// `needsBrowser`; pipeline/prerender.ts derives needsBrowser from them) and, for the docs, by the parameter table's
// `browser` notes. This test is generated from the table: every parameter, each with sample values, must get the
// same answer from both, so neither can change without the other.
import { describe, expect, it } from 'vitest'
import { needsBrowser } from '../../src/pipeline/prerender.ts'
import { BROWSER_NEEDS, OPTION_NAMES, type OptionName } from '../../src/schemas/derived.ts'
import { parseQuery } from '../../src/schemas/query.ts'
import type { ExtractOptions } from '../../src/schemas/options.ts'

const opts = (q: string): ExtractOptions =>
  parseQuery(`url=https%3A%2F%2Fexample.com%2F${q === '' ? '' : `&${q}`}`, { plan: 'pro', headers: {}, maxTimeout: 28_000 })

/** The table's answer: the parameters whose `browser` note says this request needs the browser. */
const tableSays = (options: ExtractOptions): string[] => BROWSER_NEEDS.filter(({ when }) => when(options)).map(({ name }) => name)

/**
 * Query samples of every parameter (a new parameter does not compile without its row): values that do and values
 * that do not need the browser, so a `browser` note or a unit's `needsBrowser` changed alone shows up here.
 */
const SAMPLES: Record<OptionName, readonly string[]> = {
  url: [''],
  meta: ['meta=false', 'meta.title'],
  data: ['data.x.selector=h1', 'data.x.evaluate=document.title', 'data.x.selector=input&data.x.attr=val', 'data.x.attr.y.evaluate=1'],
  filter: ['filter=title'],
  embed: ['embed=title'],
  screenshot: ['screenshot', 'screenshot=false', 'screenshot.fullPage'],
  pdf: ['pdf', 'pdf=false'],
  video: ['video'],
  audio: ['audio'],
  iframe: ['iframe', 'iframe=false'],
  insights: ['insights', 'insights.lighthouse=false', 'insights.technologies=false', 'insights.technologies=false&insights.lighthouse=false'],
  palette: ['palette'],
  ping: ['ping=false'],
  function: ['function=()%20%3D%3E%201'],
  device: ['device=iPhone%2015'],
  viewport: ['viewport.width=800'],
  colorScheme: ['colorScheme=dark'],
  mediaType: ['mediaType=print'],
  javascript: ['javascript=false'],
  animations: ['animations=false'],
  adblock: ['adblock=false', 'adblock'],
  headers: ['headers.x-test=1'],
  prerender: ['prerender=false', 'prerender=true'],
  waitUntil: ['waitUntil=auto', 'waitUntil=load', 'waitUntil=load&waitUntil=domcontentloaded', 'waitUntil=networkidle0'],
  waitForSelector: ['waitForSelector=h1'],
  timeout: ['timeout=5s'],
  waitForTimeout: ['waitForTimeout=1s', 'waitForTimeout=0'],
  click: ['click=button', 'click=a&click=b'],
  scroll: ['scroll=%23x'],
  actions: ['actions=%5B%5D', 'actions=%5B%7B%22type%22%3A%22scrape%22%7D%5D'],
  modules: ['modules=x'],
  scripts: ['scripts=alert(1)'],
  styles: ['styles=body%7B%7D'],
  retry: ['retry=1'],
  proxy: ['proxy=http%3A%2F%2F127.0.0.1%3A1'],
  ttl: ['ttl=1h'],
  staleTtl: ['staleTtl=1h'],
  force: ['force'],
  cacheKey: [],
  filename: ['screenshot&filename=shot'],
  args: ['function=(%7Bx%7D)%20%3D%3E%20x&x=1']
}

describe('needs the browser: the units and the table agree', () => {
  it('has samples for every parameter of the table', () => {
    expect(Object.keys(SAMPLES).sort()).toEqual([...OPTION_NAMES].sort())
  })

  const cases = OPTION_NAMES.flatMap((name) => SAMPLES[name].map((query) => [name, query] as const))
  it.each(cases)('%s: %s', (_name, query) => {
    const options = opts(query)
    expect(needsBrowser(options), `the table says ${JSON.stringify(tableSays(options))}`).toBe(tableSays(options).length > 0)
  })

  it('each parameter the table marks is found by some sample (the samples reach every note)', () => {
    const found = new Set(cases.flatMap(([, query]) => tableSays(opts(query))))
    expect([...found].sort()).toEqual(BROWSER_NEEDS.map(({ name }) => name).sort())
  })

  it('a metadata-only request needs no browser', () => {
    expect(needsBrowser(opts(''))).toBe(false)
  })
})
