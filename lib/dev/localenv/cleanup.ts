/**
 * @module lib/dev/localenv/cleanup
 * One process-wide list of things to stop (child processes, temporary directories) when the Deno
 * process gets SIGINT or SIGTERM. The signal listeners exist only while the list is non-empty, so
 * tests that stop everything leave no signal resource behind (Deno's resource sanitizer).
 */

type Stopper = () => Promise<unknown>;

/** Stoppers, and whether each runs before the others (one that stops the rest in its own order). */
const live = new Map<Stopper, boolean>();
const signals: Deno.Signal[] = ["SIGINT", "SIGTERM"];
let listening = false;

async function onSignal(signal: Deno.Signal) {
  console.error(`[testenv] ${signal}: stopping ${live.size} test-environment part(s)`);
  const phase = (first: boolean) => [...live].filter(([, f]) => f === first).map(([stop]) => stop());
  await Promise.allSettled(phase(true));
  // What the first ones stopped has left the list.
  await Promise.allSettled(phase(false));
  // Die of the same signal, as if nobody had listened (Deno.exit is refused inside `deno test`).
  unlisten();
  Deno.kill(Deno.pid, signal);
}

const handlers = new Map(signals.map((s) => [s, () => void onSignal(s)]));

/**
 * Adds `stop` to the list; returns a function that removes it again. `first`: on a signal it runs
 * (and is awaited) before the others, as a program that stops its parts in order (the demo's
 * controller before the API server it releases its Lease on).
 */
export function register(stop: Stopper, opts: { first?: boolean } = {}): () => void {
  live.set(stop, opts.first ?? false);
  if (!listening) {
    for (const [s, h] of handlers) Deno.addSignalListener(s, h);
    listening = true;
  }
  return () => {
    live.delete(stop);
    if (live.size === 0) unlisten();
  };
}

function unlisten() {
  if (!listening) return;
  for (const [s, h] of handlers) Deno.removeSignalListener(s, h);
  listening = false;
}
