// The storage family's contract (docs/api.md §8): what every backend is and gives. The factory (index.ts) and the
// backends (disk.ts, s3.ts) import it; it imports none of them.
export type FileKind = 'screenshot' | 'pdf'
export type FileExt = 'png' | 'jpg' | 'webp' | 'pdf'

export interface PutOptions {
  contentType: string
  /** The entry's ttl in whole seconds: served as `cache-control: public, max-age=<s>`; files are kept 2 × as long. */
  maxAgeSeconds: number
  /** Download name: sets `content-disposition: inline; filename="<name>"`. Named keys get it even without this. */
  filename?: string
}

export interface StoredFile {
  body: Buffer
  contentType: string
  size: number
  contentDisposition?: string
  maxAgeSeconds?: number
}

export interface Storage {
  readonly kind: 'disk' | 's3'
  /** Stores (or atomically replaces) the file and returns its public URL. Failures reject with EFATAL. */
  put (key: string, body: Buffer, options: PutOptions): Promise<string>
  /** The stored file, or undefined when there is none (an invalid key included). Failures reject with EFATAL. */
  get (key: string): Promise<StoredFile | undefined>
  /** The public URL a key is (or would be) served at. */
  urlOf (key: string): string
  health (): Promise<boolean>
  close (): Promise<void>
}
