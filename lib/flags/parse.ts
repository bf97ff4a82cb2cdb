/**
 * @module flags/parse
 * The command-line reader: Go pflag's rules applied to any option table for one release.
 * `--name value`, `--name=value`, bool `--flag` / `--flag=<ParseBool>`, shorthands `-v 3`, `-v=3`,
 * `-v3`, `-hv3`; `--` ends the flags; scalars: last value wins; lists: the first occurrence
 * replaces the default, later ones append. Values are checked by their kind here; range, enum,
 * file and cross-option rules live in flags/validate.
 */

import { UsageError } from "../common/errors.ts";
import { KINDS } from "./kinds.ts";
import { type AnyTable, type OptionSpec, type Release, releasesOf } from "./table.ts";

export interface ParsedFlags {
  readonly release: Release;
  /** Every option of the release: its value (durations as bigint nanoseconds). */
  readonly values: Map<string, unknown>;
  /** Options given on the command line. */
  readonly given: Set<string>;
  /** Arguments that are not flags (and everything after `--`). */
  readonly args: string[];
  /** Every flag occurrence in order, with its text (`bare`: a switch given without a value). */
  readonly occurrences: { name: string; raw: string; bare: boolean }[];
}

/** The defaults of every option of `table` in `release`. */
export function defaultsOf(table: AnyTable, release: Release): Map<string, unknown> {
  const values = new Map<string, unknown>();
  for (const [name, spec] of Object.entries(table)) {
    const d = spec.default[release];
    if (d !== undefined) values.set(name, KINDS[spec.kind].fromDefault(d));
  }
  return values;
}

/** "--x is not an option of release A; it exists in B" or "unknown option --x". */
export function notAnOption(table: AnyTable, release: Release, flag: string, name: string): UsageError {
  const spec: OptionSpec | undefined = Object.hasOwn(table, name) ? table[name] : undefined;
  if (spec) {
    return new UsageError(
      `${flag} is not an option of release ${release}; it exists in ${releasesOf(spec).join(", ")}`,
    );
  }
  return new UsageError(`unknown option ${flag} (see --help for the options of release ${release})`);
}

function displayValue(raw: string): string {
  return JSON.stringify(raw);
}

/** Reads `argv` against the options of `table` present in `release`. */
export function parseFlags(table: AnyTable, release: Release, argv: readonly string[]): ParsedFlags {
  const values = defaultsOf(table, release);
  const given = new Set<string>();
  const args: string[] = [];
  const occurrences: ParsedFlags["occurrences"] = [];
  const byName = (name: string) => (Object.hasOwn(table, name) && values.has(name) ? table[name] : undefined);
  const byShort = new Map<string, string>();
  for (const [name, spec] of Object.entries(table)) if (spec.short && values.has(name)) byShort.set(spec.short, name);

  const set = (name: string, flag: string, raw: string, bare = false) => {
    occurrences.push({ name, raw, bare });
    const spec = table[name];
    const kind = KINDS[spec.kind];
    let v: unknown;
    try {
      v = kind.parse(raw);
    } catch (err) {
      throw new UsageError(`invalid value ${displayValue(raw)} for ${flag}: ${(err as Error).message}`);
    }
    if (kind.isList) {
      const prev = given.has(name) ? values.get(name) as unknown[] : [];
      values.set(name, Object.freeze([...prev, ...(v as unknown[])]));
    } else {
      values.set(name, v);
    }
    given.add(name);
  };

  let i = 0;
  while (i < argv.length) {
    const a = argv[i++];
    if (a === "--") {
      args.push(...argv.slice(i));
      break;
    }
    if (a.startsWith("--")) {
      const body = a.slice(2);
      if (body === "" || body.startsWith("-") || body.startsWith("=")) {
        throw new UsageError(`bad flag syntax: ${a}`);
      }
      const eq = body.indexOf("=");
      const name = eq < 0 ? body : body.slice(0, eq);
      const flag = `--${name}`;
      const spec = byName(name);
      if (!spec) throw notAnOption(table, release, flag, name);
      if (eq >= 0) set(name, flag, body.slice(eq + 1));
      else if (KINDS[spec.kind].isBool) set(name, flag, "true", true);
      else if (i < argv.length) set(name, flag, argv[i++]);
      else throw new UsageError(`flag needs an argument: ${flag}`);
      continue;
    }
    if (a.startsWith("-") && a.length > 1) {
      // One or more shorthands: -h, -v3, -v=3, -hv 3.
      let rest = a.slice(1);
      while (rest !== "") {
        const c = rest[0];
        const name = byShort.get(c);
        if (!name) {
          const asLong = a.slice(1).split("=")[0];
          const hint = byName(asLong) ? `; long options take two dashes: --${asLong}` : "";
          throw new UsageError(`unknown shorthand flag: '${c}' in ${a}${hint}`);
        }
        const flag = `-${c}`;
        const spec = table[name];
        if (rest[1] === "=") {
          set(name, flag, rest.slice(2));
          rest = "";
        } else if (KINDS[spec.kind].isBool) {
          set(name, flag, "true", true);
          rest = rest.slice(1);
        } else if (rest.length > 1) {
          set(name, flag, rest.slice(1));
          rest = "";
        } else if (i < argv.length) {
          set(name, flag, argv[i++]);
          rest = "";
        } else {
          throw new UsageError(`flag needs an argument: '${c}' in ${a}`);
        }
      }
      continue;
    }
    args.push(a);
  }
  return { release, values, given, args, occurrences };
}
