/**
 * @module render/show
 * Small helpers the model's modules share: a value as problem messages show it, and string order.
 */

/** JSON for messages, non-ASCII escaped too: keeps a hostile value on one line and visibly quoted. */
export function show(v: unknown): string {
  const s = (JSON.stringify(v) ?? String(v)).replace(
    /[^\x20-\x7e]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
  return s.length > 80 ? `${s.slice(0, 77)}..."` : s;
}

/** Code-unit order, as the sorted lists of the model use it. */
export function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
