// The shape of src/ (docs/architecture.md): no import circle between files, and the top-level folders (a subfolder
// counts as its top-level folder) import each other without cycles, so each folder can be read and tested on its own
// and nothing points back up. Type imports and `export ... from` count too. Imports are read by TypeScript's own
// scanner (ts.preProcessFile), so an import that spans lines is read like any other. Every file reads in one sitting.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'

const SRC = path.resolve(import.meta.dirname, '../../src')
const MAX_LINES = 400

type Graph = Map<string, Set<string>>

function sourceFiles (dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name)
    if (statSync(full).isDirectory()) return sourceFiles(full)
    return name.endsWith('.ts') ? [full] : []
  })
}

/** The relative modules a source text imports or re-exports (`import type` and dynamic `import()` included). */
function importsOf (text: string): string[] {
  return ts.preProcessFile(text, true, true).importedFiles.map(({ fileName }) => fileName).filter((name) => name.startsWith('.'))
}

/** Each file of src/ (relative to src/) and the files of src/ it imports. */
function fileGraph (): Graph {
  const graph: Graph = new Map()
  for (const file of sourceFiles(SRC)) {
    const to = new Set(importsOf(readFileSync(file, 'utf8')).map((spec) => path.relative(SRC, path.resolve(path.dirname(file), spec))))
    graph.set(path.relative(SRC, file), to)
  }
  return graph
}

/** A file of src/ itself is its own node; anything deeper belongs to its top-level folder. */
function folderOf (file: string): string {
  const [top, ...rest] = file.split(path.sep)
  return rest.length === 0 ? file : `${top}/`
}

/** The graph with each node replaced by `group(node)`; edges inside one group dropped. */
function grouped (graph: Graph, group: (node: string) => string): Graph {
  const out: Graph = new Map()
  for (const [from, targets] of graph) {
    for (const target of targets) {
      const [a, b] = [group(from), group(target)]
      if (a === b) continue
      if (!out.has(a)) out.set(a, new Set())
      out.get(a)?.add(b)
    }
  }
  return out
}

/** A cycle's nodes as `a -> b -> a`, begun at its least node, so one cycle reads the same from wherever it was found. */
function cycleName (trail: string[]): string {
  let least = 0
  for (let i = 1; i < trail.length; i++) if (trail[i]! < trail[least]!) least = i
  const nodes = [...trail.slice(least), ...trail.slice(0, least)]
  return [...nodes, nodes[0]].join(' -> ')
}

/** Every cycle (cycleName): for each node, each way back to it along edges (each node entered once). */
function cyclesOf (graph: Graph): string[] {
  const found = new Set<string>()
  for (const start of graph.keys()) {
    const stack: Array<[string, string[]]> = [[start, [start]]]
    const seen = new Set<string>()
    while (stack.length > 0) {
      const [node, trail] = stack.pop() ?? [start, [start]]
      for (const next of graph.get(node) ?? []) {
        if (next === start) found.add(cycleName(trail))
        else if (!seen.has(next)) { seen.add(next); stack.push([next, [...trail, next]]) }
      }
    }
  }
  return [...found]
}

describe('layout of src/', () => {
  const files = fileGraph()

  it('has no import circle between files', () => {
    expect(cyclesOf(files)).toEqual([])
  })

  it('has no import cycle between top-level folders (a subfolder counts as its top-level folder)', () => {
    expect(cyclesOf(grouped(files, folderOf))).toEqual([])
  })

  it('resolves every relative import to a file of src/', () => {
    const missing = [...files].flatMap(([from, targets]) => [...targets].filter((to) => !files.has(to)).map((to) => `${from} -> ${to}`))
    expect(missing).toEqual([])
  })

  it(`has no file over ${MAX_LINES} lines`, () => {
    const long = sourceFiles(SRC)
      .map((file) => ({ file: path.relative(SRC, file), lines: readFileSync(file, 'utf8').split('\n').length }))
      .filter(({ lines }) => lines > MAX_LINES)
    expect(long).toEqual([])
  })
})

describe('the layout checks themselves', () => {
  it('find a cycle when there is one', () => {
    const graph: Graph = new Map([['a', new Set(['b'])], ['b', new Set(['c'])], ['c', new Set(['a'])]])
    expect(cyclesOf(graph)).toEqual(['a -> b -> c -> a'])
    expect(cyclesOf(new Map([['a', new Set(['b'])], ['b', new Set(['c'])]]))).toEqual([])
  })

  it('count a subfolder as its top-level folder, so an arrow back up from it is a cycle', () => {
    const graph: Graph = new Map([
      [path.join('schemas', 'query.ts'), new Set([path.join('browser', 'devices.ts')])],
      [path.join('browser', 'steps', 'navigate.ts'), new Set([path.join('schemas', 'options.ts')])],
      ['app.ts', new Set([path.join('browser', 'pool', 'index.ts')])]
    ])
    expect(cyclesOf(grouped(graph, folderOf))).toEqual(['browser/ -> schemas/ -> browser/'])
  })

  it('read imports that span lines, type imports, re-exports and dynamic imports', () => {
    const text = [
      "import {\n  a,\n  b\n} from './a.ts'",
      "import type {\n  C\n} from '../c/c.ts'",
      "export {\n  d\n} from './d.ts'",
      "export * from './e.ts'",
      "export type { F } from './f.ts'",
      "const g = await import('./g.ts')",
      "import { h } from 'node:path'",
      "// import { i } from './i.ts'",
      "const s = \"import { j } from './j.ts'\""
    ].join('\n')
    expect(importsOf(text)).toEqual(['./a.ts', '../c/c.ts', './d.ts', './e.ts', './f.ts', './g.ts'])
  })
})
