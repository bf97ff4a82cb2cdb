/**
 * @module render/sorted
 * Sorted arrays kept sorted through single insertions and removals (binary search, one splice):
 * the model of 10,000 routes changes by a few entries, and sorting it again cost more than the
 * change itself.
 */

/** The first index whose item is not before `item` (the length if none). */
export function lowerBound<T>(arr: readonly T[], item: T, compare: (a: T, b: T) => number): number {
  let lo = 0;
  let hi = arr.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compare(arr[mid], item) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Inserts `item` at its place (after equal items); returns that index. */
export function insertSorted<T>(arr: T[], item: T, compare: (a: T, b: T) => number): number {
  let i = lowerBound(arr, item, compare);
  while (i < arr.length && compare(arr[i], item) === 0) i++;
  arr.splice(i, 0, item);
  return i;
}

/** Removes the item comparing equal to `item`; false if there is none. */
export function removeSorted<T>(arr: T[], item: T, compare: (a: T, b: T) => number): boolean {
  const i = lowerBound(arr, item, compare);
  if (i >= arr.length || compare(arr[i], item) !== 0) return false;
  arr.splice(i, 1);
  return true;
}
