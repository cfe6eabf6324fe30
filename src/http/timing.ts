// The timing headers of an answer (docs/api.md §6): `x-response-time`, `x-fetch-time` and `server-timing`.
import prettyMs from 'pretty-ms'

export function pretty (msValue: number): string {
  const ms = Math.max(0, Math.round(msValue))
  // Under a second pretty-ms writes the whole milliseconds with `ms`; this is every hit's x-response-time.
  return ms < 1000 ? `${ms}ms` : prettyMs(ms)
}

export function serverTiming (timings: Record<string, number>, total: number): string {
  let out = ''
  for (const name in timings) out += `${name};dur=${timings[name]!.toFixed(1)}, `
  return `${out}total;dur=${total.toFixed(1)}`
}
