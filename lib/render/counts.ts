/**
 * @module render/counts
 * Counts kept in a Map: what the model's deltas keep of claims, uses and references.
 */

/** Increments; returns the count. */
export function inc(m: Map<string, number>, k: string): number {
  const n = (m.get(k) ?? 0) + 1;
  m.set(k, n);
  return n;
}

/** Decrements; deletes at zero. Returns the count left. */
export function dec(m: Map<string, number>, k: string): number {
  const n = (m.get(k) ?? 0) - 1;
  if (n <= 0) m.delete(k);
  else m.set(k, n);
  return n;
}
