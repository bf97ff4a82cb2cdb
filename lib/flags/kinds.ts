/**
 * @module flags/kinds
 * One implementation per option kind: how one command-line value is read (Go pflag, klog and
 * prometheus/common/log semantics), how occurrences combine, how a table default becomes a value,
 * how the value is printed in the `options` JSON and as pflag's `(default …)` in the help.
 * Durations are held internally as bigint nanoseconds (Config exposes milliseconds).
 */

import {
  formatDurationNs,
  formatFloatGo,
  parseBool,
  parseDurationNs,
  parseFloatGo,
  parseInt0,
  parseIP,
  readCsvRecord,
  writeCsvRecord,
} from "../common/gosyntax.ts";
import type { DefaultValue, Kind } from "./table.ts";
import { parseLogFormat } from "../log/format.ts";

export interface NamedCertKey {
  readonly certFile: string;
  readonly keyFile: string;
  readonly names: readonly string[];
}

export type Json = string | number | boolean | null | readonly Json[] | { readonly [k: string]: Json };

export interface KindImpl {
  /** The type name pflag's UnquoteUsage prints ("" for bool). */
  readonly typeName: string;
  /** A switch: `--flag` alone means true. */
  readonly isBool?: boolean;
  /** Occurrences accumulate: the first replaces the default, later ones append. */
  readonly isList?: boolean;
  /** One occurrence's text → value (for lists: the elements of that occurrence). */
  parse(raw: string): unknown;
  fromDefault(d: DefaultValue): unknown;
  toJson(v: unknown): Json;
  /** pflag's `(default …)` text, or undefined when pflag omits it (zero value). */
  helpDefault(v: unknown): string | undefined;
}

/** Go's %q for the plain strings found in defaults. */
const goQuote = (s: string) => JSON.stringify(s);

const same = (d: DefaultValue) => d;
/** Lists are copied and frozen so no consumer can change the table's defaults. */
const frozenList = (d: DefaultValue) => Object.freeze([...(d as readonly unknown[])]);
const asJson = (v: unknown) => v as Json;

const stringLike = (typeName: string, parse: (raw: string) => string, quoted: boolean): KindImpl => ({
  typeName,
  parse,
  fromDefault: same,
  toJson: asJson,
  helpDefault: (v) => (v === null || v === "" ? undefined : quoted ? goQuote(v as string) : (v as string)),
});

/** glog's strconv.Atoi: optional sign and decimal digits only. */
function atoi(s: string): number {
  if (!/^[+-]?[0-9]+$/.test(s)) throw new Error("not a decimal integer");
  const n = Number(s);
  if (!Number.isSafeInteger(n)) throw new Error("integer out of range");
  return n;
}

const SEVERITIES = ["INFO", "WARNING", "ERROR", "FATAL"] as const;

/** glog's severity: a name (any case) or its number 0..3; stored as the name. */
export function parseSeverity(raw: string): string {
  const byName = SEVERITIES.find((s) => s === raw.toUpperCase());
  if (byName) return byName;
  let n: number;
  try {
    n = atoi(raw);
  } catch {
    throw new Error("not a severity (use INFO, WARNING, ERROR, FATAL or 0..3)");
  }
  if (n < 0 || n > 3) throw new Error("severity out of range (use INFO, WARNING, ERROR, FATAL or 0..3)");
  return SEVERITIES[n];
}

/** glog's traceLocation `file.go:N` (N > 0); ":0" and "" mean none. */
function parseTraceLocation(raw: string): string {
  if (raw === "" || raw === ":0") return ":0";
  const fields = raw.split(":");
  const bad = "not a trace location (use file.go:N)";
  if (fields.length !== 2 || !fields[0].includes(".")) throw new Error(bad);
  let n: number;
  try {
    n = atoi(fields[1]);
  } catch {
    throw new Error(bad);
  }
  if (n <= 0) throw new Error("negative or zero line number in trace location");
  return raw;
}

/** glog's moduleSpec: comma-separated `pattern=N`, N ≥ 0; empty elements ignored. */
function parseModuleSpec(raw: string): string {
  for (const pat of raw.split(",")) {
    if (pat === "") continue;
    const parts = pat.split("=");
    if (parts.length !== 2 || parts[0] === "" || parts[1] === "") {
      throw new Error("syntax error: expect comma-separated list of pattern=N");
    }
    let n: number;
    try {
      n = atoi(parts[1]);
    } catch {
      throw new Error("syntax error: expect comma-separated list of pattern=N");
    }
    if (n < 0) throw new Error("negative value for vmodule level");
  }
  return raw;
}

/** The keys prometheus-operator's CrdKinds understands. */
export const CRD_KIND_KEYS = ["prometheus", "alertmanager", "servicemonitor", "prometheusrule"] as const;

/** prometheus-operator's CrdKinds: comma-separated `key=Kind:plural`, key one of CRD_KIND_KEYS. */
function parseCrdKinds(raw: string): string {
  if (raw === "") return raw;
  const bad =
    "not a CRD kind list (use e.g. prometheus=Prometheus:prometheuses,servicemonitor=ServiceMonitor:servicemonitors)";
  for (const pair of raw.split(",")) {
    const m = /^([^=:,]+)=([A-Za-z][A-Za-z0-9]*):([a-z][a-z0-9-]*)$/.exec(pair);
    if (!m) throw new Error(bad);
    if (!(CRD_KIND_KEYS as readonly string[]).includes(m[1])) {
      throw new Error(`unknown kind key "${m[1]}" (known: ${CRD_KIND_KEYS.join(", ")})`);
    }
  }
  return raw;
}

/** k8s NamedCertKey: `cert,key` optionally followed by `:name,name…`. */
export function parseNamedCertKey(raw: string): NamedCertKey {
  const colon = raw.indexOf(":");
  let names: string[] = [];
  let keycert = raw.trim();
  if (colon >= 0) {
    keycert = raw.slice(0, colon).trim();
    const list = raw.slice(colon + 1).trim();
    if (list === "") throw new Error("empty names list is not allowed");
    names = list.split(",").map((n) => n.trim());
  }
  const files = keycert.split(",");
  if (files.length !== 2 || files[0].trim() === "" || files[1].trim() === "") {
    throw new Error("expected comma separated certificate and key file paths (cert,key[:name,…])");
  }
  return Object.freeze({ certFile: files[0].trim(), keyFile: files[1].trim(), names: Object.freeze(names) });
}

const numberKind = (
  typeName: string,
  parse: (raw: string) => number,
  format: (v: number) => string = String,
): KindImpl => ({
  typeName,
  parse,
  fromDefault: same,
  toJson: asJson,
  helpDefault: (v) => (v === null || v === 0 ? undefined : format(v as number)),
});

export const KINDS: Record<Kind, KindImpl> = {
  string: stringLike("string", (raw) => raw, true),
  bool: {
    typeName: "",
    isBool: true,
    parse: parseBool,
    fromDefault: same,
    toJson: asJson,
    helpDefault: (v) => (v === true ? "true" : undefined),
  },
  int: numberKind("int", parseInt0),
  float: numberKind("float", (raw) => parseFloatGo(raw, 64), formatFloatGo),
  float32: numberKind("float32", (raw) => parseFloatGo(raw, 32), formatFloatGo),
  level: numberKind("Level", atoi),
  duration: {
    typeName: "duration",
    parse: parseDurationNs,
    fromDefault: (d) => (d === null ? null : parseDurationNs(d as string)),
    toJson: (v) => (v === null ? null : formatDurationNs(v as bigint)),
    helpDefault: (v) => (v === null || v === 0n ? undefined : formatDurationNs(v as bigint)),
  },
  strings: {
    typeName: "strings",
    isList: true,
    parse: readCsvRecord,
    fromDefault: frozenList,
    toJson: asJson,
    helpDefault: (v) => ((v as string[]).length === 0 ? undefined : `[${writeCsvRecord(v as string[])}]`),
  },
  ip: {
    typeName: "ip",
    parse: parseIP,
    fromDefault: same,
    toJson: asJson,
    helpDefault: (v) => (v === null ? undefined : (v as string)),
  },
  namedCertKey: {
    typeName: "namedCertKey",
    isList: true,
    parse: (raw) => [parseNamedCertKey(raw)],
    fromDefault: frozenList,
    toJson: asJson,
    // k8s NamedCertKeyArray.String() is "[...]" even when empty, which pflag does not treat as zero.
    helpDefault: (v) =>
      "[" + (v as NamedCertKey[]).map((n) =>
        `${n.certFile},${n.keyFile}` + (n.names.length ? ":" + n.names.join(",") : "")
      ).join(";") + "]",
  },
  // Wrapped Go flag.Values whose String() quotes the value (prometheus/common/log).
  logFormat: stringLike("logFormatFlag", (raw) => (parseLogFormat(raw), raw), true),
  logLevel: stringLike("levelFlag", (raw) => raw, true),
  severity: stringLike("severity", parseSeverity, false),
  traceLocation: stringLike("traceLocation", parseTraceLocation, false),
  moduleSpec: stringLike("moduleSpec", parseModuleSpec, false),
  crdKinds: stringLike("CrdKinds", parseCrdKinds, false),
};
