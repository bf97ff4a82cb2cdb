/**
 * @module flags/migrate
 * `migrate-flags --from R1 --to R2 [flags…]`: rewrites a flag list for another release using only
 * the table: options present in both are kept, renamed options (the entries' `sameAs`) are
 * renamed, options without an equivalent are dropped with the entry's advice, values the target
 * rejects are dropped, and defaults that differ between the releases are pointed out.
 */

import { UsageError } from "../common/errors.ts";
import { readCsvRecord, writeCsvRecord } from "../common/gosyntax.ts";
import { type Json, KINDS } from "./kinds.ts";
import { defaultsOf, parseFlags } from "./parse.ts";
import { oneOfIn, type OptionSpec, type Release, releasesOf, runTable } from "./table.ts";

export interface Migration {
  /** The rewritten flags, one argument each (`--name=value` or `--switch`). */
  readonly flags: string[];
  /** One line per option that was renamed, dropped or whose default changes. */
  readonly notes: string[];
}

const table: Readonly<Record<string, OptionSpec>> = runTable;

/** The option's name in `release`: itself, or its `sameAs` counterpart. */
export function nameIn(name: string, release: Release): string | undefined {
  const spec = table[name];
  if (release in spec.default) return name;
  if (spec.sameAs && release in table[spec.sameAs].default) return spec.sameAs;
  return undefined;
}

/** A value as it would be written on the command line. */
function asFlagValue(v: Json): string {
  if (Array.isArray(v)) return writeCsvRecord(v as string[]);
  return typeof v === "string" ? v : JSON.stringify(v);
}

/** Rewrites `argv` (flags of release `from`) into flags of release `to`. */
export function migrateFlags(from: Release, to: Release, argv: readonly string[]): Migration {
  const parsed = parseFlags(runTable, from, argv);
  if (parsed.args.length > 0) {
    throw new UsageError(`migrate-flags: ${JSON.stringify(parsed.args[0])} is not a flag (flags start with --)`);
  }
  const flags: string[] = [];
  const notes: string[] = [];
  const noted = new Set<string>();
  const note = (key: string, line: string) => {
    if (!noted.has(key)) (noted.add(key), notes.push(line));
  };

  for (const { name, raw, bare } of parsed.occurrences) {
    if (name === "help") continue;
    const spec = table[name];
    const target = nameIn(name, to);
    if (target === undefined) {
      note(
        name,
        `--${name}: dropped, no equivalent in release ${to} (it exists in ${releasesOf(spec).join(", ")}); ` +
          (spec.advice ?? "remove it"),
      );
      continue;
    }
    const allowed = oneOfIn(table[target], to);
    if (allowed) {
      const elements = KINDS[spec.kind].isList ? readCsvRecord(raw) : [raw];
      const lower = (s: string) => (spec.ignoreCase ? s.toLowerCase() : s);
      const rejected = elements.filter((e) => !allowed.some((a) => lower(a) === lower(e)));
      if (rejected.length > 0) {
        note(
          `${name}=${raw}`,
          `--${name}=${raw}: dropped, release ${to} does not accept ${rejected.join(", ")}; ` +
            `choose from ${allowed.join(", ")}`,
        );
        continue;
      }
    }
    if (target !== name) note(`rename ${name}`, `--${name}: renamed to --${target} in release ${to}`);
    flags.push(bare ? `--${target}` : `--${target}=${raw}`);
  }

  // Settings users get implicitly: the source release's defaults that the target release changes.
  const fromDefaults = defaultsOf(runTable, from);
  const toDefaults = defaultsOf(runTable, to);
  const json = (name: string, v: unknown) => KINDS[table[name].kind].toJson(v);
  for (const [name, fromValue] of fromDefaults) {
    const spec = table[name];
    const target = nameIn(name, to);
    if (name === "help" || target === undefined || spec.followsRelease) continue;
    const was = json(name, fromValue);
    const will = json(target, toDefaults.get(target));
    if (JSON.stringify(was) === JSON.stringify(will)) continue;
    const given = parsed.given.has(name);
    const effective = json(name, parsed.values.get(name));
    if (given && JSON.stringify(effective) !== JSON.stringify(was)) continue;
    const show = (v: Json) => (v === null ? "unset" : asFlagValue(v));
    note(
      `default ${name}`,
      given
        ? `--${target}=${show(was)}: kept as given; it was the default of release ${from}, ` +
          `release ${to}'s default is ${show(will)}`
        : `--${target}: default changes from ${show(was)} (release ${from}) to ${show(will)} (release ${to})` +
          (was === null ? "" : `; add --${target}=${show(was)} to keep the old behaviour`),
    );
  }
  return { flags, notes };
}
