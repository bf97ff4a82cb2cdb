/**
 * Slot changes against a real HAProxy 2.6 (contracts.md §4 "Server slots"): after a change the proxy
 * applies, HAProxy has the servers a reload of the same configuration gives, also for text the proxy
 * could read otherwise than HAProxy does (then the change reloads).
 */
import assert from "node:assert/strict";
import type { ApplyResult } from "../../lib/proxy/apply.ts";
import { plain, proxyUnderTest } from "./fixtures.ts";

/**
 * The servers HAProxy has, `backend/server` → `address:port`, `maint` for one in maintenance (forced,
 * as `disabled` and `state maint` set it, or inherited; the flag a configuration's `disabled` adds
 * beside, which `state ready` leaves, is not).
 */
async function servers(p: Awaited<ReturnType<typeof proxyUnderTest>>): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const line of (await p.haproxy.runtime("show servers state")).split("\n")) {
    // be_id be_name srv_id srv_name srv_addr srv_op_state srv_admin_state … srv_port (19th)
    const f = line.split(" ");
    if (f.length < 19 || !/^\d+$/.test(f[0])) continue;
    out[`${f[1]}/${f[3]}`] = (Number(f[6]) & 0x03) !== 0 ? "maint" : `${f[4]}:${f[18]}`;
  }
  return out;
}

/**
 * HAProxy started with `from`, then `to` applied: how, the servers it has then, and those a reload of
 * `to` (with a comment added: another structure) gives.
 */
async function applied(from: string, to: string): Promise<{
  result: ApplyResult;
  after: Record<string, string>;
  reloaded: Record<string, string>;
}> {
  await using p = await proxyUnderTest();
  const start = await p.applier.apply(plain(from));
  assert.ok(start.ok, start.error ?? "");
  const result = await p.applier.apply(plain(to));
  assert.ok(result.ok, result.error ?? "");
  const after = await servers(p);
  const reload = await p.applier.apply(plain(`${to}\n# reloaded\n`));
  assert.deepEqual([reload.kind, reload.ok], ["reload", true], reload.error ?? "");
  return { result, after, reloaded: await servers(p) };
}

const HEAD = [
  "global",
  '    stats socket "${IC_RUNTIME_SOCKET}" mode 600 level admin expose-fd listeners',
  "",
  "defaults",
  "    mode http",
  "    timeout connect 5s",
  "    timeout client 30s",
  "    timeout server 30s",
  "",
  "frontend http",
  '    bind "${IC_BIND_ADDR}:${IC_HTTP_PORT}"',
  "    use_backend a if { hdr(host) a.test }",
  "    use_backend b if { hdr(host) b.test }",
  "",
].join("\n");

/** Slot lines `s<first>`… for `addresses` (port 80), with `options` after each address. */
const slots = (addresses: string[], first = 1, options = "") =>
  addresses.map((a, i) => `    server s${first + i} ${a}:80${options}\n`).join("");

Deno.test("an indented backend header starts a backend for HAProxy: its new endpoint is not added to the backend above it", async () => {
  const config = (b: string[]) =>
    `${HEAD}backend a\n    balance roundrobin\n${slots(["10.0.0.1"])}` +
    `    backend b\n    balance roundrobin\n${slots(b, 2)}`;
  const { result, after, reloaded } = await applied(config(["10.0.0.2"]), config(["10.0.0.2", "10.0.0.3"]));
  assert.deepEqual(after, reloaded);
  assert.deepEqual(after, { "a/s1": "10.0.0.1:80", "b/s2": "10.0.0.2:80", "b/s3": "10.0.0.3:80" });
  assert.deepEqual([result.kind, result.reason], ["reload", "structure"]);
});

Deno.test("a slot disabled after its other options stays in maintenance, as a reload keeps it", async () => {
  const config = (address: string, defaults = "") =>
    HEAD.replace("    mode http\n", `    mode http\n${defaults}`) +
    `backend a\n    balance source\n    server s1 ${address}:80 send-proxy disabled\n` +
    [2, 3, 4].map((n) => `    server s${n} 127.0.0.1:1 disabled send-proxy\n`).join("") +
    "backend b\n    balance roundrobin\n" + slots(["10.0.0.9"]);
  const moved = await applied(config("10.0.0.1"), config("10.0.0.2"));
  assert.deepEqual(moved.after, moved.reloaded);
  assert.equal(moved.after["a/s1"], "maint");
  assert.deepEqual([moved.result.kind, moved.result.reason], ["reload", "structure"]);
  // a default-server line of a defaults section that disables every server
  const all = (address: string) => config(address, "    default-server disabled\n").replace(" send-proxy disabled", "");
  const off = await applied(all("10.0.0.1"), all("10.0.0.2"));
  assert.deepEqual(off.after, off.reloaded);
  assert.equal(off.after["a/s1"], "maint");
  assert.deepEqual([off.result.kind, off.result.reason], ["reload", "servers"]);
});
