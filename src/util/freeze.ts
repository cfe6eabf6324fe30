// Deep immutability, decided once: shared values (parsed options kept for later requests, schema tables) are frozen
// all the way down so nothing can alter them for the next user.

/**
 * Freezes `value` and everything reachable from it (object members, array items, Map values); cycles are fine. An
 * object found already frozen is taken as deep-frozen by whoever froze it, and not walked again.
 */
export function deepFreeze<T> (value: T, seen = new Set<unknown>()): T {
  if (value === null || typeof value !== 'object' || seen.has(value) || Object.isFrozen(value)) return value
  seen.add(value)
  if (value instanceof Map) for (const entry of value.values()) deepFreeze(entry, seen)
  else for (const entry of Object.values(value)) deepFreeze(entry, seen)
  return Object.freeze(value)
}
