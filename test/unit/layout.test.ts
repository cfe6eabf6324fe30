// The shape of src/ (docs/architecture.md): folders import each other without cycles (type imports count too, so
// each folder can be read and tested on its own), and every file reads in one sitting.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const SRC = path.resolve(import.meta.dirname, '../../src')
const MAX_LINES = 400

function sourceFiles (dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name)
    if (statSync(full).isDirectory()) return sourceFiles(full)
    return name.endsWith('.ts') ? [full] : []
  })
}

/** A file of src/ itself is its own node; anything deeper belongs to its folder. */
function nodeOf (file: string): string {
  const dir = path.dirname(file)
  return path.relative(SRC, dir === SRC ? file : dir) || '.'
}

function importGraph (): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>()
  for (const file of sourceFiles(SRC)) {
    const from = nodeOf(file)
    for (const match of readFileSync(file, 'utf8').matchAll(/^(?:import|export)\b[^'\n]*?from '(\.[^']+)'/gm)) {
      const to = nodeOf(path.resolve(path.dirname(file), match[1] ?? ''))
      if (to === from) continue
      if (!graph.has(from)) graph.set(from, new Set())
      graph.get(from)?.add(to)
    }
  }
  return graph
}

/** Every cycle's nodes, as `a -> b -> a`. */
function cyclesOf (graph: Map<string, Set<string>>): string[] {
  const found = new Set<string>()
  for (const start of graph.keys()) {
    const stack: Array<[string, string[]]> = [[start, [start]]]
    const seen = new Set<string>()
    while (stack.length > 0) {
      const [node, trail] = stack.pop() ?? [start, [start]]
      for (const next of graph.get(node) ?? []) {
        if (next === start) found.add([...trail, start].join(' -> '))
        else if (!seen.has(next)) { seen.add(next); stack.push([next, [...trail, next]]) }
      }
    }
  }
  return [...found]
}

describe('layout of src/', () => {
  it('has no import cycle between folders', () => {
    expect(cyclesOf(importGraph())).toEqual([])
  })

  it('finds a cycle when there is one (the check itself)', () => {
    const graph = new Map([['a', new Set(['b'])], ['b', new Set(['c'])], ['c', new Set(['a'])]])
    expect(cyclesOf(graph)).toContain('a -> b -> c -> a')
  })

  it(`has no file over ${MAX_LINES} lines`, () => {
    const long = sourceFiles(SRC)
      .map((file) => ({ file: path.relative(SRC, file), lines: readFileSync(file, 'utf8').split('\n').length }))
      .filter(({ lines }) => lines > MAX_LINES)
    expect(long).toEqual([])
  })
})
