/**
 * @module flags/release
 * Choosing the release of the option set: `--release R` before the command, else the environment
 * variable INGRESS_CONTROLLER_RELEASE, else A. R is a release letter or its version.
 */

import { UsageError } from "../common/errors.ts";
import { type Release, RELEASES, VERSIONS } from "./table.ts";

export const RELEASE_ENV = "INGRESS_CONTROLLER_RELEASE";

/** `A`, `B`, `C` or a version (`9.0.0`, `7.0.0-rc.2`, `6.0.0-rc.0`) → the release. */
export function resolveRelease(value: string, from = "--release"): Release {
  const v = value.trim();
  const byLetter = RELEASES.find((r) => r === v.toUpperCase());
  if (byLetter) return byLetter;
  const byVersion = RELEASES.find((r) => VERSIONS[r] === v.replace(/^v/, ""));
  if (byVersion) return byVersion;
  const known = RELEASES.map((r) => `${r} (${VERSIONS[r]})`).join(", ");
  throw new UsageError(`invalid value ${JSON.stringify(value)} for ${from}: not a release; use one of ${known}`);
}

/** The release from the environment, or A. */
export function releaseFromEnv(env: (name: string) => string | undefined): Release {
  const v = env(RELEASE_ENV);
  return v === undefined || v === "" ? "A" : resolveRelease(v, `$${RELEASE_ENV}`);
}
