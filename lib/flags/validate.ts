/**
 * @module flags/validate
 * The table's rules applied to parsed values: enumerations (normalizing case where allowed),
 * numeric ranges, finite numbers, files that must exist, options that must be positive only when
 * their batch mode / switch is in use, and the one cross-option rule (TLS cert and key together).
 */

import { statSync } from "node:fs";
import { SetupError, UsageError } from "../common/errors.ts";
import { KINDS, type NamedCertKey } from "./kinds.ts";
import type { ParsedFlags } from "./parse.ts";
import { type AnyTable, oneOfIn, type OptionSpec } from "./table.ts";

/** Nanoseconds per millisecond: ranges of durations are written in milliseconds. */
const NS_PER_MS = 1e6;

function shown(spec: OptionSpec, v: unknown): string {
  return JSON.stringify(KINDS[spec.kind].toJson(v));
}

function asNumber(spec: OptionSpec, v: unknown): number | null {
  if (v === null) return null;
  if (spec.kind === "duration") return Number(v as bigint) / NS_PER_MS;
  return typeof v === "number" ? v : null;
}

function checkFile(flag: string, path: string): void {
  if (path === "") return;
  let isFile = false;
  try {
    isFile = statSync(path).isFile();
  } catch {
    throw new SetupError(`${flag} ${JSON.stringify(path)}: no such file; give the path of an existing file`);
  }
  if (!isFile) throw new SetupError(`${flag} ${JSON.stringify(path)}: not a regular file`);
}

/** Checks and normalizes `parsed.values` in place; throws UsageError / SetupError with one line. */
export function validateFlags(table: AnyTable, parsed: ParsedFlags): void {
  const { values, release } = parsed;
  for (const [name, value] of values) {
    const spec = table[name];
    const flag = `--${name}`;
    let v = value;
    const allowed = oneOfIn(spec, release);
    if (allowed && v !== null) {
      const pick = (x: string) => {
        const hit = allowed.find((a) => (spec.ignoreCase ? a.toLowerCase() === x.toLowerCase() : a === x));
        if (hit === undefined) {
          throw new UsageError(
            `invalid value ${JSON.stringify(x)} for ${flag}: must be one of ${allowed.join(", ")}`,
          );
        }
        return hit;
      };
      v = Array.isArray(v) ? Object.freeze(v.map(pick)) : pick(v as string);
      values.set(name, v);
    }
    const n = asNumber(spec, v);
    if (n !== null) {
      if (!Number.isFinite(n)) {
        throw new UsageError(`invalid value ${shown(spec, v)} for ${flag}: must be a finite number`);
      }
      if (spec.min !== undefined && n < spec.min) {
        throw new UsageError(
          `invalid value ${shown(spec, v)} for ${flag}: must not be ${
            spec.min === 0 ? "negative" : `below ${spec.min}`
          }` +
            (spec.max !== undefined ? ` (allowed: ${spec.min}..${spec.max})` : ""),
        );
      }
      if (spec.max !== undefined && n > spec.max) {
        throw new UsageError(
          `invalid value ${shown(spec, v)} for ${flag}: must be between ${spec.min ?? 0} and ${spec.max}`,
        );
      }
    }
    if (spec.check && typeof v === "string") spec.check(v, flag);
    if (spec.file && v !== null) {
      if (typeof v === "string") checkFile(flag, v);
      else for (const nck of v as NamedCertKey[]) (checkFile(flag, nck.certFile), checkFile(flag, nck.keyFile));
    }
  }
  // Unused batch / truncation options are not checked (as the original); used ones must be > 0.
  for (const [name, value] of values) {
    const when = table[name].positiveWhen;
    if (!when) continue;
    if (when.batchMode && values.get(when.batchMode) !== "batch") continue;
    if (when.on && values.get(when.on) !== true) continue;
    const n = asNumber(table[name], value);
    if (n === null || n <= 0) {
      const why = [when.batchMode && `--${when.batchMode}=batch`, when.on && `--${when.on}`].filter(Boolean).join(
        " and ",
      );
      throw new UsageError(`invalid value ${shown(table[name], value)} for --${name}: must be positive with ${why}`);
    }
  }
  for (const backend of ["log", "webhook"]) {
    const on = values.get(`audit-${backend}-truncate-enabled`);
    const event = values.get(`audit-${backend}-truncate-max-event-size`) as number | undefined;
    const batch = values.get(`audit-${backend}-truncate-max-batch-size`) as number | undefined;
    if (on === true && event !== undefined && batch !== undefined && event > batch) {
      throw new UsageError(
        `invalid value ${event} for --audit-${backend}-truncate-max-event-size: must not exceed ` +
          `--audit-${backend}-truncate-max-batch-size (${batch})`,
      );
    }
  }
  const cert = values.get("tls-cert-file");
  const key = values.get("tls-private-key-file");
  if (cert !== undefined && key !== undefined && !cert !== !key) {
    throw new UsageError(
      cert
        ? "--tls-cert-file is given without --tls-private-key-file; give both or neither"
        : "--tls-private-key-file is given without --tls-cert-file; give both or neither",
    );
  }
}
