/**
 * @module proxy/slots
 * The proxy's side of the server-slot contract (contracts.md §4): the structural skeleton of a
 * configuration (two configs with equal skeletons differ only in endpoints), the slots of every
 * backend, and the Runtime API commands that turn one slot state into another.
 */

// The slot-line shape and the skeleton are defined once, beside the renderer that writes them
// (lib/render/slots.ts has no imports, so the proxy loads nothing else with it).
import { skeleton, SLOT_LINE } from "../render/slots.ts";
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
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const IPV6 = /^[0-9a-fA-F:.]+$/;
/** Section keywords start at column 0 (`backend foo`); everything inside a section is indented. */
const SECTION = /^[^\s#]/;

/**
 * The slots of every `backend`/`listen` section, keyed `backend/server`. Returns null when a
 * slot line cannot be applied through the Runtime API (unexpected name or address form): such a
 * config is always applied with a reload.
 */
export function parseSlots(config: string): Map<string, Slot> | null {
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

/** `1.2.3.4:80` or `[fd00::1]:80` → address and port; null for anything else. */
export function parseTarget(text: string): { address: string; port: number } | null {
  let address: string;
  let portText: string;
  if (text.startsWith("[")) {
    const end = text.indexOf("]:");
    if (end < 0) return null;
    address = text.slice(1, end);
    portText = text.slice(end + 2);
    if (!IPV6.test(address) || !address.includes(":")) return null;
  } else {
    const colon = text.lastIndexOf(":");
    if (colon < 0) return null;
    address = text.slice(0, colon);
    portText = text.slice(colon + 1);
    if (!IPV4.test(address)) return null;
  }
  if (!/^[1-9]\d{0,4}$/.test(portText)) return null;
  const port = Number(portText);
  return port <= 65535 ? { address, port } : null;
}

/** A Runtime API command and the slot it concerns. */
export interface SlotCommand {
  readonly slot: string;
  readonly command: string;
  readonly kind: "addr" | "state";
}

/** The commands of a slot change and the number of slots whose target changed. */
export interface SlotPlan {
  readonly commands: SlotCommand[];
  readonly changed: number;
}

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

/**
 * The Runtime API commands that turn the running slots `from` into `to`, or null when the two
 * configs do not have the same slots (then only a reload can apply `to`).
 *
 * Per backend, in an order that keeps a ready server whenever the target has one:
 * 1. slots being enabled get their address, then `ready`;
 * 2. live slots that move to another endpoint go `maint` → address → `ready`: HAProxy 2.6 keeps
 *    reusing a server's idle connections after `set server addr`, and `maint` drops them. When
 *    the moving slot is the backend's only live one, a spare (disabled) slot serves the new
 *    endpoint meanwhile and is disabled again afterwards;
 * 3. slots being disabled go `maint`, then get the unused address.
 */
export function slotCommands(from: Map<string, Slot>, to: Map<string, Slot>): SlotPlan | null {
  if (from.size !== to.size) return null;
  const backends = new Map<string, string[]>();
  for (const [key, next] of to) {
    const prev = from.get(key);
    if (!prev || prev.backend !== next.backend) return null;
    backends.set(next.backend, [...(backends.get(next.backend) ?? []), key]);
  }
  const commands: SlotCommand[] = [];
  let changed = 0;
  for (const keys of backends.values()) {
    const live = new Set(keys.filter((k) => !from.get(k)!.disabled));
    const enable = keys.filter((k) => from.get(k)!.disabled && !to.get(k)!.disabled);
    const move = keys.filter((k) =>
      !from.get(k)!.disabled && !to.get(k)!.disabled && !sameTarget(from.get(k)!, to.get(k)!)
    );
    const disable = keys.filter((k) => !from.get(k)!.disabled && to.get(k)!.disabled);
    const parked = keys.filter((k) => from.get(k)!.disabled && to.get(k)!.disabled);
    changed += enable.length + move.length + disable.length;
    for (const k of enable) {
      if (!sameTarget(from.get(k)!, to.get(k)!)) commands.push(addrCmd(k, to.get(k)!));
      commands.push(stateCmd(k, "ready"));
      live.add(k);
    }
    for (const k of move) {
      const next = to.get(k)!;
      const spare = [...live].some((l) => l !== k) ? undefined : parked[0];
      if (spare) commands.push(addrCmd(spare, next), stateCmd(spare, "ready"));
      commands.push(stateCmd(k, "maint"), addrCmd(k, next), stateCmd(k, "ready"));
      if (spare) commands.push(stateCmd(spare, "maint"), addrCmd(spare, to.get(spare)!));
    }
    for (const k of disable) {
      commands.push(stateCmd(k, "maint"));
      if (!sameTarget(from.get(k)!, to.get(k)!)) commands.push(addrCmd(k, to.get(k)!));
    }
    for (const k of parked) {
      if (!sameTarget(from.get(k)!, to.get(k)!)) {
        commands.push(addrCmd(k, to.get(k)!));
        changed++;
      }
    }
  }
  return { commands, changed };
}
