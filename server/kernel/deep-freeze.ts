/**
 * Freezes a value and everything it holds, for objects shared between requests (memoized inputs, parsed expressions,
 * built queries and answers): code that changed one in place fails at once with a TypeError instead of changing what
 * another request reads. Already frozen objects are not walked again.
 */
export function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const v of Object.values(value)) deepFreeze(v);
  return value;
}
