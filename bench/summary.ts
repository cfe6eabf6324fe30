// The one table `npm run bench` ends with (issue 14): every ratio the issues set a target for, next to its target,
// from the figures the parts returned in this run. A part that did not run (`npm run bench -- <part>`) shows no row.

export type Figures = Record<string, number>

interface Row {
  part: string
  label: string
  value (f: Figures): number | undefined
  /** The target as written, and whether a value meets it. */
  target: string
  meets (value: number): boolean
}

const atMost = (limit: number) => ({ target: `<= ${limit.toFixed(2)}`, meets: (v: number) => v <= limit })
const atLeast = (limit: number) => ({ target: `>= ${limit.toFixed(2)}`, meets: (v: number) => v >= limit })
const within = (share: number) => ({ target: `${(1 - share).toFixed(2)}-${(1 + share).toFixed(2)}`, meets: (v: number) => Math.abs(v - 1) <= share })
const stated = { target: 'stated', meets: () => true }
const ratio = (a: string, b: string) => (f: Figures): number | undefined => f[a] === undefined || f[b] === undefined ? undefined : f[a] / f[b]

const ROWS: Row[] = [
  { part: 'metadata', label: 'cache hit, pro, 50 connections (req/s vs bare route)', value: f => f.hitRatioPro50, ...atLeast(0.8) },
  { part: 'metadata', label: 'cache hit, free, 50 connections', value: f => f.hitRatioFree50, ...atLeast(0.8) },
  { part: 'metadata', label: 'cache hit, pro, 1 connection', value: f => f.hitRatioPro1, ...atLeast(0.7) },
  { part: 'metadata', label: 'cache hit, free, 1 connection', value: f => f.hitRatioFree1, ...atLeast(0.7) },
  { part: 'metadata', label: 'cold metadata (vs undici + metascraper + probes)', value: f => f.coldRatio, ...atMost(1.2) },
  { part: 'extract', label: 'cold /markdown, long post (vs served undici + turndown)', value: f => f.mdLongRatio, ...atMost(1.2) },
  { part: 'extract', label: 'cold /markdown, 780-byte article', value: f => f.mdColdRatio, ...atMost(1.2) },
  { part: 'extract', label: 'warm /markdown (cost vs GET / hit)', value: f => f.mdWarmRatio, ...atMost(1.1) },
  { part: 'extract', label: '500 items with nested rules (vs plain metadata)', value: f => f.rulesRatio, ...atMost(1.5) },
  { part: 'media', label: 'video=true (vs without)', value: f => f.videoRatio, ...stated },
  { part: 'media', label: 'palette=true (vs without)', value: f => f.paletteRatio, ...stated },
  { part: 'insights', label: 'insights.technologies (vs without)', value: f => f.techRatio, ...stated },
  { part: 'mcp', label: 'cached tools/call (cost vs cached GET /)', value: f => f.ratio, ...atMost(1.5) },
  { part: 'mcp', label: 'cached tools/call, CPU per answer (vs GET /)', value: f => f.cpuRatio, ...atMost(1.5) },
  { part: 'adblock', label: 'screenshots, adblock on vs off, rate, c=1', value: ratio('c1.on.rate', 'c1.off.rate'), ...atLeast(0.9) },
  { part: 'adblock', label: 'screenshots, adblock on vs off, rate, c=4', value: ratio('c4.on.rate', 'c4.off.rate'), ...atLeast(0.9) },
  { part: 'render', label: 'memory after 500 vs after 50 screenshots', value: ratio('pssAfter500', 'pssAfter50'), ...within(0.1) },
  { part: 'crawl', label: 'crawl of the 200-page site, in process, pages/s (vs GET / at the per-host limit)', value: f => f['memory.ratio'], ...atLeast(0.9) },
  { part: 'crawl', label: 'crawl of the 200-page site, BullMQ, pages/s (vs GET / at the per-host limit)', value: f => f['bullmq.ratio'], ...atLeast(0.9) },
  { part: 'dns', label: '200 pages, image hosts resolving slowly: lookups per host', value: f => f.maxLookupsPerHost, ...atMost(1) },
  { part: 'dns', label: '200 pages, image hosts resolving slowly: stalls of the slowest page (vs no probes)', value: f => f.stallsSlowestPage, ...atMost(1) },
  { part: 'scale', label: 'cache hits, 3 vs 1 instances (2 cores)', value: ratio('hits3', 'hits1'), ...stated },
  { part: 'scale', label: 'screenshots, 3 vs 1 instances (2 cores)', value: ratio('shots3', 'shots1'), ...stated }
]

/** Rows of the parts' own lists of ratios (render's latency and rate ratios), added by those parts. */
const extraRows: Row[] = []

export function addSummaryRows (rows: Row[]): void {
  extraRows.push(...rows)
}

export { atLeast, atMost, ratio, type Row }

export function printSummary (results: Readonly<Record<string, Figures>>): void {
  const lines: string[] = []
  for (const row of [...ROWS, ...extraRows]) {
    const figures = results[row.part]
    if (figures === undefined) continue
    const value = row.value(figures)
    const shown = value === undefined || !Number.isFinite(value) ? 'n/a' : value.toFixed(2)
    const verdict = value === undefined || !Number.isFinite(value) ? '' : row.target === 'stated' ? '' : row.meets(value) ? 'met' : 'NOT MET'
    lines.push(`| ${row.part} | ${row.label} | ${shown} | ${row.target} | ${verdict} |`)
  }
  if (lines.length === 0) return
  process.stdout.write('\n## summary (this run)\n| part | figure | ratio | target | |\n|---|---|---|---|---|\n')
  process.stdout.write(`${lines.join('\n')}\n`)
}
