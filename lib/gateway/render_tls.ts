/**
 * @module gateway/render_tls
 * The TLS passthrough ports of a Gateway's proxy (TLSRoutes): one `mode tcp` frontend per port
 * (templates/gateway/frontend_tls.eta) that reads the SNI of the ClientHello without decrypting
 * anything and looks it up in `passthrough.map`, keyed `<port>:<host part>` like the routing maps:
 * the exact name, then its wildcard suffixes from the longest (`<port>:.example.com` for
 * `*.example.com`, one or more labels in front), then `<port>:` (a listener and route without
 * hostname). The value is the `mode tcp` backend of a route with one target, `ic_reject` for a
 * route with no usable target, or the rule's name, whose lines pick a target by weight
 * (`rand`), the invalid references' share rejected. A connection whose name is in no entry, or
 * that is no TLS ClientHello within the inspect delay, is closed.
 */
import type { ProxyPort, TlsRule } from "./model_types.ts";
import { MAP_LINE } from "../render/maps.ts";
import { checked, checkedHostname, checkedTarget, isRuleName } from "./render_checks.ts";
import { WILDCARD_DEPTH } from "./render_routes.ts";

/** The map value that closes the connection. */
export const REJECT = "ic_reject";

/** One TLS port's frontend as templates/gateway/frontend_tls.eta places it. */
export interface TlsFrontendView {
  /** `tls_<port>`. */
  name: string;
  port: number;
  /** The `bind` line's arguments. */
  bind: string;
  /** The map keys' start for this port: `<port>:`. */
  key: string;
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

/**
 * The frontend of TLS port `p` and its `passthrough.map` lines. `rules`: the model's TLS rules by
 * name; `bind`: the bind line's arguments.
 */
export function tlsFrontend(
  p: ProxyPort,
  rules: ReadonlyMap<string, TlsRule>,
  bind: string,
): { view: TlsFrontendView; lines: string[] } {
  const key = `${p.port}:`;
  const lines: string[] = [];
  const keys = new Set<string>();
  const depths = new Set(Array.from({ length: WILDCARD_DEPTH }, (_, i) => i + 1));
  const choice: string[] = [];
  const chosen = new Set<string>();
  for (const e of p.sni ?? []) {
    const rule = rules.get(e.rule) ?? bug(`SNI entry of unknown TLS rule ${JSON.stringify(e.rule)}`);
    const part = hostPart(e.hostname);
    if (keys.has(part)) bug(`SNI name ${JSON.stringify(e.hostname)} twice on port ${p.port}`);
    keys.add(part);
    if (part.startsWith(".")) depths.add(part.split(".").length - 1);
    const value = ruleValue(rule);
    lines.push(mapLine(`${key}${part}`, value));
    if (value === rule.name && !chosen.has(rule.name)) {
      chosen.add(rule.name);
      choice.push(...choiceLines(rule));
    }
  }
  return {
    view: { name: `tls_${p.port}`, port: p.port, bind, key, depths: [...depths].sort((a, b) => b - a), choice },
    lines,
  };
}
