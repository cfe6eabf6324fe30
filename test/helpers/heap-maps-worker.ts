// Run by test/unit/heap.test.ts in a process of its own, with --allow-natives-syntax: whether objects built from
// `{}` with the same new first property share one map (V8 cached the transition), before and after settleHeap(),
// first after the service's own start, then with the empty object's transitions filled on purpose. Prints JSON.
import { settleHeap } from '../../src/util/heap.ts'
import { loadConfig } from '../../src/config.ts'
import { createLogger } from '../../src/logger.ts'
import { closeContext, createContext } from '../../src/context.ts'
import { buildApp } from '../../src/app.ts'
import { bundledFingerprints } from '../../src/insights/fingerprints.ts'

const sameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean
let fresh = 0
/** Two objects from `{}` with one property name never used before: do they share a map? */
function shared (): boolean {
  const name = `probe${fresh++}`
  const a: Record<string, number> = {}
  a[name] = 1
  const b: Record<string, number> = {}
  b[name] = 2
  return sameMap(a, b)
}

const result: Record<string, boolean> = { atStart: shared() }
bundledFingerprints()
const ctx = await createContext(loadConfig({ LOG_LEVEL: 'silent' }), createLogger({ level: 'silent' }))
const apps = [await buildApp(ctx, { plan: 'free' }), await buildApp(ctx, { plan: 'pro' })]
await Promise.all(apps.map(async app => { await app.ready() }))
result.serviceReady = shared()
settleHeap()
result.serviceSettled = shared()
// Objects whose first names are all different, as generated code's variable names are; dropped right away.
let garbage: Array<Record<string, number>> | undefined = []
for (let i = 0; i < 3000; i++) {
  const o: Record<string, number> = {}
  o[`garbage${i}`] = i
  garbage.push(o)
}
garbage = undefined
result.filled = shared()
settleHeap()
result.filledThenSettled = shared()

await Promise.all(apps.map(async app => { await app.close() }))
await closeContext(ctx)
process.stdout.write(`${JSON.stringify(result)}\n`)
