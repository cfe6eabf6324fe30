// npm run bench: every benchmark of the project, in one run, printing the ratios the issues ask for.
// Never a test: it measures, it does not assert. Loopback only; each part stops by itself.
// `npm run bench -- metadata`, `-- extract`, `-- media`, `-- insights`, `-- mcp`, `-- render`, `-- adblock`, `-- load` or `-- scale` runs one part.
import { benchMetadata, printMetadata } from './metadata.ts'
import { benchRender, printRender } from './render.ts'
import { benchAdblock, printAdblock } from './adblock.ts'
import { benchLoad, printLoad } from './load.ts'
import { benchExtract, printExtract } from './extract.ts'
import { benchMedia, printMedia } from './media.ts'
import { benchInsights, printInsights } from './insights.ts'
import { benchScale, printScale } from './scale.ts'
import { benchMcp, printMcp } from './mcp.ts'

const only = process.argv[2]
if (only === undefined || only === 'metadata') printMetadata(await benchMetadata())
if (only === undefined || only === 'extract') printExtract(await benchExtract())
if (only === undefined || only === 'media') printMedia(await benchMedia())
if (only === undefined || only === 'insights') printInsights(await benchInsights())
if (only === undefined || only === 'mcp') printMcp(await benchMcp())
if (only === undefined || only === 'render') printRender(await benchRender())
if (only === undefined || only === 'adblock') printAdblock(await benchAdblock())
if (only === undefined || only === 'load') printLoad(await benchLoad())
if (only === undefined || only === 'scale') printScale(await benchScale())
process.exit(0)
