// How a parameter error is worded and thrown (docs/api.md §11): `data` is keyed by the parameter's dotted
// name, and a value is shown cut to 100 characters. Every reader and the grammar throw through here, so the
// messages stay the same wherever a value is read.
import { AppError } from '../errors.ts'
import type { ErrorCode } from '../errors.ts'

export function show (value: unknown): string {
  let text: string
  if (typeof value === 'string') text = value
  else {
    try {
      text = JSON.stringify(value) ?? String(value)
    } catch {
      text = String(value)
    }
  }
  return text.length > 100 ? `${text.slice(0, 100)}…` : text
}

export function fail (code: ErrorCode, param: string, detail: string): never {
  throw new AppError(code, { data: { [param]: detail } })
}

export function invalid (code: ErrorCode, param: string, value: unknown, hint: string): never {
  fail(code, param, `The \`${param}\` has an invalid value (\`${show(value)}\`). ${hint}`)
}
