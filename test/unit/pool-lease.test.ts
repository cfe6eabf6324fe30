// A lease's named states and the reuse policy, without a browser.
import { describe, expect, it } from 'vitest'
import { cleanTaint, nextLeaseState, pageReplaced, parkAfterReset, worthResetting } from '../../src/browser/pool/lease-state.ts'
import type { LeaseEvent, LeaseState } from '../../src/browser/pool/lease-state.ts'

describe('nextLeaseState', () => {
  it('follows a lease through a job, its reset, the idle list and back', () => {
    let state: LeaseState = 'busy'
    for (const [event, expected] of [['release', 'resetting'], ['ready', 'idle'], ['take', 'busy'], ['close', 'closed']] as const) {
      state = nextLeaseState(state, event)
      expect(state).toBe(expected)
    }
  })

  it('closes from any live state, and refuses what a state does not allow', () => {
    for (const state of ['busy', 'resetting', 'idle'] as const) expect(nextLeaseState(state, 'close')).toBe('closed')
    const refused: Array<[LeaseState, LeaseEvent]> = [
      ['busy', 'take'], ['busy', 'ready'], ['idle', 'release'], ['idle', 'ready'], ['resetting', 'take'],
      ['closed', 'take'], ['closed', 'close']
    ]
    for (const [state, event] of refused) expect(() => nextLeaseState(state, event)).toThrow(`a ${state} lease cannot ${event}`)
  })
})

describe('taint', () => {
  it('starts clean, and a new page clears all but the context\'s', () => {
    const taint = cleanTaint()
    expect(Object.values(taint).every((value) => !value)).toBe(true)
    Object.assign(taint, { context: true, page: true, viewport: true, timeouts: true, routes: true })
    pageReplaced(taint)
    expect(taint).toEqual({ context: true, page: false, viewport: false, timeouts: false, routes: false })
  })
})

describe('the reuse policy', () => {
  const policy = { maxIdleContexts: 3, maxJobsPerContext: 100 }
  const released = { closing: false, generationUp: true, contextTainted: false, jobs: 1 }

  it('resets a clean lease of a live browser that has jobs left', () => {
    expect(worthResetting(released, policy)).toBe(true)
    expect(worthResetting({ ...released, jobs: 99 }, policy)).toBe(true)
  })

  it('closes it while closing, on a retired or dead browser, when tainted, after its last job, or when none are kept', () => {
    expect(worthResetting({ ...released, closing: true }, policy)).toBe(false)
    expect(worthResetting({ ...released, generationUp: false }, policy)).toBe(false)
    expect(worthResetting({ ...released, contextTainted: true }, policy)).toBe(false)
    expect(worthResetting({ ...released, jobs: 100 }, policy)).toBe(false)
    expect(worthResetting(released, { ...policy, maxIdleContexts: 0 })).toBe(false)
  })

  it('parks a reset lease only if the reset worked and its browser is still the live one', () => {
    expect(parkAfterReset(true, false, true)).toBe(true)
    expect(parkAfterReset(false, false, true)).toBe(false)
    expect(parkAfterReset(true, true, true)).toBe(false)
    expect(parkAfterReset(true, false, false)).toBe(false)
  })
})
