/**
 * @module render/features/timeouts
 * `timeout-connect`, `timeout-server`, `timeout-queue`, `timeout-tunnel` and `timeout-sse`: the
 * backend's own timeouts (unset: the `defaults` section's). The values are HAProxy times after
 * their anchored parsers (annotations/values.ts `duration`, `legacyTimeout`), written bare.
 */
import type { SettingsReader } from "../settings_reader.ts";

export interface Timeouts {
  connect: string | null;
  server: string | null;
  queue: string | null;
  tunnel: string | null;
  /** `timeout server` of server-sent events requests (`Accept: text/event-stream`). */
  sse: string | null;
}

/** The timeouts some layer set (a key at its default leaves the `defaults` section in charge). */
export function readTimeouts(r: SettingsReader): Timeouts {
  return {
    connect: r.set("timeout-connect"),
    server: r.set("timeout-server"),
    queue: r.set("timeout-queue"),
    tunnel: r.set("timeout-tunnel"),
    sse: r.set("timeout-sse"),
  };
}

export function timeoutLines(t: Timeouts): string[] {
  const l: string[] = [];
  if (t.connect) l.push(`timeout connect ${t.connect}`);
  if (t.server) l.push(`timeout server ${t.server}`);
  if (t.queue) l.push(`timeout queue ${t.queue}`);
  if (t.tunnel) l.push(`timeout tunnel ${t.tunnel}`);
  if (t.sse) l.push(`http-request set-timeout server ${t.sse} if { req.hdr(accept) -m sub text/event-stream }`);
  return l;
}
