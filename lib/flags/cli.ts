/**
 * @module flags/cli
 * The command line of `ingress-controller`: `[--release R] <command> [flags]` with the commands
 * run, options, migrate-flags, version, nginx-check and the hidden proxy and exporter. Returns the exit code;
 * errors are printed as one line (UsageError → 2, others → 1). `io` makes it testable in-process.
 */

import { exitCodeOf, UsageError } from "../common/errors.ts";
import { parseRunFlags } from "./config.ts";
import { rootUsage, runUsage } from "./help.ts";
import { migrateFlags } from "./migrate.ts";
import { parseProxyFlags, type ProxySettings } from "./proxy_settings.ts";
import { type ExporterSettings, parseExporterFlags } from "./exporter_settings.ts";
import { type NginxCheckSettings, parseNginxCheckFlags } from "./nginx_check_settings.ts";
import { flagUsages } from "./help.ts";
import { releaseFromEnv, resolveRelease } from "./release.ts";
import { exporterTable, nginxCheckTable, proxyTable, type Release, runTable, VERSIONS } from "./table.ts";
import type { Config } from "./config.ts";

export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  env(name: string): string | undefined;
  /** Starts `run` (lib/app); injected so tests of the command line need no cluster. */
  run(config: Config): Promise<void>;
  /** Starts `proxy` (lib/proxy/command.ts). */
  proxy(settings: ProxySettings): Promise<void>;
  /** Starts `exporter` (lib/exporter/command.ts). */
  exporter(settings: ExporterSettings): Promise<void>;
  /** Runs `nginx-check` (lib/nginx/command.ts); throws when the input cannot be read. */
  nginxCheck?(settings: NginxCheckSettings): Promise<void>;
}

/** Reads `--name value` / `--name=value` at argv[i]; returns [value, next index] or undefined. */
function takeOption(argv: readonly string[], i: number, name: string): [string, number] | undefined {
  const a = argv[i];
  if (a === `--${name}`) {
    if (i + 1 >= argv.length) throw new UsageError(`flag needs an argument: --${name}`);
    return [argv[i + 1], i + 2];
  }
  if (a.startsWith(`--${name}=`)) return [a.slice(name.length + 3), i + 1];
  return undefined;
}

function migrateCommand(argv: readonly string[], io: CliIo): number {
  let from: Release | undefined;
  let to: Release | undefined;
  let i = 0;
  while (i < argv.length) {
    if (argv[i] === "-h" || argv[i] === "--help") {
      io.stdout(
        "Rewrite a flag list of `run` from one release to another.\n\nUsage:\n" +
          "  ingress-controller migrate-flags --from R1 --to R2 [flags...]\n\n" +
          "Prints the rewritten flags on stdout, one per line, and one note per line on stderr for every\n" +
          "option that was renamed, dropped (with the reason and what to do) or whose default changes.\n",
      );
      return 0;
    }
    const f = takeOption(argv, i, "from");
    const t = f ? undefined : takeOption(argv, i, "to");
    if (f) [from, i] = [resolveRelease(f[0], "--from"), f[1]];
    else if (t) [to, i] = [resolveRelease(t[0], "--to"), t[1]];
    else break;
  }
  if (!from || !to) throw new UsageError("migrate-flags needs --from R1 and --to R2 before the flags to rewrite");
  const rest = argv[i] === "--" ? argv.slice(i + 1) : argv.slice(i);
  const { flags, notes } = migrateFlags(from, to, rest);
  io.stdout(flags.map((f) => f + "\n").join(""));
  for (const n of notes) io.stderr(n + "\n");
  return 0;
}

async function dispatch(argv: readonly string[], io: CliIo): Promise<number> {
  let release: Release | undefined;
  let i = 0;
  while (i < argv.length && argv[i].startsWith("-")) {
    const r = takeOption(argv, i, "release");
    if (r) {
      [release, i] = [resolveRelease(r[0]), r[1]];
      continue;
    }
    if (argv[i] === "-h" || argv[i] === "--help") break;
    throw new UsageError(`unknown global option ${argv[i]} (only --release comes before the command)`);
  }
  release ??= releaseFromEnv(io.env);
  const version = VERSIONS[release];
  const command = argv[i];
  const rest = argv.slice(i + 1);
  switch (command) {
    case undefined:
    case "help":
    case "-h":
    case "--help":
      io.stdout(rootUsage(release, version));
      return 0;
    case "version":
      io.stdout(`release ${release}, version ${version}\n`);
      return 0;
    case "run":
    case "options": {
      if (rest.some((a) => a === "--release" || a.startsWith("--release="))) {
        throw new UsageError(`--release goes before the command: ingress-controller --release R ${command} [flags]`);
      }
      const config = parseRunFlags(release, rest);
      if (config.get("help")) {
        io.stdout(command === "run" ? runUsage(runTable, release, version) : optionsUsage(release, version));
        return 0;
      }
      if (command === "options") {
        io.stdout(JSON.stringify(config.toOptionsJson()) + "\n");
        return 0;
      }
      await io.run(config);
      return 0;
    }
    case "migrate-flags":
      return migrateCommand(rest, io);
    case "proxy": {
      const settings = parseProxyFlags(rest);
      if (settings === "help") {
        io.stdout(
          "Run the proxy (haproxy) of an ingress.\n\nUsage:\n  ingress-controller proxy [flags]\n\nFlags:\n" +
            flagUsages(proxyTable, "A"),
        );
        return 0;
      }
      await io.proxy(settings);
      return 0;
    }
    case "exporter": {
      const settings = parseExporterFlags(rest);
      if (settings === "help") {
        io.stdout(
          "Serve the proxy's (haproxy's) statistics as Prometheus metrics (the proxy pod's sidecar).\n\n" +
            "Usage:\n  ingress-controller exporter [flags]\n\nFlags:\n" + flagUsages(exporterTable, "A"),
        );
        return 0;
      }
      await io.exporter(settings);
      return 0;
    }
    case "nginx-check": {
      const settings = parseNginxCheckFlags(rest);
      if (settings === "help") {
        io.stdout(
          "Report, per Ingress and nginx.ingress.kubernetes.io/* annotation, whether this controller serves it:\n" +
            "supported, translated (with the difference), unsupported or refused.\n\nUsage:\n" +
            "  ingress-controller nginx-check [-f FILE] [--output json|httproute --gateway NS/NAME] [flags]\n\nFlags:\n" +
            flagUsages(nginxCheckTable, "A"),
        );
        return 0;
      }
      if (!io.nginxCheck) throw new Error("nginx-check is not available in this program");
      await io.nginxCheck(settings);
      return 0;
    }
    default:
      throw new UsageError(
        `unknown command ${JSON.stringify(command)} (commands: run, options, migrate-flags, version, nginx-check)`,
      );
  }
}

function optionsUsage(release: Release, version: string): string {
  return runUsage(runTable, release, version)
    .replace(/^Run the ingress controller/, "Check the flags of run and print the effective options as JSON")
    .replace("ingress-controller run [flags]", "ingress-controller options [flags]");
}

/** Runs the command line; returns the exit code. */
export async function cli(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    return await dispatch(argv, io);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    io.stderr(`error: ${message.replace(/\s*\n\s*/g, " ")}\n`);
    return exitCodeOf(err);
  }
}
