// settleHeap (util/heap.ts): after it, objects built from `{}` with a new first property share a map again, both
// after the service's own start and after the empty object's transitions were filled on purpose. V8 internals
// are only visible with --allow-natives-syntax, so the check runs in a process of its own.
import { execFileSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'

describe('settleHeap', () => {
  it('gives the empty object its transitions back', () => {
    const out = execFileSync(process.execPath, ['--allow-natives-syntax', 'test/helpers/heap-maps-worker.ts'], { encoding: 'utf8', timeout: 60_000 })
    const result = JSON.parse(out.trim().split('\n').at(-1)!) as Record<string, boolean>
    expect(result.atStart).toBe(true)
    // The premise: 3,000 first names fill what V8 keeps (1,536), and a new name then gets a map of its own.
    expect(result.filled).toBe(false)
    expect(result.filledThenSettled).toBe(true)
    // The service's start as server.ts runs it (fingerprints, context, both listeners ready), then settled.
    expect(result.serviceSettled).toBe(true)
  })
})
