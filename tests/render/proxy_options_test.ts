import assert from "node:assert/strict";
import { loadTemplates, render, sampleModel } from "../../lib/render/render.ts";
import { validateConfig } from "../../lib/render/validate.ts";
import {
  DEFAULT_PROXY_OPTIONS,
  JSON_LOG_FORMAT,
  type ProxyOptions,
  proxyView,
  sampleRatio,
  threadsForCpuLimit,
} from "../../lib/render/proxy_options.ts";

const templates = await loadTemplates(null);
const all: ProxyOptions = {
  timeouts: { connect: "3s", client: "2m", server: "45s", httpRequest: "5s", tunnel: "2h" },
  maxconn: 20000,
  sslMinVersion: "TLSv1.3",
  sslCiphers: "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256",
  sslCiphersuites: "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384",
  http2: false,
  accessLog: "text",
  accessLogSample: 25,
  defaultCertificate: { file: "ops_default.pem", namespace: "ops", name: "default" },
  threads: 3,
};

Deno.test("proxy options: each reaches its place; the default certificate is the crt-list's first line", () => {
  const r = render(sampleModel(), templates, all);
  for (
    const line of [
      "    maxconn 20000",
      "    nbthread 3",
      "    ssl-default-bind-options ssl-min-ver TLSv1.3 no-tls-tickets",
      "    ssl-default-bind-ciphers ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256",
      "    ssl-default-bind-ciphersuites TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384",
      "    log stdout format raw sample 1:4 local0 err",
      "    timeout connect 3s",
      "    timeout client 2m",
      "    timeout server 45s",
      "    timeout http-request 5s",
      "    timeout tunnel 2h",
      "    option log-separate-errors",
      "    http-request set-log-level err",
    ]
  ) assert.ok(r.config.split("\n").includes(line), line);
  assert.match(r.config, /alpn http\/1\.1$/m);
  assert.match(r.crtList, /^ops_default\.pem !\*\n/);
  assert.ok(r.secrets.some((s) => s.file === "ops_default.pem" && s.namespace === "ops"));
});

Deno.test("proxy options: access-log off leaves no log line; the defaults render the JSON format", () => {
  const off = render(sampleModel(), templates, { ...DEFAULT_PROXY_OPTIONS, accessLog: "off" });
  assert.doesNotMatch(off.config, /^\s+log/m);
  const json = render(sampleModel(), templates);
  assert.ok(json.config.includes(`log-format "${JSON_LOG_FORMAT.replace(/"/g, '\\"')}"`));
  assert.match(json.config, /^ {4}log stdout format raw local0 err$/m);
});

Deno.test("proxy options: the access log is the client frontends' only: not global (HAProxy's notices), not the backends'", () => {
  const config = render(sampleModel(), templates).config;
  const sections = config.split(/\n(?=\S)/);
  const logged = sections.filter((s) => /^ {4}log /m.test(s)).map((s) => s.split(/\s/, 2).join(" "));
  assert.deepEqual(logged, ["frontend http", "frontend https"]);
  for (const name of ["frontend http", "frontend https"]) {
    const section = sections.find((s) => s.startsWith(name))!;
    // raised before any rule that may answer (a redirect, a deny): the line passes the logger's `err`
    const first = section.split("\n").find((l) => /^ {4}http-request /.test(l));
    assert.equal(first, "    http-request set-log-level err", name);
  }
});

Deno.test("proxy options: haproxy -c accepts every combination rendered", async () => {
  for (const o of [all, { ...all, accessLog: "json" as const, http2: true, maxconn: null }, DEFAULT_PROXY_OPTIONS]) {
    const check = await validateConfig(render(sampleModel(), templates, o), { timeoutMs: 20_000 });
    assert.deepEqual(check.errors, []);
  }
});

Deno.test("accept-proxy-protocol: expect-proxy for trusted sources on both public frontends, 32 sources an acl line; haproxy -c accepts it", async () => {
  const many = Array.from({ length: 33 }, (_, i) => ({ family: 4 as const, address: `10.0.${i}.0`, bits: 24 }));
  const o = { ...all, acceptProxy: [...many, { family: 6 as const, address: "2001:db8::", bits: 32 }] };
  const r = render(sampleModel(), templates, o);
  const acls = r.config.split("\n").filter((l) => l.startsWith("    acl ic_proxy_trusted src "));
  assert.deepEqual(acls.map((l) => l.split(" ").length - 7), [32, 2, 32, 2], "http and https, 34 sources each");
  assert.equal(
    r.config.split("\n").filter((l) => l === "    tcp-request connection expect-proxy layer4 if ic_proxy_trusted")
      .length,
    2,
  );
  assert.doesNotMatch(render(sampleModel(), templates, all).config, /expect-proxy/);
  const check = await validateConfig(r, { timeoutMs: 20_000 });
  assert.deepEqual(check.errors, []);
});

Deno.test("proxy options: a value that skipped the parser never reaches the configuration", () => {
  for (
    const bad of [
      { timeouts: { ...all.timeouts, server: "5s\n    bind :1" } },
      { sslCiphers: "ALL\nbind" },
      { maxconn: 0 },
      { accessLogSample: 101 },
      { accessLog: "raw" as ProxyOptions["accessLog"] },
      { defaultCertificate: { file: "../x.pem", namespace: "a", name: "b" } },
      { acceptProxy: [{ family: 4 as const, address: "10.0.0.0 if TRUE", bits: 8 }] },
    ]
  ) assert.throws(() => proxyView({ ...all, ...bad }), /^Error: bug: unchecked proxy setting/);
});

Deno.test("sampleRatio: N of every 100 in HAProxy's smallest ranges", () => {
  assert.equal(sampleRatio(10), "1:10");
  assert.equal(sampleRatio(25), "1:4");
  assert.equal(sampleRatio(30), "1-3:10");
  assert.equal(sampleRatio(37), "1-37:100");
  assert.equal(sampleRatio(100), "1:1");
});

Deno.test("proxy options: threads follow the CPU limit rounded up, 1 to 64; no limit, no nbthread line", () => {
  const cases: [string | undefined, number | null][] = [
    [undefined, null],
    ["100m", 1],
    ["1", 1],
    ["1000m", 1],
    ["1001m", 2],
    ["1.5", 2],
    ["2", 2],
    ["16", 16],
    ["200", 64],
    ["1k", 64],
    ["nonsense", null],
  ];
  for (const [limit, threads] of cases) assert.equal(threadsForCpuLimit(limit), threads, String(limit));
  assert.doesNotMatch(render(sampleModel(), templates).config, /nbthread/);
  assert.throws(() => proxyView({ ...DEFAULT_PROXY_OPTIONS, threads: 65 }), /nbthread/);
  assert.throws(() => proxyView({ ...DEFAULT_PROXY_OPTIONS, threads: 1.5 }), /nbthread/);
});
