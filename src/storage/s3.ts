// S3 (or any S3-compatible service) storage (docs/api.md §8, S3 mode). Public URLs point at CDN_URL;
// expiry is left to a bucket lifecycle rule. get() reads objects back so embeds can stream the bytes.
import {
  GetObjectCommand,
  HeadBucketCommand,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig
} from '@aws-sdk/client-s3'
import type { Logger } from 'pino'
import type { Config } from '../config.ts'
import { AppError } from '../errors.ts'
import { assertPutArgs, contentDispositionOf, isValidFileKey } from './file-keys.ts'
import type { Storage, StoredFile } from './types.ts'
import { isUnreachable } from '../util/unreachable.ts'

export type S3StorageOptions = NonNullable<Config['s3']>

export interface S3StorageTuning {
  /** Per-attempt limit of one request, in ms (default 60 s: a large PDF upload must fit). */
  requestTimeoutMs?: number
  /** Limit of the health probe, in ms (default 5 s). */
  healthTimeoutMs?: number
  /** Attempts per operation, the first included (the SDK's default is 3). */
  maxAttempts?: number
}

function statusOf (err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode
}

/** A missing object, not a missing bucket (that is a configuration failure). S3 answers 403 instead
 * of 404 for a missing key when the credentials lack s3:ListBucket, so grant it. */
function isNotFound (err: unknown): boolean {
  const name = (err as { name?: string } | undefined)?.name
  return name === 'NoSuchKey' || (statusOf(err) === 404 && name !== 'NoSuchBucket')
}

const DENIED_NAMES = new Set(['AccessDenied', 'Forbidden', 'InvalidAccessKeyId', 'SignatureDoesNotMatch', 'InvalidToken', 'ExpiredToken'])

/** Why an S3 call failed, in the operator's words. */
export type S3FailureReason = 'bucket missing' | 'access denied' | 'endpoint unreachable' | 'failed'

/**
 * An S3 failure said plainly, with the variable to look at: the SDK names a HEAD request's failure after its
 * bare status (`NotFound`, `Forbidden`, message `UnknownError`), and a refused connection is a plain `Error`.
 * The message carries the bucket and the endpoint's origin, never a credential; the SDK's error is not kept as the
 * cause (some carry the access key id, `AWSAccessKeyId`), only its name and status.
 */
export class S3Failure extends Error {
  readonly reason: S3FailureReason
  readonly status: number | undefined
  /** The SDK's name for the error (`NoSuchBucket`, `InvalidAccessKeyId`, ...) or the socket's code. */
  readonly sdkName: string
  constructor (err: unknown, bucket: string, endpoint: string | undefined) {
    const status = statusOf(err)
    const name = (err as { name?: string } | undefined)?.name ?? ''
    const code = (err as { code?: string } | undefined)?.code ?? ''
    const where = endpoint === undefined ? 'AWS S3' : `S3 endpoint ${originOf(endpoint)}`
    let reason: S3FailureReason = 'failed'
    let message: string
    if (name === 'NoSuchBucket' || (status === 404 && name === 'NotFound')) {
      reason = 'bucket missing'
      message = `bucket missing: "${bucket}" does not exist at ${where}; create it, or set S3_BUCKET to one that does`
    } else if (status === 403 || DENIED_NAMES.has(name)) {
      reason = 'access denied'
      message = `access denied to bucket "${bucket}" at ${where} (${name === '' ? `HTTP ${String(status)}` : name}); check S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY and the bucket's policy`
    } else if (isUnreachable(err) || name === 'TimeoutError' || name === 'AbortError') {
      reason = 'endpoint unreachable'
      message = `endpoint unreachable: ${where} did not answer (${code === '' ? name : code}); check S3_ENDPOINT and the network`
    } else {
      message = `S3 call on bucket "${bucket}" at ${where} failed: ${name === '' ? 'error' : name}${status === undefined ? '' : ` (HTTP ${status})`}`
    }
    super(message)
    this.name = 'S3Failure'
    this.reason = reason
    this.status = status
    this.sdkName = code !== '' ? code : name
  }
}

function originOf (endpoint: string): string {
  try { return new URL(endpoint).origin } catch { return 'the configured endpoint' }
}

function maxAgeOf (cacheControl: string | undefined): number | undefined {
  const match = /(?:^|[,\s])max-age=(\d+)/i.exec(cacheControl ?? '')
  return match?.[1] === undefined ? undefined : Number(match[1])
}

/** The S3 client settings the storage uses (exported so a test can upload through the very same ones). */
export function toS3ClientConfig (options: S3StorageOptions, tuning: S3StorageTuning = {}): S3ClientConfig {
  const clientConfig: S3ClientConfig = {
    region: options.region,
    forcePathStyle: options.forcePathStyle,
    maxAttempts: tuning.maxAttempts ?? 3,
    // Checksums only where the operation requires one. With the SDK's default (when supported), a
    // streamed upload is sent with aws-chunked framing, which some S3-compatible servers (s3rver among
    // them) store as part of the object: silently corrupt files. Buffers are sent plain either way;
    // this keeps streamed uploads safe too.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: { connectionTimeout: 5_000, requestTimeout: tuning.requestTimeoutMs ?? 60_000 }
  }
  if (options.endpoint !== undefined) clientConfig.endpoint = options.endpoint
  if (options.accessKeyId !== undefined && options.secretAccessKey !== undefined) {
    clientConfig.credentials = { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey }
  }
  return clientConfig
}

export function createS3Storage (options: S3StorageOptions, deps: { log: Logger }, tuning: S3StorageTuning = {}): Storage {
  const log = deps.log.child({ component: 'storage' })
  const bucket = options.bucket
  const publicBase = `${options.cdnUrl.replace(/\/+$/, '')}/`
  const healthTimeoutMs = tuning.healthTimeoutMs ?? 5_000
  const client = new S3Client(toS3ClientConfig(options, tuning))
  // /ready polls health(): log when the bucket becomes unreachable, not on every probe.
  let healthy = true

  return {
    kind: 's3',

    async put (key, body, putOptions) {
      assertPutArgs(key, body, putOptions)
      const disposition = contentDispositionOf(key, putOptions.filename)
      try {
        await client.send(new PutObjectCommand({
          Bucket: bucket,
          Key: key,
          Body: body,
          ContentLength: body.length,
          ContentType: putOptions.contentType,
          CacheControl: `public, max-age=${putOptions.maxAgeSeconds}`,
          ...(disposition === undefined ? {} : { ContentDisposition: disposition })
        }))
      } catch (err) {
        throw new AppError('EFATAL', { cause: new S3Failure(err, bucket, options.endpoint) })
      }
      return publicBase + key
    },

    async get (key): Promise<StoredFile | undefined> {
      if (!isValidFileKey(key)) return undefined
      try {
        const res = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }))
        if (res.Body === undefined) return undefined
        const bytes = await res.Body.transformToByteArray()
        const body = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
        const file: StoredFile = {
          body,
          contentType: res.ContentType ?? 'application/octet-stream',
          size: body.length
        }
        if (res.ContentDisposition !== undefined && res.ContentDisposition !== '') file.contentDisposition = res.ContentDisposition
        const maxAge = maxAgeOf(res.CacheControl)
        if (maxAge !== undefined) file.maxAgeSeconds = maxAge
        return file
      } catch (err) {
        if (isNotFound(err)) return undefined
        throw new AppError('EFATAL', { cause: new S3Failure(err, bucket, options.endpoint) })
      }
    },

    urlOf (key) {
      return publicBase + key
    },

    async health () {
      try {
        await client.send(new HeadBucketCommand({ Bucket: bucket }), { abortSignal: AbortSignal.timeout(healthTimeoutMs) })
        if (!healthy) log.info({ bucket }, 'storage bucket is reachable again')
        healthy = true
      } catch (err) {
        if (healthy) {
          const failure = new S3Failure(err, bucket, options.endpoint)
          log.warn({ bucket, reason: failure.reason, status: failure.status, detail: failure.message }, `storage bucket is not reachable: ${failure.reason}`)
        }
        healthy = false
      }
      return healthy
    },

    async close () {
      client.destroy()
    }
  }
}
