/**
 * @module flags/nginx_check_settings
 * The flags of `nginx-check` (the ingress-nginx migration report), read with the same table engine
 * as `run`, as the settings object `runNginxCheck` (lib/nginx/command.ts) takes.
 */

import { UsageError } from "../common/errors.ts";
import { parseFlags } from "./parse.ts";
import { nginxCheckTable } from "./table.ts";
import { validateFlags } from "./validate.ts";
import type { NginxCheckSettings } from "../nginx/settings.ts";
import { parseGatewayRef } from "../nginx/to_httproute.ts";

export type { NginxCheckSettings };

/** Parses `nginx-check` flags; returns "help" when --help/-h was given. */
export function parseNginxCheckFlags(argv: readonly string[]): NginxCheckSettings | "help" {
  const parsed = parseFlags(nginxCheckTable, "A", argv);
  if (parsed.values.get("help") === true) return "help";
  if (parsed.args.length > 0) {
    throw new UsageError(
      `nginx-check takes no arguments, got ${JSON.stringify(parsed.args[0])} (give the file with -f FILE)`,
    );
  }
  validateFlags(nginxCheckTable, parsed);
  const v = parsed.values;
  const output = v.get("output") as NginxCheckSettings["output"];
  let gateway: NginxCheckSettings["gateway"] = null;
  if (output === "httproute") {
    const ref = parseGatewayRef(v.get("gateway") as string);
    if (typeof ref === "string") {
      throw new UsageError(`--gateway: ${ref}; --output httproute needs the Gateway the routes attach to`);
    }
    gateway = ref;
  }
  return Object.freeze({
    file: v.get("filename") as string,
    output,
    gateway,
    kubeconfig: v.get("kubeconfig") as string,
    namespace: v.get("namespace") as string,
  });
}
