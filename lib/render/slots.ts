/**
 * @module render/slots
 * Server slots (contracts.md §4 "Server slots"): the `server s<N>` lines of a backend, written so
 * that an endpoint change is a Runtime API change, not a reload. A backend HAProxy 2.6 can add
 * servers to at run time (a growable one: {@link growable}) has one slot per endpoint (at least
 * one), and the proxy adds servers when endpoints outnumber its slots; any other backend has a
 * fixed power of two of slots (at least 4), the unused ones disabled. `skeleton` is the structural
 * form of a configuration in which two configs that differ only in endpoints are equal; the proxy
 * applies the same function on its side.
 */

/**
 * The balance algorithms of ours whose backends take servers added at run time: HAProxy 2.6's
 * `add server` refuses a backend whose algorithm is not dynamic (`Backend must use a dynamic load
 * balancing to support dynamic servers`), which `source` (a map-based hash) is not.
 */
const GROWABLE_BALANCE = new Set(["roundrobin", "leastconn"]);

/**
 * True when servers can be added to a backend with `balance` at run time and serve as its slots do:
 * a dynamic algorithm and no cookie persistence (an added server gets no dynamic cookie in 2.6,
 * so its clients would not stick to it).
 */
export function growable(balance: string, cookie: boolean): boolean {
  return GROWABLE_BALANCE.has(balance) && !cookie;
}

/**
 * Slot count for `endpoints` servers: in a growable backend one per endpoint, at least 1; else
 * max(4, the next power of two ≥ endpoints).
 */
export function slotCount(endpoints: number, grows = false): number {
  if (grows) return Math.max(1, endpoints);
  let n = 4;
  while (n < endpoints) n *= 2;
  return n;
}

/**
 * A slot line as fixed by the contract: group 2 is the address, group 3 the `disabled` flag, group 4
 * the options after them. A line with `disabled` or `enabled` among its options (HAProxy reads them
 * wherever they stand), or with a quote, an escape or a variable in them (HAProxy could read one
 * there), is no slot line: its changes are structure.
 */
export const SLOT_LINE =
  /^(\s+server\s+s\d+\s+)(\S+?)(\s+disabled)?((?:\s+(?!(?:disabled|enabled)(?:[\s#]|$))[^\s"'\\$]+)*\s*)$/;

/** The unused-slot target: never reached, always written with `disabled`. */
export const UNUSED_SLOT_ADDRESS = "127.0.0.1:1";

/**
 * The slot lines of one backend (4 spaces indent, no newline): endpoints fill s1…sK in the
 * given (already sorted) order, the rest are `127.0.0.1:1 disabled`. `params` is appended to
 * every line and must be the same for all of them (it never contains `disabled`, `enabled`, a quote,
 * an escape or a variable: the line would be no SLOT_LINE). `grows`: the
 * backend is growable ({@link growable}), one slot per endpoint.
 */
export function slotLines(servers: readonly { address: string; port: number }[], params = "", grows = false): string[] {
  if (/\b(?:disabled|enabled)\b|["'\\$\r\n]/.test(params)) throw new Error(`invalid server params ${params}`);
  const tail = params ? ` ${params}` : "";
  const n = slotCount(servers.length, grows);
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
 * The form of a configuration `haproxy -c` checks (the built-in templates'; custom templates may
 * name slots and backends anywhere: their configurations are checked whole, as is any that is not
 * {@link plainSections}):
 * - each backend keeps its first slot line and leaves out the others. Those differ from the first
 *   only in their slot number and address (`slotLines`: one `params` for every line, addresses of
 *   validated IPs; the built-in templates never name a slot), neither of which can make the check
 *   fail, and at 10,000 backends of 4 slots the 30,000 lines left out were most of HAProxy's parse;
 * - a backend that is, up to its name and its slots' addresses, the same text as one kept before is
 *   left out, unless its name appears in any other section of the configuration (a
 *   `default_backend`, a `use_backend`, a `track`) or is given twice: what HAProxy reads of it was
 *   read in the one kept, its name a validated token of the same characters. A class
 *   of 100,000 Ingresses of one Service each is a handful of such shapes: its check parsed 100,000
 *   backends in 2.7 s and 1.2 GB of memory, and parses a few now (0.13 s, 44 MB).
 */
export function checkedForm(config: string): string {
  // Sections as HAProxy reads them, or the configuration whole.
  if (!plainSections(config)) return config;
  const sections = config.split(SECTION_START);
  const names = sections.map(backendName);
  const forms = sections.map(firstSlotsOnly);
  const backends = new Set<string>();
  // Backends named anywhere but in their own section, or given twice (HAProxy refuses the second).
  const named = new Set<string>();
  for (const name of names) {
    if (name !== null && backends.has(name)) named.add(name);
    if (name !== null) backends.add(name);
  }
  for (let i = 0; i < sections.length; i++) {
    const lines = forms[i].split("\n");
    for (let l = names[i] === null ? 0 : 1; l < lines.length; l++) {
      const line = lines[l];
      if (names[i] !== null && (line === "" || PLAIN_BACKEND_LINE.test(line))) continue;
      for (const token of line.split(NAME_SEPARATOR)) {
        if (token !== names[i] && backends.has(token)) named.add(token);
      }
    }
  }
  const shapes = new Set<string>();
  const kept: string[] = [];
  for (let i = 0; i < sections.length; i++) {
    const [name, form] = [names[i], forms[i]];
    if (name !== null) {
      const shape = shapeOf(name, form);
      if (shapes.has(shape) && !named.has(name)) continue;
      shapes.add(shape);
    }
    kept.push(form);
  }
  return kept.join("\n");
}

/** A backend section `form` with its slots' addresses and every token of its `name` replaced. */
function shapeOf(name: string, form: string): string {
  // A name of other characters could not be told from the tokens around it: the backend is its own shape.
  if (!NAME_TOKEN.test(name)) return form;
  const end = form.indexOf("\n") + 1;
  const header = form.slice(0, end);
  const body = form.slice(end).replace(SLOT_ADDRESSES, "$1ADDR");
  // Its name is most often in its header alone.
  const parts = body.includes(name) ? body.split(NAME_SEPARATOR).map((t) => t === name ? "\0" : t) : [body];
  // Blank lines at its end (the last backend before another section has one more) are no difference.
  return [header.replace(name, "\0"), ...parts].join("").trimEnd();
}

/** The name a `backend` section's header gives, or null for another section. */
function backendName(section: string): string | null {
  return BACKEND_HEADER.exec(section)?.[1] ?? null;
}
const BACKEND_HEADER = /^backend[ \t]+([^\s#]+)/;
/** Lines of a backend that name no other backend: blank, a comment, `balance`, a slot (`server s<N> <addr>` and params). */
const PLAIN_BACKEND_LINE = /^\s*(#.*|balance\s+[a-z]+|server\s+s\d+\s+\S+)?\s*$/;
/**
 * What separates the tokens of a line a backend may be named by (`use_backend be if …`, `track be/s1`,
 * `nbsrv(be)`): anything but the characters of the names the templates write. Kept in the split (a
 * capture), so that the tokens join back into the line. A name of other characters is never found
 * as a token: its backend's shape holds its name, and it is kept.
 */
const NAME_SEPARATOR = /([^A-Za-z0-9_.-]+)/;
/** A backend name made of those characters only. */
const NAME_TOKEN = /^[A-Za-z0-9_.-]+$/;
/** The address of each slot line of a section (`$1`: the line before it). */
const SLOT_ADDRESSES = /^(\s+server\s+s\d+\s+)\S+/gm;

/** `section` with the first slot line of each run of them, the others left out. */
function firstSlotsOnly(section: string): string {
  const first = section.indexOf("\n    server s");
  if (first < 0 || section.indexOf("\n    server s", first + 1) < 0) return section; // one slot at most
  const lines = section.split("\n");
  const kept: string[] = [];
  let inSlots = false;
  for (const line of lines) {
    const slot = line.startsWith("    server s") && SLOT_LINE.test(line);
    if (!slot || !inSlots) kept.push(line);
    inSlots = slot;
  }
  return kept.join("\n");
}

/**
 * A section starts at a line at column 0 that is neither blank nor a comment: where the proxy and
 * the controller cut a configuration, and where HAProxy does too in a configuration of
 * {@link plainSections}.
 */
export const SECTION_START = /\n(?=[^\s#])/;

/**
 * The section keywords of HAProxy 2.6 (those its parser registers): a line whose first word is one
 * starts a section, however it is indented; any other line belongs to the section before it.
 */
export const SECTION_KEYWORDS: readonly string[] = [
  "global",
  "defaults",
  "frontend",
  "backend",
  "listen",
  "peers",
  "resolvers",
  "userlist",
  "mailers",
  "program",
  "http-errors",
  "ring",
  "log-forward",
  "cache",
  "fcgi-app",
  "namespace_list",
];
/** A section keyword as a line's first word (a word ends at a space, a tab, a `#` or the line's end). */
const KEYWORD = `(?:${SECTION_KEYWORDS.join("|")})(?:[ \\t#]|$)`;
/** A line HAProxy does not read as {@link plainSections} says, or a control character. */
const NOT_PLAIN = new RegExp(
  [
    `^(?![ \\t#]|$)(?!${KEYWORD})`, // at column 0, not a section keyword: part of the section before
    `^[ \\t]+${KEYWORD}`, // a section keyword indented: a section of its own
    `^[ \\t]*[^\\s#"'\\\\$]*["'\\\\$]`, // a first word with a quote, an escape or a variable
    `^[ \\t]*\\.`, // a conditional block or a diagnostic (.if, .endif, .diag, …)
    `[\\0-\\x08\\x0b-\\x1f\\x7f]`, // a control character (a carriage return included)
  ].join("|"),
  "m",
);

/**
 * True when HAProxy 2.6 cuts `config` into sections where {@link SECTION_START} does: every line at
 * column 0 (not blank, not a comment) has a section keyword as its first word, no indented one
 * has, and no first word is one HAProxy rewrites (quotes, `\`, an environment variable) or a
 * conditional block (`.if`, which can leave lines out). Only then are its sections, slots and
 * growable backends read here as HAProxy reads them: any other configuration is its own skeleton
 * and checked whole, and the proxy reloads for any change of it.
 */
export function plainSections(config: string): boolean {
  return !NOT_PLAIN.test(config);
}
const GROWABLE_BALANCE_LINE = /^[ \t]+balance[ \t]+(roundrobin|leastconn)[ \t]*$/m;
/**
 * Lines that make a backend's servers unfit to be added at run time: cookie persistence, a hash, a
 * `balance` other than `roundrobin` or `leastconn` (HAProxy takes a section's last one).
 */
const NOT_GROWABLE_LINE =
  /^[ \t]+(cookie|dynamic-cookie-key|hash-type|balance(?![ \t]+(roundrobin|leastconn)[ \t]*$))\b/m;

/**
 * True when the section `text` is a growable backend as written: `backend`, `balance roundrobin`
 * or `leastconn` (no other), no cookie and no hash type, no server line but slot lines, the same
 * options on every slot line and no `default-server` line after the first; and in a configuration
 * whose `defaults` sections are {@link growableDefaults}. The proxy reads this from the text (an older controller's
 * backend with 4 slots is growable too); the renderer decides the slot count from the same facts
 * ({@link growable}).
 */
export function growableSection(text: string): boolean {
  if (!growsAsWritten(text)) return false;
  const lines = text.split("\n");
  return slotsAsAdded(lines, lines.map((l) => SLOT_LINE.exec(l)));
}

/** The lines of a section that {@link growableSection} reads first. */
function growsAsWritten(text: string): boolean {
  return text.startsWith("backend ") && GROWABLE_BALANCE_LINE.test(text) && !NOT_GROWABLE_LINE.test(text);
}

/** A `default-server` line: HAProxy gives its settings to the server lines after it only. */
const DEFAULT_SERVER_LINE = /^[ \t]+default-server\b/;
/** A server line (or a template of them). */
const SERVER_LINE = /^[ \t]+server(?:-template)?[ \t]/;

/**
 * True when a server added to the section of `lines` (`slots`: the SLOT_LINE match of each) gets
 * what a reload gives its slot lines: every server line is a slot line (no other server's name or
 * state to run into), every slot line carries the same options (an added or a parked server could
 * be given any of them), and no `default-server` line follows the first slot line (a reload gives
 * its settings to no slot, the proxy would to an added server).
 */
function slotsAsAdded(lines: readonly string[], slots: readonly (RegExpExecArray | null)[]): boolean {
  let options: string | null = null;
  for (let i = 0; i < lines.length; i++) {
    const m = slots[i];
    if (m) {
      options ??= m[4] ?? "";
      if ((m[4] ?? "") !== options) return false;
    } else if (SERVER_LINE.test(lines[i])) return false;
    else if (options !== null && DEFAULT_SERVER_LINE.test(lines[i])) return false;
  }
  return true;
}

/**
 * True when the `defaults` sections `text` (all those of a configuration: which one a backend
 * takes is not read) leave its backends growable: in none of them cookie persistence, a hash or a
 * `balance` other than `roundrobin` or `leastconn`, which a backend without such a line of its own
 * takes. The renderer writes none of them there.
 */
export function growableDefaults(text: string): boolean {
  return !NOT_GROWABLE_LINE.test(text);
}

/**
 * Replaces each slot line's address with `ADDR` and drops its `disabled` flag; in a growable
 * section ({@link growableSection}) the slot lines also lose their number and the same line in a
 * row is kept once, so that the number of endpoints is not structure there (the proxy adds servers
 * when they outnumber the slots).
 */
export function skeleton(config: string): string {
  return config.split(SECTION_START).map((section) => {
    const lines = section.split("\n");
    const slots = lines.map((l) => SLOT_LINE.exec(l));
    const grows = growsAsWritten(section) && slotsAsAdded(lines, slots);
    let last: string | null = null;
    const out: string[] = [];
    for (let i = 0; i < lines.length; i++) {
      const [line, m] = [lines[i], slots[i]];
      if (!m) {
        out.push(line);
        last = null;
        continue;
      }
      const form = `${grows ? m[1].replace(/s\d+(\s+)$/, "s*$1") : m[1]}ADDR${m[4] ?? ""}`;
      if (form !== last) out.push(form);
      last = grows ? form : null;
    }
    return out.join("\n");
  }).join("\n");
}
