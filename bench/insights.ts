// insights.technologies' benchmark (docs/benchmarks.md): a cold `insights.technologies=true` request against the
// same request without it, interleaved in one run, fetch mode, on a loopback page shaped like a WordPress home page
// (about 150 kB of HTML, some 2,400 elements, a dozen scripts and stylesheets, nginx/PHP headers and cookies); plus
// the time to read and compile the bundled fingerprint set, which a process pays once. Loopback only; bounded.
import { loadFingerprints } from '../src/insights/fingerprints.ts'
import { startFixtureServer } from '../test/helpers/fixture-server.ts'
import { BENCH_KEY, fmt, line, median, startBenchService } from './lib.ts'

const KEY = BENCH_KEY
const ROUNDS = 40

export function blogPage (): string {
  const assets = Array.from({ length: 6 }, (_, i) =>
    `<link rel="stylesheet" id="style-${i}-css" href="/wp-content/plugins/plugin-${i}/style.css?ver=6.4.2" media="all">` +
    `<script src="/wp-content/plugins/plugin-${i}/script.js?ver=6.4.2" id="script-${i}-js"></script>`).join('\n')
  const posts = Array.from({ length: 300 }, (_, i) =>
    `<article id="post-${i}" class="post-${i} post type-post status-publish format-standard hentry category-news">` +
    `<header class="entry-header"><h2 class="entry-title"><a href="/${2024 - (i % 3)}/01/post-${i}/" rel="bookmark">Post number ${i}</a></h2></header>` +
    `<div class="entry-content"><p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor ${i}.</p></div></article>`).join('\n')
  return `<!doctype html><html lang="en-US"><head><meta charset="UTF-8"><title>A blog</title>
<meta name="description" content="Just another WordPress site"><meta name="generator" content="WordPress 6.4.2">
<link rel="https://api.w.org/" href="/wp-json/">${assets}
<script src="/wp-includes/js/jquery/jquery.min.js?ver=3.7.1" id="jquery-core-js"></script>
<script>var wpData = {"ajaxurl":"\\/wp-admin\\/admin-ajax.php"};</script></head>
<body class="home blog"><div id="page" class="site"><main id="main" class="site-main">${posts}</main></div></body></html>`
}

export async function benchInsights (): Promise<Record<string, number>> {
  const figures: Record<string, number> = {}
  const tl = performance.now()
  const set = loadFingerprints()
  figures.loadMs = performance.now() - tl
  figures.technologies = set.technologies.size

  const fx = await startFixtureServer()
  const html = blogPage()
  figures.htmlKb = Buffer.byteLength(html) / 1000
  fx.route('/blog', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=UTF-8', server: 'nginx/1.25.3', 'x-powered-by': 'PHP/8.2.1', 'set-cookie': ['PHPSESSID=abc; path=/', 'wordpress_test_cookie=WP%20Cookie%20check; path=/'] })
    res.end(html)
  })
  const service = await startBenchService(fx)
  const { proUrl } = service
  const base = `${proUrl}/?url=${encodeURIComponent(`${fx.origin}/blog`)}&prerender=false&force`
  const timed = async (query: string, check: (data: Record<string, any>) => boolean): Promise<number> => {
    const t = performance.now()
    const res = await fetch(`${base}${query}`, { headers: { 'x-api-key': KEY } })
    const body = await res.json() as { data: Record<string, any> }
    const ms = performance.now() - t
    if (res.status !== 200 || !check(body.data)) throw new Error(`insights bench: unexpected answer to ${query}`)
    return ms
  }
  const plain = async (): Promise<number> => await timed('', data => !('insights' in data) && data.title === 'A blog')
  const tech = async (): Promise<number> => await timed('&insights.technologies&insights.lighthouse=false',
    data => data.insights?.technologies?.some((t: { name: string, version: string | null }) => t.name === 'WordPress' && t.version === '6.4.2') === true)

  try {
    for (let i = 0; i < 5; i++) { await plain(); await tech() }
    const plainTimes: number[] = []
    const techTimes: number[] = []
    for (let i = 0; i < ROUNDS; i++) {
      plainTimes.push(await plain())
      techTimes.push(await tech())
    }
    figures.plainMs = median(plainTimes)
    figures.techMs = median(techTimes)
    figures.techRatio = figures.techMs / figures.plainMs
  } finally {
    await service.close()
    await fx.close()
  }
  return figures
}

export function printInsights (f: Record<string, number>): void {
  line('## insights (technologies)')
  line(`fingerprint set: ${f.technologies} technologies read and compiled in ${fmt(f.loadMs!)} ms (once per process)`)
  line(`insights.technologies=true: ${fmt(f.techMs!)} ms against ${fmt(f.plainMs!)} ms for the same request without it (median of ${ROUNDS}, cold, fetch mode, ${fmt(f.htmlKb!, 0)} kB page); ratio ${fmt(f.techRatio!)}, +${fmt(f.techMs! - f.plainMs!)} ms`)
}
