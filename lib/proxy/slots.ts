/**
 * @module proxy/slots
 * The proxy's side of the server-slot contract (contracts.md §4): the structural skeleton of a
 * configuration (two configs with equal skeletons differ only in endpoints), the slots of every
 * backend, and the Runtime API commands that turn one slot state into another.
 */

/** A slot line as fixed by the contract: group 2 is `<addr>:<port>`, group 3 the `disabled` flag. */
export const SLOT_LINE = /^(\s+server\s+s\d+\s+)(\S+?)(\s+disabled)?(\s.*)?$/;

/** Replaces each slot line's address with `ADDR` and drops its `disabled` flag. */
export function skeleton(config: string): string {
  return config.split("\n").map((line) => {
    const m = SLOT_LINE.exec(line);
    return m ? `${m[1]}ADDR${m[4] ?? ""}` : line;
  }).join("\n");
}

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

/**
 * The Runtime API commands that turn the running slots `from` into `to`, or null when the two
 * configs do not have the same slots (then only a reload can apply `to`). A slot being disabled
 * goes to maint before its address changes; a slot being enabled gets its address first.
 */
export function slotCommands(from: Map<string, Slot>, to: Map<string, Slot>): SlotCommand[] | null {
  if (from.size !== to.size) return null;
  const cmds: SlotCommand[] = [];
  for (const [key, next] of to) {
    const prev = from.get(key);
    if (!prev) return null;
    const addrChanged = prev.address !== next.address || prev.port !== next.port;
    const addr = {
      slot: key,
      kind: "addr" as const,
      command: `set server ${key} addr ${next.address} port ${next.port}`,
    };
    if (next.disabled) {
      if (!prev.disabled) cmds.push({ slot: key, kind: "state", command: `set server ${key} state maint` });
      if (addrChanged) cmds.push(addr);
    } else {
      if (addrChanged) cmds.push(addr);
      if (prev.disabled) cmds.push({ slot: key, kind: "state", command: `set server ${key} state ready` });
    }
  }
  return cmds;
}
