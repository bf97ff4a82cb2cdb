/**
 * @module flags/help
 * pflag's FlagUsages for one release of a table, inside a cobra-style usage text: one line per
 * option, sorted by name, `  -v, --v Level` or `      --name type`, the help text aligned in one
 * column, and `(default …)` as pflag prints it (zero values omitted, strings quoted).
 */

import { KINDS } from "./kinds.ts";
import { defaultsOf } from "./parse.ts";
import { type AnyTable, helpOf, optionsOf, type Release } from "./table.ts";

/** The flag lines (pflag's FlagSet.FlagUsages) of the options of `table` in `release`. */
export function flagUsages(table: AnyTable, release: Release): string {
  const defaults = defaultsOf(table, release);
  const rows: [string, string][] = [];
  for (const [name, spec] of optionsOf(table, release)) {
    const kind = KINDS[spec.kind];
    let left = spec.short ? `  -${spec.short}, --${name}` : `      --${name}`;
    const typeName = spec.typeNameIn?.[release] ?? kind.typeName;
    if (typeName !== "") left += " " + typeName;
    let usage = helpOf(spec, release);
    const def = kind.helpDefault(defaults.get(name));
    if (def !== undefined) usage += ` (default ${def})`;
    rows.push([left, usage]);
  }
  const width = Math.max(...rows.map(([left]) => left.length));
  // pflag: the longest flag column is followed by three spaces, the others are padded to it.
  return rows.map(([left, usage]) => `${left.padEnd(width)}   ${usage}\n`).join("");
}

/** `ingress-controller run --help`. */
export function runUsage(table: AnyTable, release: Release, version: string): string {
  return `Run the ingress controller (release ${release}, ${version}).\n\n` +
    "Usage:\n  ingress-controller run [flags]\n\n" +
    "Flags:\n" + flagUsages(table, release);
}

/** `ingress-controller --help` (the `proxy` command is hidden). */
export function rootUsage(release: Release, version: string): string {
  return `ingress-controller: HAProxy-based Kubernetes ingress controller (release ${release}, ${version}).

Usage:
  ingress-controller [--release R] <command> [flags]

Available Commands:
  run            Run the ingress controller
  options        Check a flag set and print the effective options as JSON
  migrate-flags  Rewrite a flag list from one release to another (--from R1 --to R2)
  nginx-check    Report how the ingress-nginx annotations of Ingresses would be served (-f FILE or the cluster)
  version        Print the release and version

Global Flags:
      --release string   Release of the option set: A, B, C, 9.0.0, 7.0.0-rc.2 or 6.0.0-rc.0 (default "A", or $INGRESS_CONTROLLER_RELEASE)
  -h, --help             help for ingress-controller

Use "ingress-controller run --help" for the options of a release.
`;
}
