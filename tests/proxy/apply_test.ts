/**
 * The applier against a real HAProxy 2.6: endpoint changes through the Runtime API without a
 * reload, backends dropped that nothing names without a reload, structural changes through a
 * verified reload, refused configurations, TLS by SNI,
 * and a stop that leaves no process behind.
 */
import assert from "node:assert/strict";
import http from "node:http";
import { join } from "node:path";
import { HAProxy, parseShowProc } from "../../lib/proxy/haproxy.ts";
import { ensureHaproxy } from "../../lib/dev/localenv/haproxy.ts";
import { registry } from "../../lib/metrics/registry.ts";
import { type Backend, startBackend } from "../../lib/dev/localenv/backend.ts";
import {
  buildConfig,
  get,
  haproxyProcessesFor,
  hostRoutes,
  httpsGet,
  loopbackAddress,
  plain,
  proxyUnderTest,
  testCertificate,
  workerPid,
} from "./fixtures.ts";

async function backends(...names: string[]): Promise<Backend[]> {
  return await Promise.all(names.map((name) => startBackend({ name, host: loopbackAddress() })));
}

const ep = (b: Backend) => ({ address: b.address, port: b.port });

async function counterValue(name: string, labels: Record<string, string>): Promise<number> {
  const m = (await registry.getMetricsAsJSON()).find((x) => x.name === name);
  const v = m?.values.find((x) => Object.entries(labels).every(([k, l]) => x.labels[k] === l));
  return Number(v?.value ?? 0);
}

Deno.test("parseShowProc reads master, current and old workers", () => {
  const info = parseShowProc(
    [
      "#<PID>          <type>          <reloads>       <uptime>        <version>",
      "5916            master          2 [failed: 1]   0d00h00m07s     2.6.12",
      "# workers",
      "6016            worker          1               0d00h00m03s     2.6.12",
      "# old workers",
      "5919            worker          3               0d00h00m09s     2.6.12",
      "# programs",
      "",
    ].join("\n"),
  );
  assert.deepEqual(info, {
    master: { pid: 5916, reloads: 2, failed: 1 },
    workers: [{ pid: 6016, reloads: 1 }],
    oldWorkers: [{ pid: 5919, reloads: 3 }],
  });
  assert.throws(() => parseShowProc("Unknown command\n"), /unexpected/);
});

Deno.test("endpoint-only changes go through the Runtime API: same worker, traffic follows", async () => {
  const [one, two, three] = await backends("one", "two", "three");
  await using p = await proxyUnderTest();
  try {
    const start = await p.applier.apply(plain(buildConfig({ backends: [{ name: "web", endpoints: [ep(one)] }] })));
    assert.equal(start.kind, "start");
    assert.ok(start.ok, start.error ?? "");
    const pid = await workerPid(p.haproxy);
    const reloadsBefore = (await p.haproxy.showProc()).master.reloads;
    assert.equal((await get(p.url, "web.test")).name, "one");

    // Replace the endpoint.
    const runtimeBefore = await counterValue("ingress_controller_proxy_applies_total", { kind: "runtime" });
    const moved = buildConfig({ backends: [{ name: "web", endpoints: [ep(two)] }] });
    const r1 = await p.applier.apply(plain(moved));
    assert.equal(r1.kind, "runtime");
    assert.ok(r1.ok, r1.error ?? "");
    assert.equal(r1.serversChanged, 1);
    assert.equal(await counterValue("ingress_controller_proxy_applies_total", { kind: "runtime" }), runtimeBefore + 1);
    for (let i = 0; i < 4; i++) assert.equal((await get(p.url, "web.test")).name, "two");
    // The file carries the runtime state, for the next reload.
    assert.equal(await Deno.readTextFile(p.haproxy.configPath), moved);

    // Scale up to three endpoints: round robin reaches each of them.
    const r2 = await p.applier.apply(
      plain(buildConfig({ backends: [{ name: "web", endpoints: [ep(one), ep(two), ep(three)] }] })),
    );
    assert.equal(r2.kind, "runtime");
    assert.ok(r2.ok, r2.error ?? "");
    const seen = new Set<string | null>();
    for (let i = 0; i < 9; i++) seen.add((await get(p.url, "web.test")).name);
    assert.deepEqual([...seen].sort(), ["one", "three", "two"]);
    const state = await p.haproxy.runtime("show servers state web");
    assert.equal(state.split("\n").filter((l) => / web \d+ s\d+ /.test(l)).length, 4, state);

    // Scale down to one again.
    const r3 = await p.applier.apply(plain(buildConfig({ backends: [{ name: "web", endpoints: [ep(three)] }] })));
    assert.equal(r3.kind, "runtime");
    assert.ok(r3.ok, r3.error ?? "");
    for (let i = 0; i < 4; i++) assert.equal((await get(p.url, "web.test")).name, "three");

    // To an IPv6 endpoint and back, still at runtime.
    const six = await startBackend({ name: "six", host: "::1" });
    try {
      const r6 = await p.applier.apply(plain(buildConfig({ backends: [{ name: "web", endpoints: [ep(six)] }] })));
      assert.deepEqual([r6.kind, r6.ok], ["runtime", true], r6.error ?? "");
      assert.equal((await get(p.url, "web.test")).name, "six");
      const back = await p.applier.apply(plain(buildConfig({ backends: [{ name: "web", endpoints: [ep(three)] }] })));
      assert.deepEqual([back.kind, back.ok], ["runtime", true], back.error ?? "");
      assert.equal((await get(p.url, "web.test")).name, "three");
    } finally {
      await six.close();
    }

    // No reload happened: the same worker, the same reload count.
    assert.equal(await workerPid(p.haproxy), pid);
    assert.equal((await p.haproxy.showProc()).master.reloads, reloadsBefore);

    // Unchanged input: nothing to do.
    const same = await p.applier.apply(plain(buildConfig({ backends: [{ name: "web", endpoints: [ep(three)] }] })));
    assert.deepEqual([same.kind, same.ok], ["none", true]);

    // A later reload keeps the runtime-set endpoint because the file carries it.
    const r4 = await p.applier.apply(plain(buildConfig({
      backends: [{ name: "web", endpoints: [ep(three)] }],
      frontendExtra: ["    http-response set-header X-Gen 4"],
    })));
    assert.equal(r4.kind, "reload");
    assert.ok(r4.ok, r4.error ?? "");
    assert.notEqual(await workerPid(p.haproxy), pid);
    const res = await get(p.url, "web.test");
    assert.equal(res.name, "three");
    assert.equal(res.headers["x-gen"], "4");
  } finally {
    await p.close();
    await Promise.all([one, two, three].map((b) => b.close()));
  }
});

/** The servers HAProxy runs in `backend` (name → address:port, `maint` when in maintenance), from `show servers state`. */
async function serversOf(h: HAProxy, backend: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const line of (await h.runtime(`show servers state ${backend}`)).split("\n")) {
    const f = line.split(" ");
    // be_id be_name srv_id srv_name srv_addr srv_op_state srv_admin_state … srv_port (19th)
    if (f[1] !== backend || !/^s\d+$/.test(f[3] ?? "")) continue;
    out.set(f[3], (Number(f[6]) & 1) === 1 ? "maint" : `${f[4]}:${f[18]}`);
  }
  return out;
}

async function namesSeen(url: string, host: string, requests: number): Promise<string[]> {
  const seen = new Set<string>();
  for (let i = 0; i < requests; i++) seen.add((await get(url, host)).name ?? "?");
  return [...seen].sort();
}

Deno.test("a growable backend: 1 slot grows to 3 endpoints and shrinks back through add server, no reload; the next reload has the configuration's slots", async () => {
  const [one, two, three, four] = await backends("one", "two", "three", "four");
  await using p = await proxyUnderTest();
  const config = (...bs: Backend[]) =>
    plain(buildConfig({ backends: [{ name: "web", endpoints: bs.map(ep), grows: true }], params: "" }));
  try {
    const start = await p.applier.apply(config(one));
    assert.deepEqual([start.kind, start.ok], ["start", true], start.error ?? "");
    assert.equal(
      p.haproxy.configPath && (await Deno.readTextFile(p.haproxy.configPath)).match(/server s\d/g)?.length,
      1,
    );
    const pid = await workerPid(p.haproxy);
    const reloads = (await p.haproxy.showProc()).master.reloads;

    // 1 → 3 endpoints: two servers added
    const up = await p.applier.apply(config(one, two, three));
    assert.deepEqual([up.kind, up.ok], ["runtime", true], up.error ?? "");
    assert.ok(up.serversChanged >= 2);
    assert.deepEqual(await namesSeen(p.url, "web.test", 9), ["one", "three", "two"]);
    const target = (b: Backend) => `${b.address}:${b.port}`;
    const upServers = await serversOf(p.haproxy, "web");
    assert.deepEqual([...upServers.keys()], ["s1", "s2", "s3"]);
    assert.deepEqual([...upServers.values()].sort(), [one, two, three].map(target).sort());

    // 3 → 1: the two others parked, not removed
    const down = await p.applier.apply(config(two));
    assert.deepEqual([down.kind, down.ok], ["runtime", true], down.error ?? "");
    assert.deepEqual(await namesSeen(p.url, "web.test", 6), ["two"]);
    assert.deepEqual([...(await serversOf(p.haproxy, "web")).values()].filter((v) => v === "maint").length, 2);

    // 1 → 2: a parked server is reused (nothing added: still 3 servers)
    const again = await p.applier.apply(config(two, four));
    assert.deepEqual([again.kind, again.ok], ["runtime", true], again.error ?? "");
    assert.deepEqual(await namesSeen(p.url, "web.test", 8), ["four", "two"]);
    assert.equal((await serversOf(p.haproxy, "web")).size, 3);

    // the lone endpoint replaced: served throughout by a spare
    await p.applier.apply(config(two));
    const moved = await p.applier.apply(config(three));
    assert.deepEqual([moved.kind, moved.ok], ["runtime", true], moved.error ?? "");
    assert.deepEqual(await namesSeen(p.url, "web.test", 4), ["three"]);

    // no reload so far
    assert.equal(await workerPid(p.haproxy), pid);
    assert.equal((await p.haproxy.showProc()).master.reloads, reloads);

    // a structural change reloads: HAProxy then has the configuration's slots only, and grows again
    const reload = await p.applier.apply(plain(buildConfig({
      backends: [{ name: "web", endpoints: [ep(three)], grows: true }],
      frontendExtra: ["    http-response set-header X-Gen 2"],
    })));
    assert.deepEqual([reload.kind, reload.ok], ["reload", true], reload.error ?? "");
    assert.equal((await serversOf(p.haproxy, "web")).size, 1);
    const regrow = await p.applier.apply(plain(buildConfig({
      backends: [{ name: "web", endpoints: [ep(three), ep(one)], grows: true }],
      frontendExtra: ["    http-response set-header X-Gen 2"],
    })));
    assert.deepEqual([regrow.kind, regrow.ok], ["runtime", true], regrow.error ?? "");
    assert.deepEqual(await namesSeen(p.url, "web.test", 6), ["one", "three"]);
  } finally {
    await p.close();
    await Promise.all([one, two, three, four].map((b) => b.close()));
  }
});

Deno.test("servers added to a growable backend get its slot line's options (TLS to the backend), which HAProxy 2.6 takes at run time", async () => {
  const bs = await backends("t1", "t2", "t3");
  await using p = await proxyUnderTest();
  const params = "send-proxy-v2 ssl verify none sni str(api.example.com) alpn http/1.1";
  const config = (n: number) =>
    plain(buildConfig({ backends: [{ name: "web", endpoints: bs.slice(0, n).map(ep), grows: true }], params }));
  try {
    assert.ok((await p.applier.apply(config(1))).ok);
    const grown = await p.applier.apply(config(3));
    assert.deepEqual([grown.kind, grown.ok], ["runtime", true], grown.error ?? "");
    const state = await p.haproxy.runtime("show servers state web");
    // srv_use_ssl (21st field) is 1 for every server, the added ones too
    const ssl = state.split("\n").filter((l) => / web \d+ s\d+ /.test(l)).map((l) => l.split(" ")[20]);
    assert.deepEqual(ssl, ["1", "1", "1"], state);
  } finally {
    await p.close();
    await Promise.all(bs.map((b) => b.close()));
  }
});

Deno.test("balance source cannot take added servers: endpoints past its slots reload; roundrobin past 4 slots (an older controller's) grows", async () => {
  const bs = await backends("b1", "b2", "b3", "b4", "b5");
  await using p = await proxyUnderTest();
  const config = (balance: string, n: number) =>
    plain(buildConfig({ backends: [{ name: "web", endpoints: bs.slice(0, n).map(ep), balance }] }));
  try {
    assert.ok((await p.applier.apply(config("source", 1))).ok);
    const within = await p.applier.apply(config("source", 4));
    assert.deepEqual([within.kind, within.ok], ["runtime", true], within.error ?? "");
    const past = await p.applier.apply(config("source", 5));
    assert.deepEqual([past.kind, past.ok, past.reason], ["reload", true, "structure"], past.error ?? "");
    assert.equal((await serversOf(p.haproxy, "web")).size, 8);
    assert.equal((await get(p.url, "web.test")).status, 200);

    const rr = await p.applier.apply(config("roundrobin", 1));
    assert.deepEqual([rr.kind, rr.ok], ["reload", true], rr.error ?? "");
    const pid = await workerPid(p.haproxy);
    const grown = await p.applier.apply(config("roundrobin", 5));
    assert.deepEqual([grown.kind, grown.ok], ["runtime", true], grown.error ?? "");
    assert.equal((await serversOf(p.haproxy, "web")).size, 8, "s5…s8 added, s6…s8 in maintenance");
    assert.deepEqual(await namesSeen(p.url, "web.test", 15), ["b1", "b2", "b3", "b4", "b5"]);
    assert.equal(await workerPid(p.haproxy), pid);
  } finally {
    await p.close();
    await Promise.all(bs.map((b) => b.close()));
  }
});

Deno.test("a structural change reloads through the master socket and the new route is served", async () => {
  const [web, api] = await backends("web", "api");
  await using p = await proxyUnderTest();
  try {
    assert.ok((await p.applier.apply(plain(buildConfig({ backends: [{ name: "web", endpoints: [ep(web)] }] })))).ok);
    const pid = await workerPid(p.haproxy);
    assert.equal((await get(p.url, "api.test")).status, 404);

    const r = await p.applier.apply(plain(buildConfig({
      backends: [{ name: "web", endpoints: [ep(web)] }, { name: "api", endpoints: [ep(api)] }],
    })));
    assert.equal(r.kind, "reload");
    assert.ok(r.ok, r.error ?? "");
    assert.notEqual(await workerPid(p.haproxy), pid);
    assert.equal((await get(p.url, "api.test")).name, "api");
    assert.equal((await get(p.url, "web.test")).name, "web");
  } finally {
    await p.close();
    await web.close();
    await api.close();
  }
});

Deno.test("a backend dropped that nothing names: maps through the Runtime API, no reload; HAProxy keeps it, in maintenance, until the next reload", async () => {
  const [web, api, old] = await backends("web", "api", "old");
  await using p = await proxyUnderTest();
  const state = (bs: Record<string, Backend>, routes: Record<string, string>, frontendExtra?: string[]) => {
    const config = buildConfig({
      backends: Object.entries(bs).map(([name, b]) => ({ name, endpoints: [ep(b)] })),
      routing: "maps",
      frontendExtra,
    });
    return { ...plain(config), maps: new Map([["routes-exact.map" as const, hostRoutes(routes)]]) };
  };
  const servers = async (backend: string) =>
    (await p.haproxy.runtime(`show servers state ${backend}`)).split("\n").filter((l) => / s\d+ /.test(l))
      .map((l) => l.split(" ")).map((f) => `${f[3]} ${f[4]} maint=${Number(f[6]) & 1}`); // srv_admin_state: 1 = maintenance
  try {
    const all = state({ web, api, old }, { "web.test": "web", "api.test": "api", "old.test": "old" });
    const start = await p.applier.apply(all);
    assert.deepEqual([start.kind, start.ok], ["start", true], start.error ?? "");
    const pid = await workerPid(p.haproxy);
    const reloads = (await p.haproxy.showProc()).master.reloads;
    assert.equal((await get(p.url, "old.test")).name, "old");
    assert.deepEqual(await servers("old"), [
      `s1 ${old.address} maint=0`,
      "s2 127.0.0.1 maint=1",
      "s3 127.0.0.1 maint=1",
      "s4 127.0.0.1 maint=1",
    ]);

    // old.test moved to the api backend; the old backend is gone from the configuration
    const moved = state({ web, api }, { "web.test": "web", "api.test": "api", "old.test": "api" });
    const r = await p.applier.apply(moved);
    assert.deepEqual([r.kind, r.ok, r.backendsDropped], ["runtime", true, 1], r.error ?? "");
    for (let i = 0; i < 4; i++) assert.equal((await get(p.url, "old.test")).name, "api");
    assert.equal((await get(p.url, "web.test")).name, "web");
    assert.equal(await workerPid(p.haproxy), pid, "the same worker");
    assert.equal((await p.haproxy.showProc()).master.reloads, reloads, "no reload");
    // The running HAProxy still has the old backend, unused, its live server in maintenance.
    assert.deepEqual((await servers("old"))[0], `s1 ${old.address} maint=1`);
    // The files are the new configuration's, for the next reload.
    assert.equal(await Deno.readTextFile(p.haproxy.configPath), moved.config);
    assert.equal(await Deno.readTextFile(join(p.certDir, "routes-exact.map")), moved.maps.get("routes-exact.map"));

    // Back to the old backend: a backend added is read only with the configuration, a reload.
    const back = await p.applier.apply(all);
    assert.deepEqual([back.kind, back.ok, back.reason], ["reload", true, "structure"], back.error ?? "");
    assert.equal((await get(p.url, "old.test")).name, "old");
    // After a reload without it, HAProxy has no such backend any more.
    const dropped = await p.applier.apply(moved);
    assert.deepEqual([dropped.kind, dropped.ok], ["runtime", true], dropped.error ?? "");
    const reload = await p.applier.apply(
      state({ web, api }, { "old.test": "api" }, ["    http-response set-header X-Gen 2"]),
    );
    assert.deepEqual([reload.kind, reload.ok], ["reload", true], reload.error ?? "");
    assert.match(await p.haproxy.runtime("show servers state old"), /Can't find backend/);
    assert.equal((await get(p.url, "old.test")).name, "api");

    // A backend dropped while the maps still route to it: a reload (then HAProxy no longer has it).
    const stillRouted = state({ web }, { "web.test": "web", "old.test": "api" }, [
      "    http-response set-header X-Gen 2",
    ]);
    const s2 = await p.applier.apply(stillRouted);
    assert.deepEqual([s2.kind, s2.reason], ["reload", "structure"], s2.error ?? "");
  } finally {
    await p.close();
    await Promise.all([web, api, old].map((b) => b.close()));
  }
});

Deno.test("an invalid configuration is refused by haproxy -c and the last good one keeps serving", async () => {
  const [web] = await backends("web");
  await using p = await proxyUnderTest();
  try {
    const good = buildConfig({ backends: [{ name: "web", endpoints: [ep(web)] }] });
    assert.ok((await p.applier.apply(plain(good))).ok);
    const pid = await workerPid(p.haproxy);
    const failuresBefore = await counterValue("ingress_controller_proxy_apply_failures_total", { stage: "check" });

    const bad = buildConfig({
      backends: [{ name: "web", endpoints: [ep(web)] }],
      frontendExtra: ["    bogus-directive x"],
    });
    const r = await p.applier.apply(plain(bad));
    assert.equal(r.ok, false);
    assert.equal(r.stage, "check");
    assert.match(r.error ?? "", /bogus-directive/);
    assert.equal(
      await counterValue("ingress_controller_proxy_apply_failures_total", { stage: "check" }),
      failuresBefore + 1,
    );
    assert.equal(await Deno.readTextFile(p.haproxy.configPath), good, "the file on disk is still the good one");
    assert.equal(await workerPid(p.haproxy), pid, "no reload");
    assert.equal((await get(p.url, "web.test")).name, "web");
    assert.equal(p.applier.current?.config, good);

    // A config that passes haproxy -c but cannot load (its port is taken): the reload fails,
    // the old worker keeps serving and the good files are put back.
    const blocker = Deno.listen({ hostname: p.bind, port: 0 });
    try {
      const taken = (blocker.addr as Deno.NetAddr).port;
      const unloadable = buildConfig({ backends: [{ name: "web", endpoints: [ep(web)] }] }) +
        `\nfrontend taken\n    bind ${p.bind}:${taken}\n    default_backend web\n`;
      const r2 = await p.applier.apply(plain(unloadable));
      assert.equal(r2.ok, false);
      assert.equal(r2.stage, "reload");
      assert.match(r2.error ?? "", /ALERT/);
      assert.equal(await Deno.readTextFile(p.haproxy.configPath), good);
      assert.equal(await workerPid(p.haproxy), pid);
      assert.equal((await get(p.url, "web.test")).name, "web");
    } finally {
      blocker.close();
    }

    // And the next good change still applies.
    const r3 = await p.applier.apply(plain(buildConfig({
      backends: [{ name: "web", endpoints: [ep(web)] }],
      frontendExtra: ["    http-response set-header X-After-Failure yes"],
    })));
    assert.ok(r3.ok, r3.error ?? "");
    assert.equal(r3.kind, "reload");
  } finally {
    await p.close();
    await web.close();
  }
});

Deno.test("TLS: PEMs and crt-list are written before the config; SNI picks the certificate; keys are 0600", async () => {
  const [web, api] = await backends("web", "api");
  await using p = await proxyUnderTest();
  try {
    const webCert = await testCertificate("web.test");
    const apiCert = await testCertificate("api.test");
    const pems = new Map([
      ["ns_web-tls.pem", webCert.certPem + webCert.keyPem],
      ["ns_api-tls.pem", apiCert.certPem + apiCert.keyPem],
    ]);
    const config = buildConfig({
      backends: [{ name: "web", endpoints: [ep(web)] }, { name: "api", endpoints: [ep(api)] }],
      tls: true,
    });
    const crtList = "ns_api-tls.pem api.test\nns_web-tls.pem web.test\n";
    const r = await p.applier.apply({ config, crtList, pems });
    assert.ok(r.ok, r.error ?? "");
    assert.equal((await Deno.stat(join(p.certDir, "ns_web-tls.pem"))).mode! & 0o777, 0o600);
    assert.match(await httpsGet(p.bind, p.httpsPort, "web.test", webCert.caPem), /"name":"web"/);
    assert.match(await httpsGet(p.bind, p.httpsPort, "api.test", apiCert.caPem), /"name":"api"/);
    // The web certificate is not trusted for api.test: proves SNI chose the certificate.
    await assert.rejects(
      httpsGet(p.bind, p.httpsPort, "api.test", webCert.caPem),
      /invalid peer certificate: UnknownIssuer/,
    );

    // Removing a certificate (a crt-list change) is a reload, and the old PEM of a removed host goes.
    const webCert2 = await testCertificate("web.test");
    const r2 = await p.applier.apply({
      config: buildConfig({ backends: [{ name: "web", endpoints: [ep(web)] }], tls: true }),
      crtList: "ns_web-tls.pem web.test\n",
      pems: new Map([["ns_web-tls.pem", webCert2.certPem + webCert2.keyPem]]),
    });
    assert.equal(r2.kind, "reload");
    assert.ok(r2.ok, r2.error ?? "");
    assert.match(await httpsGet(p.bind, p.httpsPort, "web.test", webCert2.caPem), /"name":"web"/);
    await assert.rejects(Deno.stat(join(p.certDir, "ns_api-tls.pem")), Deno.errors.NotFound);

    // A broken key never replaces the working one.
    const r3 = await p.applier.apply({
      config: buildConfig({ backends: [{ name: "web", endpoints: [ep(web)] }], tls: true }),
      crtList: "ns_web-tls.pem web.test\n",
      pems: new Map([["ns_web-tls.pem", webCert2.certPem + apiCert.keyPem]]),
    });
    assert.equal(r3.ok, false);
    assert.equal(r3.stage, "check");
    assert.equal(await Deno.readTextFile(join(p.certDir, "ns_web-tls.pem")), webCert2.certPem + webCert2.keyPem);
    assert.match(await httpsGet(p.bind, p.httpsPort, "web.test", webCert2.caPem), /"name":"web"/);
  } finally {
    await p.close();
    await web.close();
    await api.close();
  }
});

Deno.test("stop leaves no haproxy process; a failed start is reported", async () => {
  const [web] = await backends("web");
  const p = await proxyUnderTest();
  try {
    assert.ok((await p.applier.apply(plain(buildConfig({ backends: [{ name: "web", endpoints: [ep(web)] }] })))).ok);
    // Keep a connection open across a reload so there is an old worker too.
    const agent = new http.Agent({ keepAlive: true });
    assert.equal((await get(p.url, "web.test", agent)).name, "web");
    const r = await p.applier.apply(plain(buildConfig({
      backends: [{ name: "web", endpoints: [ep(web)] }],
      frontendExtra: ["    http-response set-header X-Gen 2"],
    })));
    assert.ok(r.ok, r.error ?? "");
    assert.ok((await haproxyProcessesFor(p.workDir)).length >= 2);
    await p.haproxy.stop();
    agent.destroy();
    assert.equal(p.haproxy.running, false);
    assert.deepEqual(await haproxyProcessesFor(p.workDir), []);
  } finally {
    await p.close();
    await web.close();
  }

  // Port already taken: the start fails with HAProxy's alert, and nothing is left running.
  await using q = await proxyUnderTest();
  const blocker = Deno.listen({ hostname: q.bind, port: q.httpPort });
  try {
    const r = await q.applier.apply(plain(buildConfig({ backends: [{ name: "web", endpoints: [] }] })));
    assert.equal(r.ok, false);
    assert.equal(r.stage, "start");
    assert.match(r.error ?? "", /ALERT|bind/i);
    assert.equal(q.haproxy.running, false);
    assert.deepEqual(await haproxyProcessesFor(q.workDir), []);
  } finally {
    blocker.close();
  }
});

Deno.test("a reload lets the old worker finish a request in flight, then the old worker exits", async () => {
  const address = loopbackAddress();
  let release: () => void = () => {};
  const released = new Promise<void>((r) => release = r);
  let arrived: () => void = () => {};
  const requestArrived = new Promise<void>((r) => arrived = r);
  const slow = Deno.serve({ hostname: address, port: 0, onListen: () => {} }, async () => {
    arrived();
    await released;
    return Response.json({ name: "slow" });
  });
  await using p = await proxyUnderTest();
  try {
    const endpoints = [{ address, port: slow.addr.port }];
    const gen = (n: number) =>
      plain(
        buildConfig({
          backends: [{ name: "web", endpoints }],
          frontendExtra: [`    http-response set-header X-Gen ${n}`],
        }),
      );
    assert.ok((await p.applier.apply(gen(0))).ok);
    const oldPid = await workerPid(p.haproxy);
    const inFlight = get(p.url, "web.test");
    await requestArrived;

    const r = await p.applier.apply(gen(1));
    assert.ok(r.ok, r.error ?? "");
    const during = await p.haproxy.showProc();
    assert.deepEqual(during.oldWorkers.map((w) => w.pid), [oldPid], "the old worker still runs for its request");
    assert.notEqual(during.workers[0].pid, oldPid);

    release();
    const answer = await inFlight;
    assert.equal(answer.status, 200);
    assert.equal(answer.name, "slow");
    assert.equal(answer.headers["x-gen"], "0", "answered by the old worker with the old configuration");
    for (let i = 0; i < 200 && (await p.haproxy.showProc()).oldWorkers.length > 0; i++) {
      await new Promise((res) => setTimeout(res, 25));
    }
    assert.deepEqual((await p.haproxy.showProc()).oldWorkers, []);
    assert.equal((await get(p.url, "web.test")).headers["x-gen"], "1");
  } finally {
    release();
    await p.close();
    await slow.shutdown();
  }
});

Deno.test("when the Runtime API fails, the endpoint change is applied with a reload instead", async () => {
  const [one, two] = await backends("one", "two");
  await using p = await proxyUnderTest();
  try {
    assert.ok((await p.applier.apply(plain(buildConfig({ backends: [{ name: "web", endpoints: [ep(one)] }] })))).ok);
    const pid = await workerPid(p.haproxy);
    const runtimeFailures = await counterValue("ingress_controller_proxy_apply_failures_total", { stage: "runtime" });
    // The socket file is gone: the Runtime API cannot be reached. (A reload does not bring it back:
    // the new worker takes the bound socket over from the old one. Every endpoint change then
    // falls back to a reload, which is slower but correct.)
    await Deno.remove(p.haproxy.runtimeSocket);
    const r = await p.applier.apply(plain(buildConfig({ backends: [{ name: "web", endpoints: [ep(two)] }] })));
    assert.deepEqual([r.kind, r.ok], ["reload", true], r.error ?? "");
    assert.equal(
      await counterValue("ingress_controller_proxy_apply_failures_total", { stage: "runtime" }),
      runtimeFailures + 1,
    );
    assert.notEqual(await workerPid(p.haproxy), pid);
    assert.equal((await get(p.url, "web.test")).name, "two");
  } finally {
    await p.close();
    await Promise.all([one.close(), two.close()]);
  }
});

Deno.test("a Runtime API change refused half-way whose reload is refused too: the next apply reloads, a revert to the state applied included", async () => {
  const [one, two] = await backends("one", "two");
  await using p = await proxyUnderTest();
  try {
    const cert = await testCertificate("web.test");
    const other = await testCertificate("other.test");
    const state = (b: Backend, pem: string) => ({
      config: buildConfig({ backends: [{ name: "web", endpoints: [ep(b)] }], tls: true }),
      crtList: "ns_web-tls.pem web.test\n",
      pems: new Map([["ns_web-tls.pem", pem]]),
    });
    const good = state(one, cert.certPem + cert.keyPem);
    assert.ok((await p.applier.apply(good)).ok);
    assert.equal((await get(p.url, "web.test")).name, "one");
    // The endpoint moves (slots go first), then `set ssl cert` refuses a key that is not the
    // certificate's, and so does the reload's check: HAProxy runs the new endpoint, not the state applied.
    const bad = await p.applier.apply(state(two, cert.certPem + other.keyPem));
    assert.deepEqual([bad.kind, bad.ok, bad.stage, bad.reason], ["reload", false, "check", "runtime failed"]);
    assert.equal((await get(p.url, "web.test")).name, "two");
    // Back to the state applied: not "none", a reload puts HAProxy on it.
    const back = await p.applier.apply(good);
    assert.deepEqual([back.kind, back.ok, back.reason], ["reload", true, "runtime incomplete"], back.error ?? "");
    for (let i = 0; i < 4; i++) assert.equal((await get(p.url, "web.test")).name, "one");
    // Trusted again: the same state is nothing to do.
    assert.deepEqual([(await p.applier.apply(good)).kind], ["none"]);
  } finally {
    await p.close();
    await Promise.all([one.close(), two.close()]);
  }
});

Deno.test("a haproxy left running on the work dir by an earlier run is stopped before the new one starts", async () => {
  const [web] = await backends("web");
  await using p = await proxyUnderTest();
  try {
    assert.ok((await p.applier.apply(plain(buildConfig({ backends: [{ name: "web", endpoints: [ep(web)] }] })))).ok);
    const leftover = await haproxyProcessesFor(p.workDir);
    assert.ok(leftover.length >= 2);
    // A new proxy process on the same work dir (the old one "died" without stopping haproxy).
    const second = new HAProxy({
      binary: await ensureHaproxy(),
      workDir: p.workDir,
      bindAddress: p.bind,
      httpPort: p.httpPort,
      httpsPort: p.httpsPort,
      statsPort: p.statsPort,
      runtimeSocket: p.haproxy.runtimeSocket,
      certDir: p.certDir,
    });
    try {
      await second.start();
      const now = await haproxyProcessesFor(p.workDir);
      assert.deepEqual(now.filter((pid) => leftover.includes(pid)), [], "the earlier haproxy is gone");
      assert.equal((await get(p.url, "web.test")).name, "web");
    } finally {
      await second.stop();
    }
    assert.deepEqual(await haproxyProcessesFor(p.workDir), []);
  } finally {
    await p.close();
    await web.close();
  }
});
