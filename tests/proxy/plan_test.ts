/**
 * The proxy's reload decision (lib/proxy/plan.ts) on plain states, every branch: refused input,
 * nothing runs, identical states, endpoint-only, map-only (edited in place or replaced: many
 * entries, a `;`, the ordered regex map), certificates replaced, added, removed and their SNI
 * changed, backends dropped that nothing names, and what needs a reload (structure, a backend dropped
 * that something still names, the first and the last certificate, userlists, CA files, crt-list
 * options, servers the Runtime API cannot change).
 */
import assert from "node:assert/strict";
import {
  type DesiredState,
  MAP_EDIT_LIMIT,
  mapEdits,
  type Plan,
  planApply,
  type Running,
  type RuntimeChanges,
} from "../../lib/proxy/plan.ts";
import type { MapFile } from "../../lib/render/maps.ts";
import { readPart } from "../../lib/transport/parts.ts";
import { buildConfig, hostRoutes, plain } from "./fixtures.ts";

const one = [{ address: "10.0.0.1", port: 8080 }];
const two = [{ address: "10.0.0.2", port: 8080 }, { address: "10.0.0.1", port: 8080 }];
const web = (endpoints = one, tls = false) => buildConfig({ backends: [{ name: "web", endpoints }], tls });

/** `s` as HAProxy runs it once applied: with the checked lines of its map files. */
function running(s: DesiredState): Running {
  const p = planApply(null, s);
  assert.equal(p.kind, "reload", JSON.stringify(p));
  return { state: s, lines: (p as Extract<Plan, { kind: "reload" }>).lines };
}

/** The plan from `last` (running) to `next`. */
const plan = (last: DesiredState, next: DesiredState) => planApply(running(last), next);

/** The Runtime API changes from `last` to `next` (fails when the plan is something else). */
function changes(last: DesiredState, next: DesiredState): RuntimeChanges {
  const p = plan(last, next);
  assert.equal(p.kind, "runtime", JSON.stringify(p));
  return (p as Extract<Plan, { kind: "runtime" }>).changes;
}

/** Why `next` needs a reload after `last`, or the plan's kind when it does not. */
function reloadReason(last: DesiredState, next: DesiredState): string {
  const p = plan(last, next);
  return p.kind === "reload" ? p.reason : `no reload: ${p.kind}`;
}

const NO_CERTS = { changed: [], added: [], removed: [], resni: [] };

/** The slot commands when `next` differs from `last` in endpoints only, else null. */
function endpointOnly(last: DesiredState, next: DesiredState) {
  const p = plan(last, next);
  if (p.kind !== "runtime") return null;
  const { maps, certs, crtListChanged, servers } = p.changes;
  const certCount = certs.changed.length + certs.added.length + certs.removed.length + certs.resni.length;
  return maps.length === 0 && certCount === 0 && !crtListChanged ? servers : null;
}

const withMaps = (s: DesiredState, maps: Partial<Record<MapFile, string>>): DesiredState => ({
  ...s,
  maps: new Map([...(s.maps ?? []), ...Object.entries(maps)]) as Map<MapFile, string>,
});
const lines = (n: number, backend = "be_web") =>
  Array.from({ length: n }, (_, i) => `h${i}.example/ ${backend}\n`).join("");

Deno.test("planApply: input that cannot be used is refused before anything else is planned", () => {
  const a = plain(web());
  assert.deepEqual(planApply(null, { ...a, pems: new Map([["../x.pem", "x"]]) }), {
    kind: "refused",
    error: "bad PEM file name ../x.pem",
  });
  const unknown = { ...a, maps: new Map([["other.map", "a/ b\n"]]) } as unknown as DesiredState;
  assert.deepEqual(planApply(running(a), unknown), { kind: "refused", error: "unknown map other.map" });
  const bad = planApply(running(a), withMaps(a, { "routes-prefix.map": "a.example/ be x\n" }));
  assert.equal(bad.kind, "refused");
  assert.match((bad as { error: string }).error, /routes-prefix\.map: line 1 is not/);
});

Deno.test("planApply: with nothing running, the whole state is started (reason: not running)", () => {
  const a = withMaps(plain(web()), { "routes-prefix.map": lines(2) });
  const p = planApply(null, a);
  assert.equal(p.kind, "reload");
  if (p.kind !== "reload") return;
  assert.equal(p.reason, "not running");
  assert.deepEqual(p.lines.get("routes-prefix.map")!.lines(), ["h0.example/ be_web", "h1.example/ be_web"]);
  assert.deepEqual(p.lines.get("routes-exact.map")!.lines(), []);
});

Deno.test("planApply: identical states plan nothing; files that came in parts are compared by their parts", () => {
  const a = withMaps(plain(web()), { "routes-prefix.map": lines(3) });
  assert.deepEqual(plan(a, { ...a, maps: new Map(a.maps), pems: new Map() }), { kind: "none" });
  // the same parts (by digest) are the same file: the joined texts are not compared again
  const inParts = { ...a, parts: new Map([["haproxy.cfg", [readPart(a.config)]]]) };
  assert.deepEqual(plan(inParts, { ...inParts, config: "(not read)" }), { kind: "none" });
  const moved = { ...inParts, config: web(two), parts: new Map([["haproxy.cfg", [readPart(web(two))]]]) };
  assert.equal(changes(inParts, moved).servers.changed, 1);
});

Deno.test("planApply: after a Runtime API change that did not complete (its reload failed too), any next state reloads", () => {
  const a = plain(web());
  const unsettled = { ...running(a), unsettled: true };
  // HAProxy runs part of a change from `a`: a revert to `a` is not "none", an endpoint change not "runtime"
  assert.deepEqual(planApply(unsettled, a), { kind: "reload", reason: "runtime incomplete", lines: unsettled.lines });
  assert.equal((planApply(unsettled, plain(web(two))) as { reason?: string }).reason, "runtime incomplete");
  // input that cannot be used is still refused
  assert.equal(planApply(unsettled, { ...a, pems: new Map([["../x.pem", "x"]]) }).kind, "refused");
});

Deno.test("endpointOnly: runtime commands only when skeleton, crt-list and certificates are equal", () => {
  const a = plain(web());
  const b = plain(web(two));
  assert.equal(endpointOnly(a, b)?.commands.length, 2);
  assert.equal(endpointOnly(a, b)?.changed, 1);
  assert.equal(endpointOnly(a, { ...b, crtList: "ns_a.pem a.test\n" }), null);
  assert.equal(endpointOnly(a, { ...b, pems: new Map([["ns_a.pem", "x"]]) }), null);
  assert.equal(endpointOnly(a, plain(b.config.replace("balance roundrobin", "balance leastconn"))), null);
  // the plan's parts: servers only, and haproxy.cfg is written afterwards
  assert.deepEqual(changes(a, b), {
    servers: {
      changed: 1,
      commands: [
        { slot: "web/s2", kind: "addr", command: "set server web/s2 addr 10.0.0.2 port 8080" },
        { slot: "web/s2", kind: "state", command: "set server web/s2 state ready" },
      ],
      extra: new Map([["web", []]]),
    },
    maps: [],
    certs: NO_CERTS,
    dropped: { backends: [], commands: [] },
    configChanged: true,
    crtListChanged: false,
  });
});

Deno.test("planApply: a few changed map entries are edited in place, adds and sets before deletes", () => {
  const a = withMaps(plain(web()), { "routes-prefix.map": "a.example/ be_a\nb.example/ be_b\n" });
  const b = withMaps(a, { "routes-prefix.map": "b.example/ be_c\nd.example/ be_a\n" });
  const c = changes(a, b);
  assert.deepEqual([c.servers, c.certs, c.configChanged, c.crtListChanged], [
    { commands: [], changed: 0, extra: new Map() },
    NO_CERTS,
    false,
    false,
  ]);
  assert.equal(c.maps.length, 1);
  const [m] = c.maps;
  assert.equal(m.file, "routes-prefix.map");
  assert.equal(m.how, "edit");
  if (m.how !== "edit") return;
  assert.deepEqual(m.edits, [
    { op: "set", key: "b.example/", value: "be_c" },
    { op: "add", key: "d.example/", value: "be_a" },
    { op: "del", key: "a.example/" },
  ]);
  assert.deepEqual(m.to.lines(), ["b.example/ be_c", "d.example/ be_a"]);
  assert.deepEqual([m.diff.added, m.diff.removed], [
    ["b.example/ be_c", "d.example/ be_a"],
    ["a.example/ be_a", "b.example/ be_b"],
  ]);
  // an unchanged map is not part of the plan
  const redirect = changes(a, withMaps(a, { "redirect-hosts.map": "a.example 1\n" }));
  assert.deepEqual(redirect.maps.map((x) => [x.file, x.how]), [["redirect-hosts.map", "edit"]]);
});

Deno.test("planApply: beyond MAP_EDIT_LIMIT changed entries, or a `;` in an entry, the map is replaced", () => {
  const a = withMaps(plain(web()), { "routes-prefix.map": lines(10) });
  const at = changes(a, withMaps(a, { "routes-prefix.map": lines(10 + MAP_EDIT_LIMIT - 1, "be_web") + "z/ be_z\n" }));
  assert.equal(at.maps[0].how, "edit", "exactly the limit: in place");
  if (at.maps[0].how === "edit") assert.equal(at.maps[0].edits.length, MAP_EDIT_LIMIT);
  const over = changes(a, withMaps(a, { "routes-prefix.map": lines(10 + MAP_EDIT_LIMIT + 1) }));
  assert.deepEqual([over.maps[0].file, over.maps[0].how], ["routes-prefix.map", "replace"]);
  assert.equal(over.maps[0].to.lines().length, 10 + MAP_EDIT_LIMIT + 1);
  // every entry of the map changes value: one `set` each
  assert.equal(changes(a, withMaps(a, { "routes-prefix.map": lines(10, "be_other") })).maps[0].how, "edit");
  // a `;` would split the command line: only a payload carries it
  const semi = changes(a, withMaps(a, { "routes-exact.map": "a.example/x;y be_web\n" }));
  assert.deepEqual(semi.maps.map((m) => [m.file, m.how]), [["routes-exact.map", "replace"]]);
});

Deno.test("planApply: the regex map is always replaced as a new version, in its order", () => {
  const a = withMaps(plain(web()), { "routes-regex.map": "^a[.]example(?=/)(?i:/v[0-9]+/.*) be_web\n" });
  const b = withMaps(a, {
    "routes-regex.map": "^a[.]example(?=/)(?i:/v\\d+/items/.*) be_api\n^a[.]example(?=/)(?i:/v[0-9]+/.*) be_web\n",
  });
  const c = changes(a, b);
  assert.deepEqual(c.maps.map((m) => [m.file, m.how]), [["routes-regex.map", "replace"]]);
  assert.deepEqual(c.maps[0].to.lines(), [
    "^a[.]example(?=/)(?i:/v\\d+/items/.*) be_api",
    "^a[.]example(?=/)(?i:/v[0-9]+/.*) be_web",
  ]);
  assert.deepEqual(c.maps[0].diff.added, ["^a[.]example(?=/)(?i:/v\\d+/items/.*) be_api"]);
});

Deno.test("planApply: certificates are replaced, added, removed and re-listed through the Runtime API", () => {
  const tls = (crtList: string, pems: [string, string][]): DesiredState => ({
    config: web(one, true),
    crtList,
    pems: new Map(pems),
  });
  const a = tls("ns_a.pem a.test\n", [["ns_a.pem", "cert-a"]]);
  // a PEM replaced: same file, same crt-list line
  const replaced = changes(a, tls("ns_a.pem a.test\n", [["ns_a.pem", "cert-a2"]]));
  assert.deepEqual([replaced.certs, replaced.crtListChanged, replaced.configChanged], [
    { ...NO_CERTS, changed: ["ns_a.pem"] },
    false,
    false,
  ]);
  // a new file and its line (the PEM of the one before changed too)
  const both = tls("ns_a.pem a.test\nns_b.pem b.test *.b.test\n", [["ns_a.pem", "cert-a2"], ["ns_b.pem", "cert-b"]]);
  const added = changes(a, both);
  assert.deepEqual([added.certs, added.crtListChanged], [
    { ...NO_CERTS, changed: ["ns_a.pem"], added: [{ file: "ns_b.pem", sni: ["b.test", "*.b.test"] }] },
    true,
  ]);
  // a file no longer listed
  assert.deepEqual(changes(both, tls("ns_b.pem b.test *.b.test\n", [["ns_b.pem", "cert-b"]])).certs, {
    ...NO_CERTS,
    removed: ["ns_a.pem"],
  });
  // the same file for other SNI names
  assert.deepEqual(changes(a, tls("ns_a.pem a.test www.a.test\n", [["ns_a.pem", "cert-a"]])).certs, {
    ...NO_CERTS,
    resni: [{ file: "ns_a.pem", sni: ["a.test", "www.a.test"] }],
  });
});

Deno.test("planApply: the first and the last certificate change the configuration's structure: a reload", () => {
  const none = plain(web());
  const first = { config: web(one, true), crtList: "ns_a.pem a.test\n", pems: new Map([["ns_a.pem", "cert-a"]]) };
  assert.equal(reloadReason(none, first), "structure");
  assert.equal(reloadReason(first, none), "structure");
});

Deno.test("planApply: a structural change reloads, also beside endpoint and map changes", () => {
  const a = withMaps(plain(web()), { "routes-prefix.map": lines(1) });
  assert.equal(
    reloadReason(a, { ...a, config: a.config.replace("balance roundrobin", "balance leastconn") }),
    "structure",
  );
  assert.equal(
    reloadReason(
      a,
      withMaps(plain(buildConfig({ backends: [{ name: "web", endpoints: two }, { name: "api", endpoints: one }] })), {
        "routes-prefix.map": lines(2),
      }),
    ),
    "structure",
  );
  // the same skeleton, but a server line the Runtime API cannot change
  const named = (host: string) => plain(`backend web\n    server s1 ${host}:80\n`);
  assert.equal(reloadReason(named("a.example"), named("b.example")), "servers");
});

Deno.test("planApply: userlists, CA files and crt-list options are read with the configuration, so they reload", () => {
  const base = plain(web());
  const a = {
    ...base,
    crtList: "ns_a.pem a.test\n",
    pems: new Map([["ns_a.pem", "cert"], ["ns_ca_ca.pem", "ca1"]]),
    userlists: "userlist ul_ns_u\n",
  };
  // a certificate alone changes through the Runtime API, the CA file beside it untouched
  assert.deepEqual(changes(a, { ...a, pems: new Map([["ns_a.pem", "cert2"], ["ns_ca_ca.pem", "ca1"]]) }).certs, {
    changed: ["ns_a.pem"],
    added: [],
    removed: [],
    resni: [],
  });
  assert.equal(reloadReason(a, { ...a, userlists: "userlist ul_ns_u\n    user x password '$1$a$b'\n" }), "userlists");
  assert.equal(reloadReason(a, { ...a, pems: new Map([["ns_a.pem", "cert"], ["ns_ca_ca.pem", "ca2"]]) }), "CA files");
  assert.equal(reloadReason(a, { ...a, pems: new Map([["ns_a.pem", "cert"]]) }), "CA files");
  const options = { ...a, crtList: "ns_a.pem [ca-file ns_ca_ca.pem verify required] a.test\n" };
  assert.equal(reloadReason(a, options), "crt-list");
  assert.equal(reloadReason(options, a), "crt-list");
  // a certificate file the unchanged crt-list does not name, or a line without its file
  assert.equal(reloadReason(a, { ...a, pems: new Map([...a.pems, ["ns_b.pem", "cert-b"]]) }), "crt-list");
  assert.equal(reloadReason(a, { ...a, crtList: "ns_a.pem a.test\nns_b.pem b.test\n" }), "crt-list");
});

Deno.test("mapEdits: adds and value changes before removals, nothing for unchanged entries", () => {
  assert.deepEqual(mapEdits({ removed: ["a/ x", "b/ y"], added: ["b/ y2", "d/ w"] }), [
    { op: "set", key: "b/", value: "y2" },
    { op: "add", key: "d/", value: "w" },
    { op: "del", key: "a/" },
  ]);
  assert.deepEqual(mapEdits({ removed: [], added: [] }), []);
});

/** A configuration routed through `routes-exact.map`, with these backends and host routes. */
function routed(
  backends: Record<string, typeof one>,
  routes: Record<string, string>,
  extra: { frontendExtra?: string[] } = {},
): DesiredState {
  const config = buildConfig({
    backends: Object.entries(backends).map(([name, endpoints]) => ({ name, endpoints })),
    routing: "maps",
    ...extra,
  });
  return withMaps(plain(config), { "routes-exact.map": hostRoutes(routes) });
}

Deno.test("planApply: backends dropped that nothing names go through the Runtime API; their live servers to maintenance", () => {
  const a = routed({ web: one, api: two, old: one }, { "web.test": "web", "api.test": "api", "old.test": "old" });
  // old.test moved to an existing backend, and the old backend gone
  const b = routed({ web: one, api: two }, { "web.test": "web", "api.test": "api", "old.test": "web" });
  const c = changes(a, b);
  assert.deepEqual(c.dropped, {
    backends: ["old"],
    commands: [{ slot: "old/s1", kind: "state", command: "set server old/s1 state maint" }],
  });
  assert.deepEqual([c.servers, c.configChanged, c.maps.map((m) => m.file)], [
    { commands: [], changed: 0, extra: new Map() },
    true,
    ["routes-exact.map"],
  ]);
  // two backends at once, and endpoints changed in a backend that stays
  const d = routed({ api: one }, { "api.test": "api" });
  const cd = changes(a, d);
  assert.deepEqual(cd.dropped.backends, ["web", "old"]);
  assert.equal(cd.dropped.commands.length, 2);
  assert.equal(cd.servers.changed, 1);
  assert.deepEqual(cd.servers.commands.map((x) => x.slot), ["api/s2", "api/s2"]);
});

Deno.test("planApply: a backend dropped that something still names, or any other section changed, reloads", () => {
  const a = routed({ web: one, old: one }, { "web.test": "web", "old.test": "old" });
  // a map still routes to it (the running HAProxy would keep sending requests there)
  assert.equal(reloadReason(a, routed({ web: one }, { "web.test": "web", "old.test": "old" })), "structure");
  // a line of the configuration names it
  const named = (line: string) => routed({ web: one }, { "web.test": "web" }, { frontendExtra: [line] });
  assert.equal(reloadReason(a, named("    use_backend old if { path /old }")), "structure");
  assert.equal(reloadReason(a, named("    http-request set-var(txn.x) str(old),concat(/s1)")), "structure");
  // a backend dropped and another added
  assert.equal(reloadReason(a, routed({ web: one, new: one }, { "web.test": "web" })), "structure");
  // a section other than a backend changed or left out
  const noStats = plain(a.config.replace(/frontend stats\n( {4}.*\n)*\n/, ""));
  assert.notEqual(noStats.config, a.config);
  assert.equal(
    reloadReason(a, withMaps(noStats, { "routes-exact.map": hostRoutes({ "web.test": "web" }) })),
    "structure",
  );
  // backends reordered
  const swapped = routed({ old: one, web: one }, { "web.test": "web" });
  assert.equal(reloadReason(a, swapped), "structure");
  // the same backends again after a drop: a backend added, which HAProxy reads only on a reload
  const c = routed({ web: one }, { "web.test": "web", "old.test": "web" });
  assert.equal(plan(a, c).kind, "runtime");
  assert.equal(reloadReason(c, a), "structure");
});

Deno.test("planApply: a growable backend's endpoints outnumbering its slots are a Runtime API change; servers parked before are reused", () => {
  const grows = (n: number, extra: Parameters<typeof buildConfig>[0]["frontendExtra"] = []) =>
    plain(buildConfig({
      backends: [{
        name: "web",
        endpoints: Array.from({ length: n }, (_, i) => ({ address: `10.0.3.${i + 1}`, port: 80 })),
        grows: true,
      }, { name: "pinned", endpoints: one, balance: "source" }],
      frontendExtra: extra,
    }));
  const up = changes(grows(1), grows(3));
  assert.deepEqual(up.servers.commands.filter((c) => c.kind === "add").map((c) => c.command), [
    "add server web/s2 10.0.3.2:80",
    "add server web/s3 10.0.3.3:80",
  ]);
  // shrinking parks the servers beyond the new configuration's slot; the plan names them
  const down = changes(grows(3), grows(1));
  assert.deepEqual(down.servers.extra.get("web")?.map((s) => s.server), ["s2", "s3"]);
  // with them running (parked), growing again adds nothing
  const after: Running = { ...running(grows(1)), extra: down.servers.extra };
  const again = planApply(after, grows(2));
  assert.equal(again.kind, "runtime");
  if (again.kind !== "runtime") return;
  assert.deepEqual(again.changes.servers.commands.map((c) => c.command), [
    "set server web/s2 addr 10.0.3.2 port 80",
    "set server web/s2 state ready",
  ]);
  assert.deepEqual(again.changes.servers.extra.get("web")?.map((s) => s.server), ["s3"]);
  // growth and a structural change together: a reload
  assert.equal(reloadReason(grows(1), grows(3, ["    http-request deny if FALSE"])), "structure");
  // balance source past its 4 slots: a reload
  const pinned = (n: number) =>
    plain(buildConfig({
      backends: [{
        name: "pinned",
        endpoints: Array.from({ length: n }, (_, i) => ({ address: `10.0.4.${i + 1}`, port: 80 })),
        balance: "source",
      }],
    }));
  assert.equal(changes(pinned(1), pinned(4)).servers.changed, 3);
  assert.equal(reloadReason(pinned(4), pinned(5)), "structure");
  // options an added server could not be given: growing reloads ("servers"), shrinking does not
  const checked = (n: number) =>
    plain(buildConfig({
      backends: [{
        name: "web",
        endpoints: Array.from({ length: n }, (_, i) => ({ address: `10.0.3.${i + 1}`, port: 80 })),
        grows: true,
      }],
      params: "check",
    }));
  assert.equal(reloadReason(checked(1), checked(2)), "servers");
  assert.equal(changes(checked(2), checked(1)).servers.changed, 1);
});

Deno.test("planApply: a configuration whose sections HAProxy cuts elsewhere than at column 0 reloads for any change", () => {
  const head = "global\n    maxconn 100\n\nfrontend f\n    bind :8080\n    use_backend a\n";
  const cfg = (extra: string, indent = "    ") =>
    plain(
      head + "backend a\n    balance roundrobin\n    server s1 10.0.0.1:80\n" +
        `${indent}backend b\n    balance roundrobin\n    server s2 10.0.0.2:80\n` + extra,
    );
  // b's new endpoint is no server of a (`add server a/s3`): the change reloads
  assert.equal(reloadReason(cfg(""), cfg("    server s3 10.0.0.3:80\n")), "structure");
  assert.equal(reloadReason(cfg("", ""), cfg("    server s3 10.0.0.3:80\n")), "structure");
  assert.equal(reloadReason(cfg(""), cfg("", "")), "structure");
  // the same text at column 0: the endpoint is added to b
  assert.deepEqual(
    changes(cfg("", ""), cfg("    server s3 10.0.0.3:80\n", "")).servers.commands.map((c) => c.command),
    ["add server b/s3 10.0.0.3:80", "set server b/s3 state ready"],
  );
  // an indented `defaults` with a `default-server` line (which an added server would not take)
  const defaults = (n: number) =>
    plain(
      head.replace("global", "global\n  defaults\n    default-server ssl verify none\n\nglobal") +
        "backend a\n    balance roundrobin\n" +
        Array.from({ length: n }, (_, i) => `    server s${i + 1} 10.0.0.${i + 1}:80\n`).join(""),
    );
  assert.equal(reloadReason(defaults(1), defaults(2)), "structure");
  // a conditional block, unchanged, elsewhere than the change: all the same
  const block = (address: string) =>
    plain(web().replace("global", ".if 1\n.endif\nglobal").replace("10.0.0.1", address));
  assert.equal(reloadReason(block("10.0.0.1"), block("10.0.0.2")), "structure");
  // a plain configuration keeps its Runtime API changes, also after one that is not
  assert.equal(changes(plain(web()), plain(web(two))).servers.changed, 1);
  assert.equal(changes(plain(web(two)), plain(web())).servers.changed, 1);
});

Deno.test("planApply: a backend takes cookie persistence from a defaults section: its endpoints past its slots reload", () => {
  const cfg = (n: number, defaults: string) =>
    plain(
      buildConfig({
        backends: [{
          name: "web",
          endpoints: Array.from({ length: n }, (_, i) => ({ address: `10.0.5.${i + 1}`, port: 80 })),
          grows: true,
        }],
      }).replace("defaults\n    mode http\n", `defaults\n    mode http\n${defaults}`),
    );
  const cookie = "    cookie SRV insert indirect nocache dynamic\n    dynamic-cookie-key secret\n";
  // an added server would get no dynamic cookie
  assert.equal(reloadReason(cfg(1, cookie), cfg(2, cookie)), "servers");
  assert.equal(reloadReason(cfg(2, cookie), cfg(1, cookie)), "servers");
  assert.equal(reloadReason(cfg(1, "    hash-type consistent\n"), cfg(2, "    hash-type consistent\n")), "servers");
  // the endpoints of its slots still change through the Runtime API
  const moved = cfg(1, cookie).config.replace("10.0.5.1:80", "10.0.5.9:80");
  assert.equal(changes(cfg(1, cookie), plain(moved)).servers.changed, 1);
  // without such defaults it grows
  assert.equal(changes(cfg(1, ""), cfg(2, "")).servers.commands[0].command, "add server web/s2 10.0.5.2:80");
});

Deno.test("planApply: a default-server line after the slot lines, which HAProxy gives to no slot, is given to no added server: a reload", () => {
  const cfg = (n: number, after: string) =>
    plain(
      buildConfig({
        backends: [{
          name: "web",
          endpoints: Array.from({ length: n }, (_, i) => ({ address: `10.0.6.${i + 1}`, port: 80 })),
          grows: true,
        }],
      }).replace("\n\nbackend default-backend", `\n${after}\nbackend default-backend`),
    );
  assert.equal(
    reloadReason(cfg(1, "    default-server ssl verify none\n"), cfg(2, "    default-server ssl verify none\n")),
    "structure",
  );
  // before the slot lines, it is an added server's too
  const before = (n: number) =>
    plain(cfg(n, "").config.replace("    server s1", "    default-server ssl verify none\n    server s1"));
  assert.deepEqual(
    changes(before(1), before(2)).servers.commands[0].command,
    "add server web/s2 10.0.6.2:80 ssl verify none",
  );
});

Deno.test("planApply: slot lines of a growable-looking backend with other options each: any count change reloads", () => {
  const cfg = (...options: string[]) =>
    plain(
      buildConfig({ backends: [{ name: "web", endpoints: [], grows: true }] }).replace(
        "    server s1 127.0.0.1:1 disabled\n",
        options.map((o, i) => `    server s${i + 1} 10.0.7.${i + 1}:80${o}\n`).join(""),
      ),
    );
  const [a, b] = [" send-proxy", ""];
  // s2 gains send-proxy, and s4 would be added with s1's options
  assert.equal(reloadReason(cfg(a, b, b), cfg(a, a, b, b)), "structure");
  assert.equal(reloadReason(cfg(a, b, b), cfg(a, a, b)), "structure");
  assert.equal(reloadReason(cfg(a, b), cfg(a, b, b)), "structure");
  // their addresses still change through the Runtime API
  const moved = cfg(a, b).config.replace("10.0.7.2:80", "10.0.7.9:80");
  assert.equal(changes(cfg(a, b), plain(moved)).servers.changed, 1);
  // the same options on every line: it grows
  assert.equal(
    changes(cfg(a, a), cfg(a, a, a)).servers.commands[0].command,
    "add server web/s3 10.0.7.3:80 send-proxy",
  );
});

Deno.test("planApply: a server HAProxy keeps in maintenance by a disabled the slot lines do not carry first is never set ready", () => {
  const head = "global\n    maxconn 100\n\nfrontend f\n    bind :8080\n    use_backend a\n";
  const cfg = (ip: string, line = `send-proxy disabled`) =>
    plain(
      head + "backend a\n    balance source\n" +
        `    server s1 ${ip}:80 ${line}\n    server s2 127.0.0.1:1 disabled send-proxy\n` +
        "    server s3 127.0.0.1:1 disabled send-proxy\n    server s4 127.0.0.1:1 disabled send-proxy\n",
    );
  assert.equal(reloadReason(cfg("10.0.0.1"), cfg("10.0.0.2")), "structure");
  assert.equal(reloadReason(cfg("10.0.0.1", "send-proxy"), cfg("10.0.0.1")), "structure");
  assert.equal(changes(cfg("10.0.0.1", "send-proxy"), cfg("10.0.0.2", "send-proxy")).servers.changed, 1);
  // a default-server line that disables (or enables) the servers, in the backend or in defaults
  const server = (ip: string, line: string) =>
    plain(web().replace("10.0.0.1", ip).replace("    balance roundrobin\n", `    balance roundrobin\n${line}`));
  assert.equal(
    reloadReason(
      server("10.0.0.1", "    default-server disabled\n"),
      server("10.0.0.2", "    default-server disabled\n"),
    ),
    "servers",
  );
  const defaults = (ip: string, line: string) =>
    plain(web().replace("10.0.0.1", ip).replace("defaults\n    mode http\n", `defaults\n    mode http\n${line}`));
  assert.equal(
    reloadReason(
      defaults("10.0.0.1", "    default-server disabled\n"),
      defaults("10.0.0.2", "    default-server disabled\n"),
    ),
    "servers",
  );
  assert.equal(
    changes(defaults("10.0.0.1", "    default-server check\n"), defaults("10.0.0.2", "    default-server check\n"))
      .servers.changed,
    1,
  );
});
