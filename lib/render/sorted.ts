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
  insertAt(arr, i, item);
  return i;
}

/** Removes the item comparing equal to `item`; false if there is none. */
export function removeSorted<T>(arr: T[], item: T, compare: (a: T, b: T) => number): boolean {
  const i = lowerBound(arr, item, compare);
  if (i >= arr.length || compare(arr[i], item) !== 0) return false;
  removeAt(arr, i);
  return true;
}

/*
 * Elements are moved one by one, not spliced: a splice may trim the array's storage (a removal near
 * the front moves its start), and the next insertion then copies all of it into a larger one. A
 * route change of 100,000 routes removed one route and inserted two: 1.2 MB of new storage for each
 * of the model's routes and the maps' sorted lines, every change, for the collector.
 */

/** `arr` with `item` inserted at index `i`. */
export function insertAt<T>(arr: T[], i: number, item: T): void {
  let k = arr.length;
  arr.push(item);
  for (; k > i; k--) arr[k] = arr[k - 1];
  arr[i] = item;
}

/** `arr` without its item at index `i`. */
export function removeAt<T>(arr: T[], i: number): void {
  const last = arr.length - 1;
  for (let k = i; k < last; k++) arr[k] = arr[k + 1];
  arr.pop();
}

/**
 * A copy of `arr` with room for a few more items: a copy made to be changed (a model's array copied
 * before its first change) would otherwise be copied again into larger storage by its first insertion.
 */
export function roomyCopy<T>(arr: readonly T[]): T[] {
  const copy: T[] = new Array(arr.length + ROOM);
  for (let i = 0; i < arr.length; i++) copy[i] = arr[i];
  // A shorter length keeps the storage (V8 trims it only below half).
  copy.length = arr.length;
  return copy;
}

const ROOM = 16;
