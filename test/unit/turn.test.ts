import { describe, expect, it } from 'vitest'
import { endOfTurn } from '../../src/util/turn.ts'

describe('endOfTurn', () => {
  it('resolves every caller of a turn at once, after the turn, and a new turn again', async () => {
    const order: string[] = []
    const first = endOfTurn().then(() => { order.push('first') })
    const second = endOfTurn().then(() => { order.push('second') })
    queueMicrotask(() => { order.push('microtask') })
    setImmediate(() => { order.push('immediate queued later') })
    await Promise.all([first, second])
    expect(order).toEqual(['microtask', 'first', 'second'])
    let later = false
    const next = endOfTurn().then(() => { later = true })
    expect(later).toBe(false)
    await next
    expect(later).toBe(true)
  })
})
