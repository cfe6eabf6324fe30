// Storage of generated files (screenshots, PDFs), behind one small interface (docs/api.md §8).
// Two backends pass the same contract suite: S3 (S3_BUCKET set) and local disk (the embedded default).
// This file picks one; the contract is types.ts and the key rules file-keys.ts, which the backends import (never this
// file), and which are re-exported here for the rest of src/.
import type { Logger } from 'pino'
import type { Config } from '../config.ts'
import { createDiskStorage } from './disk.ts'
import { createS3Storage } from './s3.ts'
import type { Storage } from './types.ts'

export type { FileExt, FileKind, PutOptions, Storage, StoredFile } from './types.ts'
export { assertPutArgs, contentDispositionOf, fileKeyOf, fileNameOf, FILE_KEY_RE, isValidFileKey } from './file-keys.ts'

export function createStorage (config: Pick<Config, 's3' | 'storageDir' | 'publicUrl'>, deps: { log: Logger }): Storage {
  if (config.s3 !== undefined) return createS3Storage(config.s3, deps)
  return createDiskStorage({ dir: config.storageDir, publicUrl: config.publicUrl }, deps)
}
