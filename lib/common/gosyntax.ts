/**
 * @module gosyntax
 * The Go standard library's value syntaxes that users' manifests carry: strconv.ParseBool,
 * strconv.ParseInt base 0, strconv.ParseFloat, time.ParseDuration and Duration.String(),
 * net.ParseIP and IP.String(), and one encoding/csv record. Hand-written because no npm
 * package reproduces Go's exact rules (underscores, µs, leading-0 octal, canonical forms).
 * Each parser returns the value or throws an Error whose message is the reason only.
 */

const TRUE = new Set(["1", "t", "T", "TRUE", "true", "True"]);
const FALSE = new Set(["0", "f", "F", "FALSE", "false", "False"]);

/** strconv.ParseBool. */
export function parseBool(s: string): boolean {
  if (TRUE.has(s)) return true;
  if (FALSE.has(s)) return false;
  throw new Error("not a boolean (use true or false)");
}

/** strconv's underscoreOK: underscores only between digits or after a base prefix. */
function underscoreOK(s: string): boolean {
  let saw = "^";
  let i = 0;
  if (s.length >= 1 && (s[0] === "-" || s[0] === "+")) s = s.slice(1);
  let hex = false;
  if (s.length >= 2 && s[0] === "0" && "bBoOxX".includes(s[1])) {
    i = 2;
    saw = "0";
    hex = s[1] === "x" || s[1] === "X";
  }
  for (; i < s.length; i++) {
    const c = s[i];
    if ((c >= "0" && c <= "9") || (hex && /[a-fA-F]/.test(c))) {
      saw = "0";
      continue;
    }
    if (c === "_") {
      if (saw !== "0") return false;
      saw = "_";
      continue;
    }
    if (saw === "_") return false;
    saw = "!";
  }
  return saw !== "_";
}

/** strconv.ParseInt(s, 0, 64), limited to JavaScript's safe integers. */
export function parseInt0(s0: string): number {
  let s = s0;
  if (s === "") throw new Error("not an integer");
  let neg = false;
  if (s[0] === "+" || s[0] === "-") {
    neg = s[0] === "-";
    s = s.slice(1);
  }
  if (s === "") throw new Error("not an integer");
  let base = 10;
  if (s[0] === "0") {
    const p = s[1]?.toLowerCase();
    if (s.length >= 3 && p === "b") [base, s] = [2, s.slice(2)];
    else if (s.length >= 3 && p === "o") [base, s] = [8, s.slice(2)];
    else if (s.length >= 3 && p === "x") [base, s] = [16, s.slice(2)];
    else [base, s] = [8, s.slice(1)];
  }
  let n = 0n;
  let underscores = false;
  for (const c of s) {
    if (c === "_") {
      underscores = true;
      continue;
    }
    const d = parseInt(c, 36);
    if (Number.isNaN(d) || d >= base) throw new Error("not an integer");
    n = n * BigInt(base) + BigInt(d);
  }
  if (underscores && !underscoreOK(s0)) throw new Error("not an integer (misplaced underscore)");
  if (neg) n = -n;
  if (n > BigInt(Number.MAX_SAFE_INTEGER) || n < BigInt(Number.MIN_SAFE_INTEGER)) {
    throw new Error("integer out of range");
  }
  return Number(n);
}

/** Decimal Go float literal (digits with optional underscores, fraction, exponent). */
const DEC_FLOAT = /^[+-]?(?:[0-9_]+(?:\.[0-9_]*)?|\.[0-9_]+)(?:[eE][+-]?[0-9_]+)?$/;
/** Hexadecimal Go float literal: the p exponent is mandatory. */
const HEX_FLOAT = /^([+-]?)0[xX]((?:[0-9a-fA-F_]+(?:\.[0-9a-fA-F_]*)?|\.[0-9a-fA-F_]+))[pP]([+-]?[0-9_]+)$/;

/** strconv.ParseFloat(s, bits): decimal and hex literals, underscores, inf/infinity/nan. */
export function parseFloatGo(s: string, bits: 32 | 64 = 64): number {
  const lower = s.toLowerCase();
  const m = /^([+-]?)(inf|infinity)$/.exec(lower);
  if (m) return m[1] === "-" ? -Infinity : Infinity;
  if (lower === "nan") return NaN;
  let v: number;
  const hex = HEX_FLOAT.exec(s);
  if (hex) {
    if (!underscoreOK(s.slice(0, s.search(/[pP]/)))) throw new Error("not a number");
    const [, sign, mant, exp] = hex;
    const [int, frac = ""] = mant.replaceAll("_", "").split(".");
    const digits = int + frac;
    if (digits === "") throw new Error("not a number");
    v = Number(BigInt("0x" + digits)) * 2 ** (Number(exp.replaceAll("_", "")) - 4 * frac.length);
    if (sign === "-") v = -v;
  } else {
    if (!DEC_FLOAT.test(s) || !/[0-9]/.test(s.split(/[eE]/)[0])) throw new Error("not a number");
    if (s.includes("_") && !underscoreOK(s)) throw new Error("not a number (misplaced underscore)");
    v = Number(s.replaceAll("_", ""));
  }
  if (bits === 32) {
    const f = Math.fround(v);
    if (!Number.isFinite(f) && Number.isFinite(v)) throw new Error("number out of range for float32");
    return shortestFloat32(f);
  }
  if (!Number.isFinite(v)) throw new Error("number out of range");
  return v;
}

/** The shortest decimal that reads back as the same float32 (what Go prints for a float32). */
function shortestFloat32(f: number): number {
  if (!Number.isFinite(f) || f === 0) return f;
  for (let p = 1; p <= 9; p++) {
    const d = Number(f.toPrecision(p));
    if (Math.fround(d) === f) return d;
  }
  return f;
}

/** strconv.FormatFloat(v, 'g', -1, 64): `1e+06`, `10`, `0.5`, `1e-05`. */
export function formatFloatGo(v: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (!Number.isFinite(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v === 0) return Object.is(v, -0) ? "-0" : "0";
  const [mant, expStr] = v.toExponential().split("e");
  const exp = Number(expStr);
  if (exp < -4 || exp >= 6) {
    const e = Math.abs(exp);
    return `${mant}e${exp < 0 ? "-" : "+"}${e < 10 ? "0" + e : e}`;
  }
  return String(v);
}

// ---- durations

const UNITS: Record<string, bigint> = {
  ns: 1n,
  us: 1000n,
  "µs": 1000n, // U+00B5 micro sign
  "μs": 1000n, // U+03BC Greek mu
  ms: 1000000n,
  s: 1000000000n,
  m: 60000000000n,
  h: 3600000000000n,
};
const MAX_NS = (1n << 63n) - 1n;

/** time.ParseDuration, returning nanoseconds. */
export function parseDurationNs(orig: string): bigint {
  let s = orig;
  let neg = false;
  if (s !== "" && (s[0] === "-" || s[0] === "+")) {
    neg = s[0] === "-";
    s = s.slice(1);
  }
  if (s === "0") return 0n;
  if (s === "") throw new Error("not a duration (use e.g. 30s, 1m30s, 500ms)");
  let total = 0n;
  const part = /^([0-9]*)(?:\.([0-9]*))?([^0-9.]+)/;
  while (s !== "") {
    const m = part.exec(s);
    if (!m || (m[1] === "" && (m[2] ?? "") === "")) {
      throw new Error(/^[0-9.]+$/.test(s) ? "missing unit in duration (use e.g. 30s)" : "not a duration");
    }
    const unit = UNITS[m[3]];
    if (unit === undefined) throw new Error(`unknown unit "${m[3]}" in duration (use ns, us, µs, ms, s, m, h)`);
    const consumed = m[0].length;
    // Exact arithmetic: whole part times unit plus the fraction scaled to the unit (truncated, as Go).
    let ns = BigInt(m[1] || "0") * unit;
    const frac = m[2] ?? "";
    if (frac !== "") ns += (BigInt(frac) * unit) / 10n ** BigInt(frac.length);
    total += ns;
    if (total > MAX_NS) throw new Error("duration out of range");
    s = s.slice(consumed);
  }
  return neg ? -total : total;
}

/** Go's fmtFrac: fraction digits of v/10^prec without trailing zeros. */
function fmtFrac(v: bigint, prec: number): [string, bigint] {
  let digits = "";
  let print = false;
  for (let i = 0; i < prec; i++) {
    const d = v % 10n;
    print = print || d !== 0n;
    if (print) digits = d.toString() + digits;
    v /= 10n;
  }
  return [print ? "." + digits : "", v];
}

/** time.Duration.String(): `10m0s`, `1h0m0s`, `1.5s`, `300ms`, `1µs`, `0s`. */
export function formatDurationNs(d: bigint): string {
  const neg = d < 0n;
  let u = neg ? -d : d;
  let out: string;
  if (u < 1000000000n) {
    if (u === 0n) return "0s";
    let unit: string;
    let prec: number;
    if (u < 1000n) [unit, prec] = ["ns", 0];
    else if (u < 1000000n) [unit, prec] = ["µs", 3];
    else [unit, prec] = ["ms", 6];
    const [frac, whole] = fmtFrac(u, prec);
    out = `${whole}${frac}${unit}`;
  } else {
    const [frac, secs] = fmtFrac(u, 9);
    u = secs;
    out = `${u % 60n}${frac}s`;
    u /= 60n;
    if (u > 0n) {
      out = `${u % 60n}m` + out;
      u /= 60n;
      if (u > 0n) out = `${u}h` + out;
    }
  }
  return neg ? "-" + out : out;
}

// ---- IP addresses

function parseIPv4(s: string): number[] | undefined {
  const parts = s.split(".");
  if (parts.length !== 4) return undefined;
  const out: number[] = [];
  for (const p of parts) {
    // Go rejects leading zeros since 1.17 (they were read as octal elsewhere).
    if (!/^(0|[1-9][0-9]{0,2})$/.test(p) || Number(p) > 255) return undefined;
    out.push(Number(p));
  }
  return out;
}

/** net.ParseIP: the 16 bytes of an IPv4 or IPv6 literal (no zone, no brackets, no prefix). */
export function parseIPBytes(s: string): number[] | undefined {
  const v4 = parseIPv4(s);
  if (v4) return [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, ...v4];
  if (!s.includes(":")) return undefined;
  let head = s;
  let tail4: number[] = [];
  const lastColon = s.lastIndexOf(":");
  if (s.slice(lastColon + 1).includes(".")) {
    const v = parseIPv4(s.slice(lastColon + 1));
    if (!v) return undefined;
    tail4 = v;
    head = s.slice(0, lastColon + 1);
    // Keep a trailing "::" (as in "::1.2.3.4"); otherwise drop the colon that separates the IPv4 part.
    if (!head.endsWith("::")) head = head.slice(0, -1);
  }
  const halves = head.split("::");
  if (halves.length > 2) return undefined;
  const group = (g: string): number[] | undefined => {
    if (g === "") return [];
    const out: number[] = [];
    for (const h of g.split(":")) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(h)) return undefined;
      const n = parseInt(h, 16);
      out.push(n >> 8, n & 0xff);
    }
    return out;
  };
  const left = group(halves[0]);
  const right = halves.length === 2 ? group(halves[1]) : [];
  if (!left || !right) return undefined;
  const have = left.length + right.length + tail4.length;
  if (halves.length === 2) {
    if (have > 14) return undefined;
    return [...left, ...new Array(16 - have).fill(0), ...right, ...tail4];
  }
  return have === 16 ? [...left, ...tail4] : undefined;
}

/** net.IP.String() of 16 bytes: dotted IPv4 for IPv4-mapped, else compressed lowercase IPv6 (RFC 5952). */
export function formatIP(b: readonly number[] | Uint8Array): string {
  const mapped = b.slice(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff;
  if (mapped) return Array.from(b.slice(12)).join(".");
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((b[i] << 8) | b[i + 1]);
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen && j - i >= 2) [bestStart, bestLen] = [i, j - i];
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(":");
  return hex.slice(0, bestStart).join(":") + "::" + hex.slice(bestStart + bestLen).join(":");
}

/** pflag's ip value: net.ParseIP(strings.TrimSpace(s)) in its canonical String() form. */
export function parseIP(s: string): string {
  const b = parseIPBytes(s.trim());
  if (!b) throw new Error("not an IP address (use an IPv4 or IPv6 literal)");
  return formatIP(b);
}

// ---- one CSV record (encoding/csv, as pflag's stringSlice reads a value)

/** Reads `s` as one CSV record: fields split on commas, double quotes quote, `""` is a quote. */
export function readCsvRecord(s: string): string[] {
  if (s === "") return [];
  if (/[\r\n]/.test(s)) throw new Error("a list value must be on one line");
  const fields: string[] = [];
  let i = 0;
  for (;;) {
    let field = "";
    if (s[i] === '"') {
      i++;
      for (;;) {
        if (i >= s.length) throw new Error('extraneous or missing " in quoted-field');
        if (s[i] === '"') {
          if (s[i + 1] === '"') {
            field += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        field += s[i++];
      }
      if (i < s.length && s[i] !== ",") throw new Error('extraneous or missing " in quoted-field');
    } else {
      const end = s.indexOf(",", i);
      field = s.slice(i, end < 0 ? s.length : end);
      if (field.includes('"')) throw new Error('bare " in non-quoted-field');
      i += field.length;
    }
    fields.push(field);
    if (i >= s.length) return fields;
    i++; // the comma
    if (i >= s.length) {
      fields.push("");
      return fields;
    }
  }
}

/** pflag's writeAsCSV (encoding/csv Writer): how a list value is printed inside `[...]`. */
export function writeCsvRecord(fields: readonly string[]): string {
  const needsQuotes = (f: string) => f !== "" && (f === "\\." || /[",\r\n]/.test(f) || /^\s/u.test(f));
  return fields.map((f) => (needsQuotes(f) ? `"${f.replaceAll('"', '""')}"` : f)).join(",");
}
