/**
 * @module gateway/render_tls
 * The TLS ports of a Gateway's proxy (TLSRoutes): `mode tcp` frontends
 * (templates/gateway/frontend_tls.eta) that look the connection's SNI up in `passthrough.map`,
 * keyed `<key><host part>` like the routing maps: the exact name, then its wildcard suffixes from
 * the longest (`.example.com` for `*.example.com`, one or more labels in front), then the key
 * alone (a listener and route without hostname). A port of Passthrough listeners reads the SNI of
 * the ClientHello without decrypting anything (keys `<port>:`); a port of Terminate listeners
 * decrypts with the crt-list and looks up the SNI the handshake agreed (keys `t<port>:`); a port
 * with both (mixed) reads the ClientHello first and hands the Terminate listeners' names to its
 * decrypting frontend through a local socket (PROXY v2: the client's address is kept), as the
 * Ingress proxy's ssl-passthrough port does. The value is the `mode tcp` backend of a route with
 * one target, `ic_reject` for a route with no usable target or a listener's stop, or the rule's
 * name, whose lines pick a target by weight (`rand`), the invalid references' share rejected.
 * A connection whose name is in no entry, or (undecrypted) that is no TLS ClientHello within the
 * inspect delay, is closed.
 */
import type { ProxyPort, SniEntry, TlsRule } from "./model_types.ts";
import { MAP_LINE } from "../render/maps.ts";
import { checked, checkedHostname, checkedTarget, isRuleName } from "./render_checks.ts";
import { WILDCARD_DEPTH } from "./render_routes.ts";

/** The map value that closes the connection. */
export const REJECT = "ic_reject";

/** One TLS port's frontend as templates/gateway/frontend_tls.eta places it. */
export interface TlsFrontendView {
  /** `tls_<port>` (the port's), `tlsterm_<port>` (a mixed port's decrypting frontend). */
  name: string;
  port: number;
  /** The `bind` line's arguments. */
  bind: string;
  /** The map keys' start: `<port>:` before decryption, `t<port>:` after. */
  key: string;
  /** Decrypts (`ssl` bind): the SNI is the handshake's (`ssl_fc_sni`), no ClientHello is inspected. */
  decrypt: boolean;
  /** The port's own frontend (the client's connections, the proxy's accept-proxy rules), not a hand-off's. */
  public: boolean;
  /** A mixed port's: the backend handing the Terminate names to the decrypting frontend, and its socket. */
  handoff: { backend: string; socket: string } | null;
  /** The wildcard suffix lengths (in labels) looked up, longest first. */
  depths: number[];
  /** The lines that pick a weighted rule's target, then reject its invalid share. */
  choice: string[];
}

function bug(message: string): never {
  throw new Error(`bug: ${message} in the Gateway model`);
}

function mapLine(key: string, value: string): string {
  const line = `${key} ${value}`;
  if (!MAP_LINE.test(line)) bug(`unsafe map line ${JSON.stringify(line)}`);
  return `${line}\n`;
}

/** What a rule's entries map to: its one backend, `ic_reject`, or the rule (weighted choice lines). */
function ruleValue(r: TlsRule): string {
  const live = r.targets.filter((t) => t.weight > 0);
  if (live.length === 0) return REJECT;
  if (live.length === 1 && r.invalidWeight === 0) return checkedTarget(live[0].backend);
  return checked(isRuleName, "TLS rule name", r.name);
}

/** The weighted choice of a rule: a random number below the summed weight picks the target whose range holds it. */
function choiceLines(r: TlsRule): string[] {
  const live = r.targets.filter((t) => t.weight > 0);
  const total = live.reduce((n, t) => n + t.weight, 0) + r.invalidWeight;
  if (!Number.isSafeInteger(total) || total <= 0) bug(`weights of ${r.name}`);
  const is = `{ var(sess.ic_pass) -m str ${checked(isRuleName, "TLS rule name", r.name)} }`;
  const lines = [`tcp-request content set-var(sess.ic_pick) rand(${total}) if ${is}`];
  let upTo = 0;
  for (const t of live) {
    if (!Number.isSafeInteger(t.weight)) bug(`weight of ${t.backend}`);
    upTo += t.weight;
    lines.push(
      `tcp-request content set-var(sess.ic_pass) str(${checkedTarget(t.backend)}) if ${is} ` +
        `{ var(sess.ic_pick) -m int lt ${upTo} }`,
    );
  }
  lines.push(`tcp-request content set-var(sess.ic_pass) str(${REJECT}) if ${is}`);
  return lines;
}

/** The host part of an SNI entry's map key: the name, `.suffix` for `*.suffix`, "" for any. */
function hostPart(hostname: string): string {
  const h = checkedHostname(hostname);
  return h.startsWith("*.") ? h.slice(1) : h;
}

/** The name of the backend handing a mixed port's Terminate connections to its decrypting frontend. */
function handoffName(port: number): string {
  return `ic_tlsterm_${port}`;
}

/** One frontend's map lines, wildcard depths and weighted choice lines for `entries`, keyed `key`. */
function frontendMaps(
  port: number,
  key: string,
  entries: readonly SniEntry[],
  rules: ReadonlyMap<string, TlsRule>,
  valueOf: (e: SniEntry, rule: TlsRule | null) => string,
): { lines: string[]; depths: number[]; choice: string[] } {
  const lines: string[] = [];
  const keys = new Set<string>();
  const depths = new Set(Array.from({ length: WILDCARD_DEPTH }, (_, i) => i + 1));
  const choice: string[] = [];
  const chosen = new Set<string>();
  for (const e of entries) {
    const rule = e.rule === null
      ? null
      : rules.get(e.rule) ?? bug(`SNI entry of unknown TLS rule ${JSON.stringify(e.rule)}`);
    const part = hostPart(e.hostname);
    if (keys.has(part)) bug(`SNI name ${JSON.stringify(e.hostname)} twice on port ${port}`);
    keys.add(part);
    if (part.startsWith(".")) depths.add(part.split(".").length - 1);
    const value = valueOf(e, rule);
    lines.push(mapLine(`${key}${part}`, value));
    if (rule !== null && value === rule.name && !chosen.has(rule.name)) {
      chosen.add(rule.name);
      choice.push(...choiceLines(rule));
    }
  }
  return { lines, depths: [...depths].sort((a, b) => b - a), choice };
}

/**
 * The frontends of TLS port `p` and their `passthrough.map` lines. `rules`: the model's TLS rules
 * by name; `address`: the bind address of the port (quoted); `ssl`: the arguments that make a bind
 * decrypt with the crt-list.
 */
export function tlsFrontends(
  p: ProxyPort,
  rules: ReadonlyMap<string, TlsRule>,
  address: string,
  ssl: string,
): { views: TlsFrontendView[]; lines: string[] } {
  const modes = p.tlsModes ?? ["Passthrough"];
  const passthrough = modes.includes("Passthrough");
  const terminate = modes.includes("Terminate");
  if (!passthrough && !terminate) bug(`TLS port ${p.port} without mode`);
  if (terminate && p.certs.length === 0) bug(`TLS Terminate port ${p.port} without certificate`);
  const entries = p.sni ?? [];
  const views: TlsFrontendView[] = [];
  const lines: string[] = [];
  const handoff = passthrough && terminate
    ? { backend: handoffName(p.port), socket: `\${IC_RUNTIME_SOCKET}.tls${p.port}` }
    : null;
  const target = (rule: TlsRule | null) => rule === null ? REJECT : ruleValue(rule);
  if (passthrough) {
    const key = `${p.port}:`;
    const maps = frontendMaps(
      p.port,
      key,
      entries,
      rules,
      (e, rule) => e.terminate && rule !== null ? handoff!.backend : target(rule),
    );
    lines.push(...maps.lines);
    views.push({
      name: `tls_${p.port}`,
      port: p.port,
      bind: address,
      key,
      depths: maps.depths,
      choice: maps.choice,
      decrypt: false,
      public: true,
      handoff,
    });
  }
  if (terminate) {
    const key = `t${p.port}:`;
    const maps = frontendMaps(p.port, key, entries.filter((e) => e.terminate), rules, (_, rule) => target(rule));
    lines.push(...maps.lines);
    views.push({
      name: handoff ? `tlsterm_${p.port}` : `tls_${p.port}`,
      port: p.port,
      bind: `${handoff ? `"unix@${handoff.socket}" mode 600 accept-proxy` : address} ${ssl}`,
      key,
      depths: maps.depths,
      choice: maps.choice,
      decrypt: true,
      public: handoff === null,
      handoff: null,
    });
  }
  return { views, lines };
}
