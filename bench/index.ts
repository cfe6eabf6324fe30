// npm run bench: every benchmark of the project, in one run, printing the ratios the issues ask for, then one summary
// table of every ratio next to its target (summary.ts). Never a test: it measures, it does not assert. Loopback only;
// each part stops by itself.
// `npm run bench -- metadata`, `-- extract`, `-- media`, `-- insights`, `-- mcp`, `-- render`, `-- adblock`, `-- load`, `-- scale`, `-- crawl`, `-- dns` or
// `-- memory` (the table of docs/operations.md#memory) runs one part.
import { benchMetadata, printMetadata } from './metadata.ts'
import { benchRender, printRender } from './render.ts'
import { benchAdblock, printAdblock } from './adblock.ts'
import { benchLoad, printLoad } from './load.ts'
import { benchExtract, printExtract } from './extract.ts'
import { benchMedia, printMedia } from './media.ts'
import { benchInsights, printInsights } from './insights.ts'
import { benchScale, printScale } from './scale.ts'
import { benchMcp, printMcp } from './mcp.ts'
import { benchMemory, printMemory } from './memory.ts'
import { benchCrawl, printCrawl } from './crawl.ts'
import { benchDns, printDns } from './dns.ts'
import { printSummary, type Figures } from './summary.ts'

const only = process.argv[2]
const results: Record<string, Figures> = {}

/** Runs one part when asked for (or when all are), prints it, and keeps its figures for the summary. */
async function part<F> (name: string, run: () => Promise<F>, print: (f: F) => void, flat: (f: F) => Figures): Promise<void> {
  if (only !== undefined && only !== name) return
  const figures = await run()
  print(figures)
  results[name] = flat(figures)
}

const same = (f: Figures): Figures => f
await part('metadata', benchMetadata, printMetadata, same)
await part('extract', benchExtract, printExtract, same)
await part('media', benchMedia, printMedia, same)
await part('insights', benchInsights, printInsights, same)
await part('mcp', benchMcp, printMcp, same)
await part('render', benchRender, printRender, same)
await part('adblock', benchAdblock, printAdblock, same)
await part('load', benchLoad, printLoad, f => f as unknown as Figures)
await part('scale', benchScale, printScale, f => ({
  hits1: f.rows[0]?.hitRps ?? NaN, hits3: f.rows[1]?.hitRps ?? NaN, shots1: f.rows[0]?.shotsPerSecond ?? NaN, shots3: f.rows[1]?.shotsPerSecond ?? NaN
}))
await part('crawl', benchCrawl, printCrawl, same)
await part('dns', benchDns, printDns, same)
await part('memory', benchMemory, printMemory, f => ({ idleMiB: f.idle.totalPss, peakMiB: f.peak.totalPss, afterMiB: f.after.totalPss }))
printSummary(results)
process.exit(0)
