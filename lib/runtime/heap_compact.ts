/**
 * @module heap_compact
 * One memory-reducing collection of V8's heap, for a process whose burst of work is over. V8's own
 * memory reducer does the same some seconds after a process goes idle, but only when its heuristics
 * agree: in two of five runs of the scale bench it never came (the controller renews its Lease and
 * reads watch bookmarks) and the settled controller kept 102–114 MB of heap for 75 MB of live objects
 * (docs/controller-scale.md, "The idle collection"). The "last-resort" collection compacts the heap
 * and gives its free pages back, as the reducer would.
 *
 * The collection function is V8's `gc` extension, exposed at run time (`--expose-gc` then a new
 * context, the documented Node idiom, which Deno's node:v8 and node:vm support), so no command line
 * or chart needs a flag for it. Where it cannot be had, compacting does nothing.
 */
import v8 from "node:v8";
import vm from "node:vm";

type GcFunction = (options: { type: "major"; execution: "sync"; flavor: "last-resort" }) => void;

let gcFunction: GcFunction | null | undefined;

function gcOf(): GcFunction | null {
  if (gcFunction !== undefined) return gcFunction;
  try {
    const exposed = (globalThis as { gc?: GcFunction }).gc;
    if (typeof exposed === "function") return gcFunction = exposed;
    v8.setFlagsFromString("--expose-gc");
    const fn = vm.runInNewContext("gc") as unknown;
    gcFunction = typeof fn === "function" ? fn as GcFunction : null;
  } catch {
    gcFunction = null;
  }
  return gcFunction;
}

/** A synchronous memory-reducing full collection: true when it ran. */
export function compactHeap(): boolean {
  const gc = gcOf();
  if (!gc) return false;
  gc({ type: "major", execution: "sync", flavor: "last-resort" });
  return true;
}
