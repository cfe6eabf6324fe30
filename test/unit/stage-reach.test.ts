// What each stage of the pipeline can reach (issue 22 item 5): the top-level rooms of src/ (a folder, or a file of
// src/ itself) in the import closure of its file, type imports included. Stages are handed the components they
// name (pipeline/deps.ts), never the app context, whose closure is nearly the whole service. Run this file to see the
// numbers: `sh scripts/node.sh node_modules/vitest/vitest.mjs run test/unit/stage-reach.test.ts`.
import { readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const SRC = path.resolve(import.meta.dirname, '../../src')

function sourceFiles (dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name)
    if (statSync(full).isDirectory()) return sourceFiles(full)
    return name.endsWith('.ts') ? [full] : []
  })
}

/** Relative imports and re-exports of every file, multi-line ones included. */
function importsOf (): Map<string, string[]> {
  const graph = new Map<string, string[]>()
  for (const file of sourceFiles(SRC)) {
    const text = readFileSync(file, 'utf8')
    graph.set(file, [...text.matchAll(/^(?:import|export)\b[^;]*?from\s+'(\.[^']+)'/gms)].map((m) => path.resolve(path.dirname(file), m[1] ?? '')))
  }
  return graph
}

const roomOf = (file: string): string => path.relative(SRC, file).split(path.sep)[0] ?? file

function roomsReached (graph: Map<string, string[]>, start: string): Set<string> {
  const seen = new Set([start])
  const stack = [start]
  while (stack.length > 0) {
    for (const next of graph.get(stack.pop() ?? '') ?? []) if (!seen.has(next)) { seen.add(next); stack.push(next) }
  }
  return new Set([...seen].map(roomOf))
}

const STAGES = ['pipeline/index.ts', 'pipeline/compute.ts', 'pipeline/load.ts', 'pipeline/render.ts', 'pipeline/fetch.ts', 'pipeline/enrichers/enricher.ts']

describe('stages receive what they use', () => {
  const graph = importsOf()
  const context = path.join(SRC, 'context.ts')

  it('no file of the pipeline imports the app context', () => {
    const carriers = sourceFiles(path.join(SRC, 'pipeline')).filter((file) => graph.get(file)?.includes(context))
    expect(carriers.map((file) => path.relative(SRC, file))).toEqual([])
  })

  it('each stage reaches fewer rooms than the app context does', () => {
    const rooms = new Set(sourceFiles(SRC).map(roomOf))
    const viaContext = roomsReached(graph, context)
    const table = STAGES.map((stage) => ({ stage, rooms: roomsReached(graph, path.join(SRC, stage)).size }))
    console.info(`rooms of src/: ${rooms.size}; the app context's closure: ${viaContext.size}\n` +
      table.map(({ stage, rooms }) => `  ${stage}: ${rooms}`).join('\n'))
    for (const { stage, rooms: reached } of table) expect(reached, stage).toBeLessThan(viaContext.size)
    // The plain GET and the render are handed a handful of components: their closures stay small.
    expect(table.find(({ stage }) => stage === 'pipeline/fetch.ts')?.rooms).toBeLessThanOrEqual(10)
    expect(table.find(({ stage }) => stage === 'pipeline/render.ts')?.rooms).toBeLessThanOrEqual(12)
  })
})
