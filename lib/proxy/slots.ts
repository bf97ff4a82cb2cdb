/**
 * @module proxy/slots
 * The proxy's side of the server-slot contract (contracts.md §4): the structural skeleton of a
 * configuration (two configs with equal skeletons differ only in endpoints), the slots of every
 * backend, and the Runtime API commands that turn one slot state into another: `set server` for
 * the slots HAProxy has, and in a growable backend (lib/render/slots.ts) `add server` for endpoints
 * that outnumber them. Servers beyond a configuration's slot lines (added, or left when endpoints
 * shrank) are parked as unused slots are, and reused before any is added; the next reload reads
 * the configuration, which has a slot per endpoint.
 */

// The slot-line shape and the skeleton are defined once, beside the renderer that writes them
// (lib/render/slots.ts has no imports, so the proxy loads nothing else with it).
import {
  growableDefaults,
  growableSection,
  plainSections,
  SECTION_START,
  skeleton,
  SLOT_LINE,
  UNUSED_SLOT_ADDRESS,
} from "../render/slots.ts";
import { CA_FILE, isIPv4, isIPv6 } from "../render/patterns.ts";
export { skeleton, SLOT_LINE };

/** One slot as rendered. `address` is a bare IP (IPv6 without brackets). */
export interface Slot {
  readonly backend: string;
  readonly server: string;
  readonly address: string;
  readonly port: number;
  readonly disabled: boolean;
}

/** Proxy and server names that may be put into a Runtime API command line. */
const PROXY_NAME = /^[A-Za-z0-9_.:-]+$/;
const SERVER_NAME = /^s[1-9][0-9]*$/;
/** In a plain configuration, section keywords start at column 0 (`backend foo`) and everything inside a section is indented. */
const SECTION = /^[^\s#]/;

/**
 * The slots of every `backend`/`listen` section, keyed `backend/server`. Returns null when a
 * slot line cannot be applied through the Runtime API (unexpected name or address form), when
 * HAProxy may cut the text into other sections (not lib/render/slots.ts's `plainSections`), or when
 * a `default-server` line sets the servers' state ({@link setsServerState}): such a config is
 * always applied with a reload.
 */
export function parseSlots(config: string): Map<string, Slot> | null {
  if (!plainSections(config) || setsServerState(config)) return null;
  const slots = new Map<string, Slot>();
  let proxy: string | null = null;
  for (const line of config.split("\n")) {
    if (SECTION.test(line)) {
      const [keyword, name] = line.trim().split(/\s+/);
      proxy = keyword === "backend" || keyword === "listen" ? name ?? null : null;
      continue;
    }
    const m = SLOT_LINE.exec(line);
    if (!m) continue;
    const server = m[1].trim().split(/\s+/)[1];
    const target = parseTarget(m[2]);
    if (proxy === null || !PROXY_NAME.test(proxy) || !SERVER_NAME.test(server) || !target) return null;
    const key = `${proxy}/${server}`;
    if (slots.has(key)) return null;
    slots.set(key, { backend: proxy, server, ...target, disabled: m[3] !== undefined });
  }
  return slots;
}

/**
 * A `default-server` line that sets the state of the servers after it (`disabled`, `enabled`), or may
 * (a quote, an escape or a variable): their slot lines then do not say which are in maintenance.
 */
const DEFAULT_SERVER_STATE = /^[ \t]+default-server\b[^\n]*?(?:[ \t](?:disabled|enabled)(?:[ \t#]|$)|["'\\$])/m;

/** True when a `default-server` line of `text` sets its servers' state, or may. */
export function setsServerState(text: string): boolean {
  return DEFAULT_SERVER_STATE.test(text);
}

/**
 * `1.2.3.4:80` or `[fd00::1]:80` → address and port; null for anything else: the address is a
 * strict IPv4 or IPv6 literal (lib/render/patterns.ts: eight groups, or fewer with one `::`, no
 * zone), as `set server … addr` and a reload both take it.
 */
export function parseTarget(text: string): { address: string; port: number } | null {
  let address: string;
  let portText: string;
  if (text.startsWith("[")) {
    const end = text.indexOf("]:");
    if (end < 0) return null;
    address = text.slice(1, end);
    portText = text.slice(end + 2);
    if (!isIPv6(address)) return null;
  } else {
    const colon = text.lastIndexOf(":");
    if (colon < 0) return null;
    address = text.slice(0, colon);
    portText = text.slice(colon + 1);
    if (!isIPv4(address)) return null;
  }
  if (!/^[1-9]\d{0,4}$/.test(portText)) return null;
  const port = Number(portText);
  return port <= 65535 ? { address, port } : null;
}

/** A section header line (`backend x`), and the lines of a section that set server options for all its servers. */
const SECTION_HEADER = /^(\S+)[ \t]+(\S+)/;
const DEFAULT_SERVER = /^[ \t]+default-server[ \t]+(.*?)[ \t]*$/gm;
const HOST = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;
/**
 * The server options an added server may be given, keyword → its value's anchored pattern (null:
 * no value): what the renderer writes on slot and `default-server` lines (lib/render/features/
 * backend_protocol.ts), each accepted by 2.6's `add server`. Anything else (a `check` that would
 * need `enable health`, a `track`, a cookie) leaves the backend without additions: a reload.
 */
const ADD_OPTIONS: Readonly<Record<string, RegExp | null>> = {
  "proto": /^h2$/,
  "send-proxy": null,
  "send-proxy-v2": null,
  "ssl": null,
  "verify": /^(none|required)$/,
  "ca-file": CA_FILE,
  "sni": /^str\([A-Za-z0-9.-]{1,253}\)$/,
  "verifyhost": HOST,
  "alpn": /^(h2|http\/1\.1)(,(h2|http\/1\.1))?$/,
};

/**
 * The options of `params` (the words after a slot line's address, or of a `default-server` line)
 * when each is one of ADD_OPTIONS with a value of its pattern; null otherwise.
 */
export function addOptions(params: string): string[] | null {
  const words = params.split(/[ \t]+/).filter((w) => w !== "");
  const out: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const key = words[i];
    if (!Object.hasOwn(ADD_OPTIONS, key)) return null;
    const value = ADD_OPTIONS[key];
    out.push(key);
    if (value === null) continue;
    const v = words[++i];
    if (v === undefined || !value.test(v)) return null;
    out.push(v);
  }
  return out;
}

/**
 * The growable backends (lib/render/slots.ts's `growableSection`) of `config` (whole, or some of
 * its sections; none when it is not `plainSections`) and the options a server added to each needs, or null when it cannot be added: an
 * added server does not take a `default-server` line's settings, so they are the section's
 * `default-server` options followed by those of its first slot line, every one checked
 * ({@link addOptions}). `defaults`: the configuration's `defaults` sections. None is growable when
 * they are not `growableDefaults` (cookie persistence, a hash or a static `balance` there); and
 * nothing is added when one has a `default-server` line (its settings are not read here).
 */
export function growableBackends(config: string, defaults = ""): Map<string, string | null> {
  const out = new Map<string, string | null>();
  // Sections HAProxy may cut otherwise: none is known to be growable.
  if (!plainSections(config) || !growableDefaults(defaults)) return out;
  const defaultsServer = /^[ \t]+default-server\b/m.test(defaults);
  for (const section of config.split(SECTION_START)) {
    if (!growableSection(section)) continue;
    const name = SECTION_HEADER.exec(section)?.[2];
    if (name === undefined || !PROXY_NAME.test(name)) continue;
    const params = [...section.matchAll(DEFAULT_SERVER)].map((m) => m[1]);
    const first = section.split("\n").map((l) => SLOT_LINE.exec(l)).find((m) => m !== null);
    if (first) params.push(first[4] ?? "");
    const options = defaultsServer ? null : addOptions(params.join(" "));
    out.set(name, options === null ? null : options.join(" "));
  }
  return out;
}

/** A Runtime API command and the slot it concerns. */
export interface SlotCommand {
  readonly slot: string;
  readonly command: string;
  /** `addr`: `set server … addr`; `state`: `set server … state`; `add`: `add server`. */
  readonly kind: "addr" | "state" | "add";
}

/** The commands of a slot change and the number of slots whose target changed. */
export interface SlotPlan {
  readonly commands: SlotCommand[];
  readonly changed: number;
  /**
   * Per growable backend the plan changes, the servers HAProxy will have beyond the next
   * configuration's slot lines, all parked (maintenance, the unused address); empty: none.
   */
  readonly extra: ReadonlyMap<string, readonly Slot[]>;
}

/** The servers HAProxy runs beyond its configuration's slot lines, by backend (all parked). */
export type ExtraServers = ReadonlyMap<string, readonly Slot[]>;

const addrCmd = (key: string, s: Slot): SlotCommand => ({
  slot: key,
  kind: "addr",
  command: `set server ${key} addr ${s.address} port ${s.port}`,
});
const stateCmd = (key: string, state: "ready" | "maint"): SlotCommand => ({
  slot: key,
  kind: "state",
  command: `set server ${key} state ${state}`,
});
/**
 * The commands that put the live slots of `backends` in maintenance and remove them from `slots`:
 * backends the next configuration drops, which the running HAProxy keeps until its next reload
 * (contracts.md §4). Nothing routes to them any more; in maintenance they neither run health checks
 * nor keep idle connections to endpoints that may since belong to someone else.
 */
export function retireCommands(slots: Map<string, Slot>, backends: ReadonlySet<string>): SlotCommand[] {
  const commands: SlotCommand[] = [];
  for (const [key, slot] of slots) {
    if (!backends.has(slot.backend)) continue;
    if (!slot.disabled) commands.push(stateCmd(key, "maint"));
    slots.delete(key);
  }
  return commands;
}

const sameTarget = (a: Slot, b: Slot) => a.address === b.address && a.port === b.port;
const UNUSED = (() => {
  const [address, port] = UNUSED_SLOT_ADDRESS.split(":");
  return { address, port: Number(port) };
})();
const parkedSlot = (backend: string, server: string): Slot => ({ backend, server, ...UNUSED, disabled: true });
const addCmd = (key: string, s: Slot, options: string): SlotCommand => ({
  slot: key,
  kind: "add",
  command: `add server ${key} ${s.address.includes(":") ? `[${s.address}]` : s.address}:${s.port}` +
    (options ? ` ${options}` : ""),
});

/** The keys of `slots` by backend, in order. */
function byBackend(slots: ReadonlyMap<string, Slot>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [key, slot] of slots) {
    const keys = out.get(slot.backend);
    if (keys) keys.push(key);
    else out.set(slot.backend, [key]);
  }
  return out;
}

/**
 * The Runtime API commands that turn the running slots `from` into `to`, or null when they cannot
 * (then only a reload can apply `to`). `from` is what HAProxy has: the running configuration's
 * slots and, for growable backends, the servers beyond them (parked). `grow`: the growable backends
 * of `to` and the options of a server added to each (null: none can be added). A backend that is
 * not growable must have the same slots in both.
 *
 * Per backend, in an order that keeps a ready server whenever the target has one:
 * 1. slots being enabled get their address, then `ready`; in a growable backend, slots of `to` that
 *    HAProxy does not have are added (`add server`, which starts them in maintenance), then `ready`;
 * 2. live slots that move to another endpoint go `maint` → address → `ready`: HAProxy 2.6 keeps
 *    reusing a server's idle connections after `set server addr`, and `maint` drops them. When
 *    the moving slot is the backend's only live one, a spare (disabled) slot serves the new
 *    endpoint meanwhile and is disabled again afterwards (in a growable backend without one, a
 *    server is added as the spare, and kept parked);
 * 3. slots being disabled go `maint`, then get the unused address; so do the servers of a growable
 *    backend beyond `to`'s slots (they stay, parked, until the next reload).
 */
export function slotCommands(
  from: ReadonlyMap<string, Slot>,
  to: ReadonlyMap<string, Slot>,
  grow: ReadonlyMap<string, string | null> = new Map(),
): SlotPlan | null {
  const [had, want] = [byBackend(from), byBackend(to)];
  if (had.size !== want.size) return null;
  const commands: SlotCommand[] = [];
  const extra = new Map<string, Slot[]>();
  let changed = 0;
  for (const [backend, keys] of want) {
    const running = had.get(backend);
    if (!running) return null;
    const grows = grow.has(backend);
    const options = grow.get(backend) ?? null;
    const added = keys.filter((k) => !from.has(k));
    const beyond = running.filter((k) => !to.has(k));
    if (!grows && (added.length > 0 || beyond.length > 0)) return null;
    if (added.length > 0 && options === null) return null;
    const target = (k: string) => to.get(k) ?? parkedSlot(backend, k.slice(k.lastIndexOf("/") + 1));
    const live = new Set(running.filter((k) => !from.get(k)!.disabled));
    const enable = running.filter((k) => from.get(k)!.disabled && !target(k).disabled);
    const move = running.filter((k) =>
      !from.get(k)!.disabled && !target(k).disabled && !sameTarget(from.get(k)!, target(k))
    );
    const disable = running.filter((k) => !from.get(k)!.disabled && target(k).disabled);
    const parked = running.filter((k) => from.get(k)!.disabled && target(k).disabled);
    changed += enable.length + move.length + disable.length;
    for (const k of added) {
      const next = to.get(k)!;
      commands.push(addCmd(k, next, options!));
      if (!next.disabled) {
        commands.push(stateCmd(k, "ready"));
        live.add(k);
        changed++;
      }
    }
    for (const k of enable) {
      if (!sameTarget(from.get(k)!, target(k))) commands.push(addrCmd(k, target(k)));
      commands.push(stateCmd(k, "ready"));
      live.add(k);
    }
    // A server name HAProxy does not have yet (after every slot of both sides).
    let free = Math.max(...[...running, ...keys].map((k) => Number(k.slice(k.lastIndexOf("/") + 2))));
    for (const k of move) {
      const next = target(k);
      const alone = ![...live].some((l) => l !== k);
      let spare = alone ? parked[0] : undefined;
      const addSpare = alone && !spare && grows && options !== null;
      if (addSpare) {
        // No spare slot in a growable backend: one is added, and stays parked.
        spare = `${backend}/s${++free}`;
        commands.push(addCmd(spare, next, options));
        beyond.push(spare);
      } else if (spare) commands.push(addrCmd(spare, next));
      if (spare) commands.push(stateCmd(spare, "ready"));
      commands.push(stateCmd(k, "maint"), addrCmd(k, next), stateCmd(k, "ready"));
      if (spare) commands.push(stateCmd(spare, "maint"), addrCmd(spare, target(spare)));
    }
    for (const k of disable) {
      commands.push(stateCmd(k, "maint"));
      if (!sameTarget(from.get(k)!, target(k))) commands.push(addrCmd(k, target(k)));
    }
    for (const k of parked) {
      if (!sameTarget(from.get(k)!, target(k))) {
        commands.push(addrCmd(k, target(k)));
        changed++;
      }
    }
    if (grows) extra.set(backend, beyond.map(target));
  }
  return { commands, changed, extra };
}
