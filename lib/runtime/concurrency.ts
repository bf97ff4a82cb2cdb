/**
 * @module concurrency
 * Bounded parallelism for independent API calls (status writes, part reads): at most `limit`
 * run at a time, all are awaited, and the first failure is thrown after the others settle.
 */

/** Runs `work` for every item, at most `limit` at a time. */
export async function forEachLimit<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  let failed: { err: unknown } | null = null;
  const lane = async () => {
    while (next < items.length) {
      const item = items[next++];
      try {
        await work(item);
      } catch (err) {
        failed ??= { err };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, lane));
  if (failed) throw (failed as { err: unknown }).err;
}
