/**
 * @module flags/config
 * The typed, frozen configuration of `ingress-controller run`, the only thing the rest of the
 * program reads (contracts.md section 1). `config.get(name)` is typed from the option table:
 * a name that is not in the table is a type error, and the value type follows the option's kind,
 * with `null` for options whose default is unset and `undefined` for options some release lacks.
 */

import { UsageError } from "../common/errors.ts";
import { formatDurationNs } from "../common/gosyntax.ts";
import { type Json, KINDS, type NamedCertKey } from "./kinds.ts";
import { type ParsedFlags, parseFlags } from "./parse.ts";
import { type Release, type RunOptionName, type RunTable, runTable, type Version, VERSIONS } from "./table.ts";
import { validateFlags } from "./validate.ts";

export type { NamedCertKey } from "./kinds.ts";
export type { Release, RunOptionName, Version } from "./table.ts";

/** What each kind becomes in Config (durations in milliseconds). */
interface KindValues {
  string: string;
  bool: boolean;
  int: number;
  float: number;
  float32: number;
  duration: number;
  strings: readonly string[];
  ip: string;
  namedCertKey: readonly NamedCertKey[];
  logFormat: string;
  logLevel: "debug" | "info" | "warn" | "error" | "fatal";
  severity: "INFO" | "WARNING" | "ERROR" | "FATAL";
  traceLocation: string;
  level: number;
  moduleSpec: string;
  crdKinds: string;
}

type DefaultsOf<N extends RunOptionName> = RunTable[N]["default"];
type NullIfUnset<N extends RunOptionName> = null extends DefaultsOf<N>[keyof DefaultsOf<N>] ? null : never;
type UndefinedIfAbsent<N extends RunOptionName> = Release extends keyof DefaultsOf<N> ? never : undefined;

/** The type of `config.get(name)`. */
export type RunValue<N extends RunOptionName> =
  | KindValues[RunTable[N]["kind"]]
  | NullIfUnset<N>
  | UndefinedIfAbsent<N>;

export interface Config {
  readonly release: Release;
  readonly version: Version;
  /** Whether the option exists in this release. */
  has(name: RunOptionName): boolean;
  /** The option's value; `undefined` when this release lacks the option. */
  get<N extends RunOptionName>(name: N): RunValue<N>;
  /** Whether the option was given on the command line (rather than defaulted). */
  isGiven(name: RunOptionName): boolean;
  /** The `options` command's object: every option of the release (no `help`), JSON values. */
  toOptionsJson(): { release: Release; version: Version; options: Record<string, Json> };
}

/** Builds the frozen Config from parsed (and validated) run flags. */
export function configFrom(parsed: ParsedFlags): Config {
  const { release, values, given } = parsed;
  const exposed = new Map<string, unknown>();
  for (const [name, v] of values) {
    const kind = runTable[name as RunOptionName].kind;
    exposed.set(name, kind === "duration" && v !== null ? Number(v as bigint) / 1e6 : v);
  }
  const config: Config = {
    release,
    version: VERSIONS[release],
    has: (name) => values.has(name),
    get: <N extends RunOptionName>(name: N) => exposed.get(name) as RunValue<N>,
    isGiven: (name) => given.has(name),
    toOptionsJson() {
      const options: Record<string, Json> = {};
      for (const name of [...values.keys()].sort()) {
        if (name === "help") continue;
        const spec = runTable[name as RunOptionName];
        const v = values.get(name);
        options[name] = spec.kind === "duration" && v !== null
          ? formatDurationNs(v as bigint)
          : KINDS[spec.kind].toJson(v);
      }
      return { release, version: VERSIONS[release], options };
    },
  };
  return Object.freeze(config);
}

/**
 * Parses and validates the flags of `run` for a release. With `--help`/`-h` validation is skipped
 * (the caller prints the usage). Throws UsageError (bad command line) or SetupError (missing file).
 */
export function parseRunFlags(release: Release, argv: readonly string[]): Config {
  const parsed = parseFlags(runTable, release, argv);
  if (parsed.args.length > 0) {
    throw new UsageError(`run takes no arguments, got ${JSON.stringify(parsed.args[0])} (options start with --)`);
  }
  if (parsed.values.get("help") !== true) validateFlags(runTable, parsed);
  return configFrom(parsed);
}
