/**
 * @module render/slots
 * Server slots (contracts.md §4): every backend has a fixed number of `server s<N>` lines so
 * that an endpoint change is a Runtime API change, not a reload. `skeleton` is the structural
 * form of a configuration in which two configs that differ only in endpoints are equal; the
 * proxy applies the same regex on its side.
 */

/** Slot count for `endpoints` servers: max(4, the next power of two ≥ endpoints). */
export function slotCount(endpoints: number): number {
  let n = 4;
  while (n < endpoints) n *= 2;
  return n;
}

/** A slot line as fixed by the contract: group 2 is the address, group 3 the `disabled` flag. */
export const SLOT_LINE = /^(\s+server\s+s\d+\s+)(\S+?)(\s+disabled)?(\s.*)?$/;

/** The unused-slot target: never reached, always written with `disabled`. */
export const UNUSED_SLOT_ADDRESS = "127.0.0.1:1";

/**
 * The slot lines of one backend (4 spaces indent, no newline): endpoints fill s1…sK in the
 * given (already sorted) order, the rest are `127.0.0.1:1 disabled`. `params` is appended to
 * every line and must be the same for all of them (it never contains `disabled`).
 */
export function slotLines(servers: readonly { address: string; port: number }[], params = ""): string[] {
  if (/\bdisabled\b/.test(params) || /[\r\n]/.test(params)) throw new Error(`invalid server params ${params}`);
  const tail = params ? ` ${params}` : "";
  const n = slotCount(servers.length);
  // Sized up front: a pushed array keeps room for 16 more, and a render keeps one per backend.
  const lines = new Array<string>(n);
  for (let i = 0; i < n; i++) {
    const s = servers[i];
    // Joined, not concatenated: a template literal's result is a chain of string pieces until
    // read whole, and these lines are kept for as long as their backend.
    lines[i] = s ? ["    server s", i + 1, " ", s.address, ":", s.port, tail].join("") : unusedSlotLine(i + 1, tail);
  }
  return lines;
}

/** Unused slot lines are the same in every backend: one string each, shared (by params, then slot). */
const unusedLines = new Map<string, string[]>();
function unusedSlotLine(slot: number, tail: string): string {
  let lines = unusedLines.get(tail);
  if (lines === undefined) {
    lines = [];
    if (unusedLines.size < 256) unusedLines.set(tail, lines);
  }
  return lines[slot] ??= ["    server s", slot, " ", UNUSED_SLOT_ADDRESS, " disabled", tail].join("");
}

/**
 * The form of a configuration `haproxy -c` checks: each backend keeps its first slot line and
 * leaves out the others. Those differ from the first only in their slot number and address
 * (`slotLines`: one `params` for every line, addresses of validated IPs; the built-in templates
 * never name a slot), neither of which can make the check fail, and at 10,000 backends the 30,000
 * lines left out are most of HAProxy's parse. Custom templates may name slots: check them whole.
 */
export function checkedForm(config: string): string {
  const lines = config.split("\n");
  const kept: string[] = [];
  let inSlots = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const slot = line.startsWith("    server s") && SLOT_LINE.test(line);
    if (!slot || !inSlots) kept.push(line);
    inSlots = slot;
  }
  return kept.join("\n");
}

/** Replaces each slot line's address with `ADDR` and drops its `disabled` flag. */
export function skeleton(config: string): string {
  return config.split("\n").map((line) => {
    const m = SLOT_LINE.exec(line);
    return m ? `${m[1]}ADDR${m[4] ?? ""}` : line;
  }).join("\n");
}
