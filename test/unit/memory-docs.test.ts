// The project's memory figures are one measured table (docs/operations.md#memory), printed by the script that
// measures it (bench/memory.ts, `npm run bench -- memory`); the other documents refer to it instead of giving
// figures of their own that disagree with it (idle 260 MiB in one place, 520 measured).
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = path.resolve(import.meta.dirname, '../..')
const read = (file: string): string => readFileSync(path.join(ROOT, file), 'utf8')

describe('the memory figures', () => {
  const operations = read('docs/operations.md')
  const section = operations.slice(operations.indexOf('\n## Memory\n'), operations.indexOf('\n## ', operations.indexOf('\n## Memory\n') + 1))

  it('are one table in docs/operations.md, dated, with the machine and its load, and the script that measures it', () => {
    expect(section.length).toBeGreaterThan(100)
    expect(section).toContain('npm run bench -- memory')
    expect(section).toMatch(/Measured \d{4}-\d{2}-\d{2} on a \d+-core machine/)
    expect(section).toMatch(/load average/)
    const rows = section.split('\n').filter(row => row.startsWith('| ') && !row.startsWith('| Reading'))
    expect(rows.map(row => row.split('|')[1]?.trim())).toEqual(['idle: started, no request yet', 'peak during the burst of 200', '15 s after the burst'])
    // The script prints the same columns.
    const script = read('bench/memory.ts')
    expect(script).toContain("'| Reading | Service process (threads) | Chromium (processes) | Total PSS | Total RSS |'")
    expect(read('bench/index.ts')).toMatch(/part\('memory', benchMemory/)
  })

  it('are referred to, not restated, by the README, scaling.md and benchmarks.md', () => {
    const readme = read('README.md')
    expect(readme).toContain('](docs/operations.md#memory)')
    expect(read('docs/scaling.md')).toContain('](operations.md#memory)')
    expect(read('docs/benchmarks.md')).toContain('](operations.md#memory)')
    // No figure of the service's idle or burst memory outside the table.
    for (const [file, text] of [['README.md', readme], ['docs/scaling.md', read('docs/scaling.md')]] as const) {
      expect(text, file).not.toMatch(/\b(idle|at rest)\b[^.\n|]*\b\d[\d,.]* ?(MiB|GiB)/i)
      expect(text, file).not.toMatch(/\bpeak(ed)? of \d[\d,.]* ?(MiB|GiB)|\d[\d,.]* ?(MiB|GiB) per replica/i)
    }
  })
})
