// The keys of generated files and the checks every storage backend applies to them (docs/api.md §8), beside the
// contract (types.ts) and imported by the factory and the backends alike.
import { AppError } from '../errors.ts'
import { sha256 } from '../util/hash.ts'
import type { FileExt, FileKind, PutOptions } from './types.ts'

/** docs/api.md §8. `<hash>/.` and `<hash>/..` match it too; isValidFileKey refuses those as well. */
export const FILE_KEY_RE = /^[0-9a-f]{64}(\.(png|jpg|webp|pdf)|\/[A-Za-z0-9._-]{1,100})$/

const FILENAME_RE = /^[A-Za-z0-9._-]{1,100}$/

export function isValidFileKey (key: unknown): key is string {
  if (typeof key !== 'string' || !FILE_KEY_RE.test(key)) return false
  const name = key.slice(65)
  return name !== '.' && name !== '..'
}

/**
 * The storage key of a generated file: the hex SHA-256 of `<cacheKey>:<kind>` plus the extension, or
 * `<hash>/<filename>` when the file is named (the query parser has already added the extension). An action's capture
 * is keyed by its path in `data` (`actions.screenshots.0`) in place of the kind.
 */
export function fileKeyOf (cacheKey: string, kind: FileKind | `actions.${string}`, ext: FileExt, filename?: string): string {
  const hash = sha256(`${cacheKey}:${kind}`)
  const key = filename === undefined ? `${hash}.${ext}` : `${hash}/${filename}`
  if (!isValidFileKey(key)) throw new RangeError(`invalid file name for storage: ${JSON.stringify(filename)}`)
  return key
}

/** The download name a key carries: the segment after `<hash>/`, if any. */
export function fileNameOf (key: string): string | undefined {
  return key.length > 65 && key[64] === '/' ? key.slice(65) : undefined
}

/** `inline; filename="<name>"` for the explicit name, or the key's own name; undefined for unnamed files. */
export function contentDispositionOf (key: string, filename?: string): string | undefined {
  const name = filename ?? fileNameOf(key)
  if (name === undefined) return undefined
  // The character class leaves nothing to quote or escape.
  if (!FILENAME_RE.test(name)) throw new RangeError(`invalid download name: ${JSON.stringify(name)}`)
  return `inline; filename="${name}"`
}

/** Checks put()'s arguments; a bad one is a programming error, reported like any storage failure (EFATAL). */
export function assertPutArgs (key: string, body: Buffer, options: PutOptions): void {
  let problem: string | undefined
  if (!isValidFileKey(key)) problem = `invalid file key: ${JSON.stringify(key)}`
  else if (!Buffer.isBuffer(body)) problem = 'file body must be a Buffer'
  else if (!Number.isInteger(options.maxAgeSeconds) || options.maxAgeSeconds < 0) problem = `maxAgeSeconds must be a whole number (got ${options.maxAgeSeconds})`
  else if (typeof options.contentType !== 'string' || !/^[\x21-\x7e][\x20-\x7e]*$/.test(options.contentType)) problem = `invalid content type: ${JSON.stringify(options.contentType)}`
  else if (options.filename !== undefined && !FILENAME_RE.test(options.filename)) problem = `invalid download name: ${JSON.stringify(options.filename)}`
  if (problem !== undefined) throw new AppError('EFATAL', { cause: new RangeError(problem) })
}
