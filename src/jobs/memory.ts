// The in-process backend (no REDIS_URL, the embedded default): the job store and the page queue in this process's
// memory, behind the same interfaces as the Redis ones (redis.ts, bullmq.ts), so `npm start` serves
// the whole job API. Nothing survives a restart; expired jobs are dropped when touched and by a sweep.
import type { FinishResult, JobErrorEntry, JobRecord, JobStore, PageOutcome, PageQueue, PageTask } from './types.ts'
import { ownerKeyOf } from './types.ts'

interface MemoryJob {
  record: JobRecord
  seen: Set<string>
  /** Keys of redirect targets, and the page that claimed each. */
  finals: Map<string, string>
  done: Set<string>
  pending: number
  documents: string[]
  errors: JobErrorEntry[]
  robots: string[]
  robotsSeen: Set<string>
  children: Map<string, string[]>
}

const SWEEP_MS = 60_000

export function createMemoryJobStore (): JobStore {
  const jobs = new Map<string, MemoryJob>()
  const sweep = setInterval(() => {
    const now = Date.now()
    for (const [id, job] of jobs) if (job.record.expiresAt <= now) jobs.delete(id)
  }, SWEEP_MS)
  sweep.unref()

  function live (id: string): MemoryJob | undefined {
    const job = jobs.get(id)
    if (job !== undefined && job.record.expiresAt <= Date.now()) { jobs.delete(id); return undefined }
    return job
  }

  return {
    async create (record, first) {
      const seen = new Set(first.map(c => c.key))
      jobs.set(record.id, { record: { ...record, total: seen.size }, seen, finals: new Map(), done: new Set(), pending: seen.size, documents: [], errors: [], robots: [], robotsSeen: new Set(), children: new Map() })
    },
    async get (id) {
      const job = live(id)
      return job === undefined ? undefined : structuredClone(job.record)
    },
    async admit (id, parent, candidates, limit) {
      const job = live(id)
      if (job === undefined || job.record.status !== 'scraping') return []
      const admitted: string[] = []
      for (const { key, url } of candidates) {
        if (job.record.total + admitted.length >= limit) break
        if (job.seen.has(key) || job.finals.has(key)) continue
        job.seen.add(key)
        admitted.push(url)
      }
      job.pending += admitted.length
      job.record.total += admitted.length
      if (admitted.length > 0) job.children.set(parent, [...(job.children.get(parent) ?? []), ...admitted])
      return admitted
    },
    async claimFinal (id, url, key) {
      const job = live(id)
      if (job === undefined || job.seen.has(key)) return false
      const owner = job.finals.get(key)
      if (owner !== undefined) return owner === url
      job.finals.set(key, url)
      return true
    },
    async children (id, parent) {
      return [...(live(id)?.children.get(parent) ?? [])]
    },
    async isDone (id, url) {
      return live(id)?.done.has(url) ?? false
    },
    async finish (id, url, outcome: PageOutcome): Promise<FinishResult> {
      const job = live(id)
      if (job === undefined || job.done.has(url)) return { recorded: false, finished: false }
      job.done.add(url)
      job.pending -= 1
      const scraping = job.record.status === 'scraping'
      if (scraping && outcome.kind === 'document') { job.documents.push(outcome.json); job.record.completed += 1 }
      if (scraping && outcome.kind === 'error') {
        job.errors.push({ id: `${id}:${job.done.size}`, url, error: outcome.error, ...(outcome.code === undefined ? {} : { code: outcome.code }) })
        job.record.failed += 1
      }
      if (scraping && outcome.kind === 'dropped') job.record.total -= 1
      const finished = scraping && job.pending <= 0
      if (finished) job.record.status = job.record.completed > 0 ? 'completed' : 'failed'
      return { recorded: scraping, finished }
    },
    async documents (id, skip, count) {
      return live(id)?.documents.slice(skip, skip + count) ?? []
    },
    async errors (id) {
      const job = live(id)
      return { errors: [...(job?.errors ?? [])], robotsBlocked: [...(job?.robots ?? [])] }
    },
    async robotsBlocked (id, urls) {
      const job = live(id)
      for (const url of urls) {
        if (job === undefined || job.robotsSeen.has(url)) continue
        job.robotsSeen.add(url)
        job.robots.push(url)
      }
    },
    async end (id, status, error) {
      const job = live(id)
      if (job === undefined || job.record.status !== 'scraping') return false
      job.record.status = status
      if (error !== undefined) job.record.error = error
      return true
    },
    async ongoing (ownerKey) {
      return [...jobs.values()]
        .filter(job => job.record.kind === 'crawl' && job.record.status === 'scraping' && ownerKeyOf(job.record.owner) === ownerKey && job.record.expiresAt > Date.now())
        .map(job => structuredClone(job.record))
    },
    async close () {
      clearInterval(sweep)
      jobs.clear()
    }
  }
}

/** Tasks worked in this process, at most `concurrency` at once, in the order they were added. */
export function createMemoryPageQueue (options: { concurrency: number }): PageQueue {
  const waiting: PageTask[] = []
  let running = 0
  let handler: ((task: PageTask) => Promise<void>) | undefined
  let closed = false
  const inFlight = new Set<Promise<void>>()

  function pump (): void {
    while (!closed && handler !== undefined && running < options.concurrency && waiting.length > 0) {
      const task = waiting.shift() as PageTask
      running += 1
      const work = handler(task).catch(() => {}).finally(() => {
        running -= 1
        inFlight.delete(work)
        pump()
      })
      inFlight.add(work)
    }
  }

  return {
    kind: 'memory',
    async add (tasks) {
      waiting.push(...tasks)
      pump()
    },
    work (handle) {
      handler = handle
      pump()
    },
    async close () {
      closed = true
      waiting.length = 0
      await Promise.allSettled([...inFlight])
    }
  }
}
