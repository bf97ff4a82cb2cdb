import assert from "node:assert/strict";
import { cli, type CliIo } from "../../lib/flags/cli.ts";
import type { Config } from "../../lib/flags/config.ts";
import type { ProxySettings } from "../../lib/flags/proxy_settings.ts";
import type { ExporterSettings } from "../../lib/flags/exporter_settings.ts";
import { type OptionSpec, RELEASES, releasesOf, runTable, VERSIONS } from "../../lib/flags/table.ts";

interface Captured {
  code: number;
  out: string;
  err: string;
  ran: Config[];
  proxied: ProxySettings[];
  exported: ExporterSettings[];
}

async function call(argv: string[], env: Record<string, string> = {}): Promise<Captured> {
  const c: Captured = { code: -1, out: "", err: "", ran: [], proxied: [], exported: [] };
  const io: CliIo = {
    stdout: (t) => void (c.out += t),
    stderr: (t) => void (c.err += t),
    env: (n) => env[n],
    run: (config) => (c.ran.push(config), Promise.resolve()),
    proxy: (s) => (c.proxied.push(s), Promise.resolve()),
    exporter: (s) => (c.exported.push(s), Promise.resolve()),
  };
  c.code = await cli(argv, io);
  return c;
}

Deno.test("release selection: --release letter or version, env, default A", async () => {
  assert.equal((await call(["version"])).out, "release A, version 9.0.0\n");
  assert.equal((await call(["--release", "B", "version"])).out, "release B, version 7.0.0-rc.2\n");
  assert.equal((await call(["--release=6.0.0-rc.0", "version"])).out, "release C, version 6.0.0-rc.0\n");
  assert.equal((await call(["--release", "7.0.0-rc.2", "version"])).out, "release B, version 7.0.0-rc.2\n");
  assert.equal((await call(["version"], { INGRESS_CONTROLLER_RELEASE: "C" })).out, "release C, version 6.0.0-rc.0\n");
  assert.equal(
    (await call(["--release", "A", "version"], { INGRESS_CONTROLLER_RELEASE: "C" })).out,
    "release A, version 9.0.0\n",
  );
  const bad = await call(["--release", "D", "version"]);
  assert.equal(bad.code, 2);
  assert.match(bad.err, /^error: invalid value "D" for --release: not a release; use one of A \(9\.0\.0\)/);
  const badEnv = await call(["version"], { INGRESS_CONTROLLER_RELEASE: "8" });
  assert.equal(badEnv.code, 2);
  assert.match(badEnv.err, /\$INGRESS_CONTROLLER_RELEASE/);
});

for (const release of RELEASES) {
  Deno.test(`options (release ${release}): the JSON contract`, async () => {
    const r = await call(["--release", release, "options"]);
    assert.equal(r.code, 0, r.err);
    assert.ok(r.out.endsWith("}\n") && !r.out.slice(0, -1).includes("\n"), "one line");
    const doc = JSON.parse(r.out);
    assert.deepEqual(Object.keys(doc), ["release", "version", "options"]);
    assert.equal(doc.release, release);
    assert.equal(doc.version, VERSIONS[release]);
    const table: Record<string, OptionSpec> = runTable;
    const want = Object.keys(table).filter((n) => n !== "help" && releasesOf(table[n]).includes(release)).sort();
    assert.deepEqual(Object.keys(doc.options).sort(), want);
    for (const [k, v] of Object.entries(doc.options)) {
      const ok = v === null || ["string", "number", "boolean"].includes(typeof v) ||
        (Array.isArray(v) && v.every((x) => typeof x === "string" || (typeof x === "object" && x !== null)));
      assert.ok(ok, `${k}: ${JSON.stringify(v)}`);
    }
    assert.equal(doc.options["resync-period"], "10m0s");
    assert.equal(doc.options["proxy.timeout"], "5s");
    assert.equal(doc.options["v"], 0);
    assert.equal(doc.options["kubeconfig"], null);
  });
}

Deno.test("options: given values in the JSON (durations canonical, sni pairs as objects)", async () => {
  const r = await call([
    "options",
    "--resync-period=90s",
    "--authentication-token-webhook-cache-ttl=0.3s",
    "--tls-sni-cert-key=/etc/hostname,/etc/hostname:a.io,*.b.io",
    "-v",
    "5",
  ]);
  assert.equal(r.code, 0, r.err);
  const o = JSON.parse(r.out).options;
  assert.equal(o["resync-period"], "1m30s");
  assert.equal(o["authentication-token-webhook-cache-ttl"], "300ms");
  assert.deepEqual(o["tls-sni-cert-key"], [{
    certFile: "/etc/hostname",
    keyFile: "/etc/hostname",
    names: ["a.io", "*.b.io"],
  }]);
  assert.equal(o.v, 5);
});

Deno.test("errors: one line on stderr, exit 2 for usage and 1 for setup", async () => {
  const usage = await call(["options", "--ops-address=:1"]);
  assert.equal(usage.code, 2);
  assert.equal(usage.out, "");
  assert.equal(usage.err, "error: --ops-address is not an option of release A; it exists in B\n");
  const setup = await call(["options", "--kubeconfig=/nonexistent"]);
  assert.equal(setup.code, 1);
  assert.equal(setup.err.split("\n").length, 2);
  assert.match(setup.err, /--kubeconfig "\/nonexistent": no such file/);
  const cmd = await call(["frobnicate"]);
  assert.equal(cmd.code, 2);
  assert.match(cmd.err, /unknown command "frobnicate"/);
  const misplaced = await call(["run", "--release", "B"]);
  assert.equal(misplaced.code, 2);
  assert.match(misplaced.err, /--release goes before the command/);
});

Deno.test("run --help / -h: usage on stdout, exit 0, nothing started", async () => {
  for (const h of ["--help", "-h"]) {
    const r = await call(["--release", "B", "run", h]);
    assert.equal(r.code, 0);
    assert.equal(r.ran.length, 0);
    assert.match(r.out, /^Run the ingress controller \(release B, 7\.0\.0-rc\.2\)/);
    assert.match(r.out, /--ops-address string/);
    assert.doesNotMatch(r.out, /--address string|--enable-status-subresource/);
  }
  const root = await call(["--help"]);
  assert.equal(root.code, 0);
  assert.match(root.out, /run +Run the ingress controller/);
  assert.doesNotMatch(root.out, /\bproxy +/, "proxy is hidden");
});

Deno.test("run hands the validated Config to the starter", async () => {
  const r = await call(["--release", "C", "run", "--address=:7000", "--analytics=false"]);
  assert.equal(r.code, 0, r.err);
  assert.equal(r.ran.length, 1);
  assert.equal(r.ran[0].release, "C");
  assert.equal(r.ran[0].get("address"), ":7000");
  assert.equal(r.ran[0].get("analytics"), false);
});

Deno.test("migrate-flags: flags on stdout, notes on stderr", async () => {
  const r = await call(["migrate-flags", "--from", "C", "--to=B", "--address=:1", "--analytics"]);
  assert.equal(r.code, 0, r.err);
  assert.equal(r.out, "--ops-address=:1\n--enable-analytics\n");
  assert.match(r.err, /--address: renamed to --ops-address in release B/);
  const missing = await call(["migrate-flags", "--from", "C", "--rbac"]);
  assert.equal(missing.code, 2);
  assert.match(missing.err, /needs --from R1 and --to R2/);
});

Deno.test("proxy: flags parsed into ProxySettings", async () => {
  const r = await call([
    "proxy",
    "--namespace=ns",
    "--configmap",
    "cm",
    "--bind-address=127.0.0.2",
    "--http-port=8080",
    "--shutdown-drain=5s",
  ]);
  assert.equal(r.code, 0, r.err);
  assert.deepEqual(r.proxied, [{
    kubeconfig: "",
    namespace: "ns",
    configmap: "cm",
    haproxy: "haproxy",
    workDir: "/var/run/ingress-controller",
    bindAddress: "127.0.0.2",
    httpPort: 8080,
    httpsPort: 443,
    statsPort: 56789,
    healthPort: 56791,
    shutdownDrainMs: 5000,
    shutdownTimeoutMs: 30000,
  }]);
  const bad = await call(["proxy", "--stats-port=70000"]);
  assert.equal(bad.code, 2);
  assert.match(bad.err, /--stats-port: must be between 0 and 65535/);
  const help = await call(["proxy", "-h"]);
  assert.match(help.out, /--work-dir string/);
  assert.match(help.out, /--shutdown-drain duration +On SIGTERM: how long the proxy keeps serving .*\(default 10s\)/);
});

Deno.test("exporter: flags parsed into ExporterSettings; bad values are one-line usage errors; hidden", async () => {
  const r = await call([
    "exporter",
    "--proxy.server-metric-fields=4,7",
    "--proxy.timeout=2s",
    "--proxy.scrape-uri=http://127.0.0.1:1234/;csv",
  ]);
  assert.equal(r.code, 0, r.err);
  assert.deepEqual(r.exported, [{
    scrapeUri: "http://127.0.0.1:1234/;csv",
    serverMetricFields: [4, 7],
    timeoutMs: 2000,
    listenAddress: ":56790",
    telemetryPath: "/metrics",
  }]);
  const bad = await call(["exporter", "--proxy.server-metric-fields=4,1000"]);
  assert.equal(bad.code, 2);
  assert.equal(bad.exported.length, 0);
  assert.match(
    bad.err,
    /^error: invalid value "4,1000" for --proxy\.server-metric-fields: "1000" is not a field number/,
  );
  assert.equal(bad.err.split("\n").length, 2, "one line");
  const help = await call(["exporter", "--help"]);
  assert.equal(help.code, 0);
  assert.match(help.out, /ingress-controller exporter \[flags\]/);
  assert.match(help.out, /--proxy\.server-metric-fields string {3}.*\(default "2,3,4,5,6,7,8,9,13,/);
  assert.match(help.out, /--listen-address string {3}.*\(default ":56790"\)/);
  assert.doesNotMatch((await call(["--help"])).out, /exporter/, "hidden from the root help");
  assert.doesNotMatch((await call(["run", "--help"])).out, /--listen-address|--telemetry-path|scrape-uri/);
});
