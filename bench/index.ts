// npm run bench: every benchmark of the project, in one run, printing the ratios the issues ask for.
// Never a test: it measures, it does not assert. Loopback only; each part stops by itself.
import { benchMetadata, printMetadata } from './metadata.ts'

const only = process.argv[2]
if (only === undefined || only === 'metadata') printMetadata(await benchMetadata())
process.exit(0)
