// Deep immutability, decided once: shared values (parsed options kept for later requests, schema tables) are frozen
// all the way down so nothing can alter them for the next user.

/**
 * Freezes `value` and everything reachable from it (object members, array items, Map values); cycles are fine. An
 * object found already frozen is taken as deep-frozen by whoever froze it, and not walked again.
 */
export function deepFreeze<T> (value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value
  // Frozen before its members are walked, so a cycle back to it stops there (no set of the objects seen): every
  // object frozen on the way is deep-frozen by the time this call returns.
  Object.freeze(value)
  if (value instanceof Map) {
    for (const entry of value.values()) deepFreeze(entry)
  } else {
    const record = value as Record<string, unknown>
    for (const key of Object.keys(record)) deepFreeze(record[key])
  }
  return value
}
