// Small tools to watch what a job does to a page or context: which listeners it added (so the reset can remove
// them) and which lasting methods it called (so the lease knows what a reset cannot undo).

interface ListenerIntrospection {
  eventNames (): Array<string | symbol>
  listeners (event: string | symbol): Array<(...args: unknown[]) => unknown>
  off (event: string | symbol, listener: (...args: unknown[]) => unknown): unknown
}

export type ListenerSnapshot = Map<string | symbol, Set<unknown>>

export function snapshotListeners (emitter: object): ListenerSnapshot {
  const target = emitter as unknown as ListenerIntrospection
  const snapshot: ListenerSnapshot = new Map()
  for (const name of target.eventNames()) snapshot.set(name, new Set(target.listeners(name)))
  return snapshot
}

/** Removes every listener that was not there when the snapshot was taken. */
export function restoreListeners (emitter: object, snapshot: ListenerSnapshot): void {
  const target = emitter as unknown as ListenerIntrospection
  for (const name of target.eventNames()) {
    const keep = snapshot.get(name)
    for (const listener of target.listeners(name)) {
      if (keep === undefined || !keep.has(listener)) target.off(name, listener)
    }
  }
}

/** Wraps methods of one object (not its class) so that calling them first runs `onCall`. */
export function shadowMethods (target: object, names: readonly string[], onCall: (name: string) => void): void {
  const record = target as Record<string, unknown>
  for (const name of names) {
    const original = record[name]
    if (typeof original !== 'function') continue
    Object.defineProperty(target, name, {
      configurable: true,
      writable: true,
      value: (...args: unknown[]): unknown => {
        onCall(name)
        return (original as (...a: unknown[]) => unknown).apply(target, args)
      }
    })
  }
}
