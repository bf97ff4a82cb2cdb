/**
 * @module log/format
 * The syntax of `--log.format`: prometheus/common/log's logFormatFlag, a URL
 * `logger:<target>?<params>`. Lives with the logger that interprets it; the option table
 * (lib/flags/kinds.ts) validates the flag with the same parser.
 */

/** prometheus/common/log's logFormatFlag: a URL `logger:<target>?<params>`. */
export function parseLogFormat(
  raw: string,
): { target: "stdout" | "stderr" | "syslog"; json: boolean; params: URLSearchParams } {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):([^?#]*)(?:\?([^#]*))?$/.exec(raw);
  if (!m) throw new Error('not a log format (use e.g. "logger:stderr" or "logger:stdout?json=true")');
  if (m[1] !== "logger") throw new Error(`invalid scheme ${m[1]} (the scheme must be "logger")`);
  const target = m[2];
  if (target !== "stdout" && target !== "stderr" && target !== "syslog") {
    throw new Error(`unsupported logger "${target}" (use stdout, stderr or syslog)`);
  }
  const params = new URLSearchParams(m[3] ?? "");
  const known = target === "syslog" ? ["json", "appname", "local"] : ["json"];
  for (const key of params.keys()) {
    if (!known.includes(key)) {
      throw new Error(`unknown parameter "${key}" for logger:${target} (known: ${known.join(", ")})`);
    }
  }
  const local = params.get("local");
  if (local !== null && local !== "" && !/^[0-7]$/.test(local)) {
    throw new Error(`syslog facility local=${local} is not one of 0..7`);
  }
  return { target, json: params.get("json") === "true", params };
}
