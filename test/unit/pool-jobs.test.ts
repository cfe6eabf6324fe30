// What the pool makes of a job: which refusal is its main navigation's (and so its answer), and how its outcome,
// its abort and a refusal combine. No browser: the records are filled by hand as the page guards would.
import { describe, expect, it } from 'vitest'
import { AppError } from '../../src/errors.ts'
import type { EgressRefusal } from '../../src/browser/egress-proxy.ts'
import { createJobRecord, outcomeOf, refusedNavigation, resultOf, withoutHash } from '../../src/browser/pool/jobs.ts'
import type { JobRecord } from '../../src/browser/pool/jobs.ts'

function record (navigations: string[], refusals: EgressRefusal[], failed: string[] = []): JobRecord {
  const job = createJobRecord({}, new AbortController())
  job.navigations.push(...navigations)
  job.refusals.push(...refusals)
  job.failedNavigations.push(...failed)
  return job
}

const blockedHttp: EgressRefusal = { kind: 'blocked', channel: 'http', url: 'http://10.0.0.1/admin', host: '10.0.0.1', port: 80, reason: 'private' }
const blockedTunnel: EgressRefusal = { kind: 'blocked', channel: 'tunnel', url: 'https://internal.test:443', host: 'internal.test', port: 443, reason: 'private' }
const unreachable: EgressRefusal = { kind: 'unreachable', channel: 'http', url: 'http://down.test/', host: 'down.test', port: 80, reason: 'ECONNREFUSED' }

describe('refusedNavigation', () => {
  it('is the refusal of a main-frame navigation URL (hash ignored), not of a sub-request', () => {
    expect(refusedNavigation(record(['http://10.0.0.1/admin'], [blockedHttp]))).toBe(blockedHttp)
    expect(refusedNavigation(record([withoutHash('http://10.0.0.1/admin#x')], [{ ...blockedHttp, url: 'http://10.0.0.1/admin#y' }]))?.url).toBe('http://10.0.0.1/admin#y')
    expect(refusedNavigation(record(['http://example.test/'], [blockedHttp]))).toBeUndefined()
  })

  it('matches a refused tunnel by host and effective port, since TLS hides the path', () => {
    expect(refusedNavigation(record(['https://internal.test/deep/path'], [blockedTunnel]))).toBe(blockedTunnel)
    expect(refusedNavigation(record(['https://internal.test:8443/'], [blockedTunnel]))).toBeUndefined()
  })

  it('counts "unreachable" only when that navigation itself failed', () => {
    expect(refusedNavigation(record(['http://down.test/'], [unreachable]))).toBeUndefined()
    expect(refusedNavigation(record(['http://down.test/'], [unreachable], ['http://down.test/']))).toBe(unreachable)
  })
})

describe('outcomeOf and resultOf', () => {
  it('gives the job\'s value, or its error mapped to a public code', async () => {
    const job = record([], [])
    expect(resultOf(job, await outcomeOf(Promise.resolve(42), job.controller.signal))).toBe(42)
    const failed = await outcomeOf(Promise.reject(new Error('boom')), job.controller.signal)
    expect(() => resultOf(job, failed)).toThrow(AppError)
  })

  it('settles as soon as the signal aborts, with the abort\'s error, though the job never ends', async () => {
    const job = record([], [])
    const pending = outcomeOf(new Promise<never>(() => {}), job.controller.signal)
    const reason = new AppError('EBUSY')
    job.controller.abort(reason)
    const outcome = await pending
    expect(outcome).toEqual({ ok: false, error: reason })
    expect(() => resultOf(job, outcome)).toThrow(reason)
  })

  it('answers a refused main navigation whatever the job returned', async () => {
    const job = record(['http://10.0.0.1/admin'], [blockedHttp])
    let caught: unknown
    try { resultOf(job, await outcomeOf(Promise.resolve('page'), job.controller.signal)) } catch (err) { caught = err }
    expect(caught).toBeInstanceOf(AppError)
    expect((caught as AppError).code).toBe('EFORBIDDENURL')
  })
})
