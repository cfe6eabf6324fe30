// CDP messages the service sends per job (issue 25 item 2): Playwright's protocol log (DEBUG=pw:protocol) read while
// jobs run one at a time on one slot, each followed by its reset. Not a target of `npm run bench`; run it as
//
//   sh scripts/node.sh bench/cdp-messages.ts [tree] [extra query]
//
// e.g. `bench/cdp-messages.ts . 'adblock=false'`, or another checkout as `tree` for a before/after. Prints the count of
// each of 10 warm jobs (a screenshot of the bench's article page, meta=false, waitUntil=load) and the last one's
// messages in order.
import path from 'node:path'

process.env.DEBUG = 'pw:protocol'
const tree = path.resolve(process.argv[2] ?? path.join(import.meta.dirname, '..'))
const extra = Object.fromEntries(new URLSearchParams(process.argv[3] ?? ''))
const { build } = await import(path.join(tree, 'test/helpers/build.ts')) as typeof import('../test/helpers/build.ts')
const { startFixtureServer } = await import(path.join(tree, 'test/helpers/fixture-server.ts')) as typeof import('../test/helpers/fixture-server.ts')

const sent: string[] = []
const write = process.stderr.write.bind(process.stderr)
process.stderr.write = ((chunk: string | Uint8Array) => {
  const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString()
  for (const line of text.split('\n')) {
    const m = /SEND ► (\{.*)/.exec(line)
    if (m === null) continue
    try { sent.push((JSON.parse(m[1]!) as { method: string }).method) } catch { sent.push('(unparsed)') }
  }
  return true
}) as typeof process.stderr.write

const fx = await startFixtureServer()
const app = await build({ ALLOW_PRIVATE_HOSTS: fx.host, API_KEYS: 'k', BROWSER_CONCURRENCY: '1', LOG_LEVEL: 'warn' })
async function job (i: number): Promise<void> {
  const query = new URLSearchParams({ url: `${fx.origin}/article/?n=${i}`, screenshot: 'true', meta: 'false', waitUntil: 'load', ...extra })
  const res = await app.pro.inject({ method: 'GET', url: `/?${query}`, headers: { 'x-api-key': 'k' } })
  if (res.statusCode !== 200) throw new Error(`${res.statusCode}: ${res.body}`)
  // The reset runs after the answer.
  await new Promise(resolve => setTimeout(resolve, 1500))
}
try {
  for (let i = 0; i < 3; i++) await job(i)
  const counts: number[] = []
  let last: string[] = []
  for (let i = 3; i < 13; i++) {
    sent.length = 0
    await job(i)
    counts.push(sent.length)
    last = [...sent]
  }
  write(`CDP messages per job: ${counts.join(' ')}\nthe last job's, in order: ${last.join(', ')}\n`)
} finally {
  await app.close()
  await fx.close()
}
