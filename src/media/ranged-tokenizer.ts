// A strtok3 tokenizer over a remote file that is never downloaded whole: the probe's first bytes, plus at most a few
// more ranged reads within a byte budget (docs/api.md §9, media enrichment). music-metadata parses through it, so a
// container whose header sits at the end (an mp4 `moov` atom after the media data) is read where it is, and a
// container that would need more than the budget fails the read instead of being guessed from a part of it.
import { AbstractTokenizer, EndOfStreamError, type IFileInfo, type IReadChunkOptions } from 'strtok3'

/** Reads `length` bytes at `offset`, or null when the server does not give exactly that range. */
export type RangeFetch = (offset: number, length: number) => Promise<Buffer | null>

export interface RangeBudget {
  /** Bytes the further reads may fetch, in all. */
  bytes: number
  /** Further reads at most. */
  reads: number
  /** Bytes one further read asks for at least (reads are this large so neighbouring reads are served from memory). */
  block: number
}

/** Thrown when a read would go past what the budget, or the server, allows; the parse fails with it. */
export class OutOfBudgetError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'OutOfBudgetError'
  }
}

interface Segment {
  start: number
  bytes: Buffer
}

export interface RangedSource {
  /** The first bytes of the file (offset 0). */
  head: Buffer
  /** The file's size, when the server said it. */
  size: number | null
  /** Whether further ranged reads may be made (the server answered the first one with 206, and the size is known). */
  ranges: boolean
  mimeType?: string
  fetch: RangeFetch
}

export class RangedTokenizer extends AbstractTokenizer {
  readonly fileInfo: IFileInfo
  private readonly segments: Segment[]
  private readonly source: RangedSource
  private readonly budget: RangeBudget
  private readonly random: boolean
  private fetched = 0

  constructor (source: RangedSource, budget: RangeBudget) {
    super()
    this.source = source
    this.budget = { ...budget }
    this.segments = [{ start: 0, bytes: source.head }]
    const whole = source.size !== null && source.head.length >= source.size
    this.fileInfo = {
      ...(source.size === null ? {} : { size: source.size }),
      ...(source.mimeType === undefined ? {} : { mimeType: source.mimeType })
    }
    this.random = whole || (source.ranges && source.size !== null)
  }

  /** Requests made beyond the first bytes. */
  get reads (): number {
    return this.fetched
  }

  supportsRandomAccess (): boolean {
    return this.random
  }

  setPosition (position: number): void {
    this.validateLength(position, 'position')
    this.position = position
  }

  async readBuffer (target: Uint8Array, options?: IReadChunkOptions): Promise<number> {
    const normalized = this.normalizeOptions(target, options)
    const read = await this.peekBuffer(target, normalized)
    this.position = normalized.position + read
    return read
  }

  async peekBuffer (target: Uint8Array, options?: IReadChunkOptions): Promise<number> {
    const { position, length, mayBeLess } = this.normalizeOptions(target, options)
    const size = this.fileInfo.size
    const available = size === undefined ? length : Math.max(0, Math.min(length, size - position))
    if (available < length && mayBeLess !== true) throw new EndOfStreamError()
    if (available === 0) return 0
    const segment = this.segmentFor(position, available) ?? await this.load(position, available)
    const from = position - segment.start
    target.set(segment.bytes.subarray(from, from + available))
    return available
  }

  private segmentFor (position: number, length: number): Segment | undefined {
    return this.segments.find(s => s.start <= position && position + length <= s.start + s.bytes.length)
  }

  /** One further ranged read that covers [position, position + length), within the budget. */
  private async load (position: number, length: number): Promise<Segment> {
    if (!this.random) throw new OutOfBudgetError(`bytes ${position}+${length} are past the first read and the file has no ranges`)
    if (this.fetched >= this.budget.reads) throw new OutOfBudgetError(`bytes ${position}+${length}: no reads left`)
    const size = this.fileInfo.size!
    let want = Math.min(Math.max(length, this.budget.block), this.budget.bytes)
    if (want < length) throw new OutOfBudgetError(`bytes ${position}+${length} exceed the read budget`)
    // Near the end, read the whole tail: trailing tags and a trailing `moov` then come in one request.
    const start = size - position <= want ? Math.max(0, size - want) : position
    want = Math.min(want, size - start)
    this.fetched++
    this.budget.bytes -= want
    const bytes = await this.source.fetch(start, want)
    if (bytes === null || bytes.length < want) throw new OutOfBudgetError(`the server did not give bytes ${start}+${want}`)
    const segment = { start, bytes }
    this.segments.push(segment)
    return segment
  }
}
