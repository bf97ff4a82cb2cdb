import assert from "node:assert/strict";
import {
  dedicatedFrontendData,
  defaultGlobalSettings,
  isSettingKey,
  parseGlobalSettings,
} from "../../lib/controller/global_settings.ts";
import { parseClassParams } from "../../lib/controller/class_params.ts";

const parse = (data: Record<string, string>) => parseGlobalSettings(data, defaultGlobalSettings, "global", "ops");

Deno.test("global settings: every key parsed", () => {
  const { settings, problems } = parse({
    "timeout-connect": "3s",
    "timeout-client": "2m",
    "timeout-server": "45s",
    "timeout-http-request": "5s",
    "timeout-tunnel": "2h",
    "max-connections": "20000",
    "ssl-min-version": "TLSv1.3",
    "ssl-ciphers": "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256",
    "ssl-ciphersuites": "TLS_AES_128_GCM_SHA256",
    "http2": "false",
    "access-log": "text",
    "access-log-sample": "25",
    "server-header": "nginx",
    "default-certificate": "other/wildcard",
    "nginx-compat": "true",
    "annotation-risk-limit": "high",
    "namespace-ownership": "InterNamespaceAllowed",
    "pinned-hosts": "shop.example.com=shop, *.bank.example=bank,*=edge",
    "dedicated-proxies": "false",
    "load-balance": "leastconn",
  });
  assert.deepEqual(problems, []);
  assert.deepEqual(settings, {
    proxy: {
      timeouts: { connect: "3s", client: "2m", server: "45s", httpRequest: "5s", tunnel: "2h" },
      maxconn: 20000,
      sslMinVersion: "TLSv1.3",
      sslCiphers: "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256",
      sslCiphersuites: "TLS_AES_128_GCM_SHA256",
      http2: false,
      accessLog: "text",
      accessLogSample: 25,
      serverHeader: "nginx",
    },
    defaultCertificateRef: "other/wildcard",
    nginxCompat: true,
    annotationRiskLimit: "high",
    ownership: {
      mode: "InterNamespaceAllowed",
      pins: [
        { host: "shop.example.com", namespace: "shop" },
        { host: "*.bank.example", namespace: "bank" },
        { host: "*", namespace: "edge" },
      ],
    },
    dedicatedProxies: false,
    // Timeouts are also the global layer of the annotations of the same name.
    annotations: {
      "load-balance": "leastconn",
      "timeout-client": "2m",
      "timeout-connect": "3s",
      "timeout-http-request": "5s",
      "timeout-server": "45s",
      "timeout-tunnel": "2h",
    },
  });
  assert.equal(parse({ "default-certificate": "tls" }).settings.defaultCertificateRef, "ops/tls");
});

Deno.test("global settings: a bad value keeps that key's default and is reported; the others apply", () => {
  const hostile = {
    "timeout-server": "5s\n    http-request deny",
    "max-connections": "0",
    "ssl-min-version": "SSLv3",
    "ssl-ciphers": "ALL\n    bind :1",
    "http2": "yes",
    "access-log": '"%[src]"',
    "access-log-sample": "0",
    "default-certificate": "a/b/c",
    "annotation-risk-limit": "extreme",
    "dedicated-proxies": "no",
    "hsts": "maybe",
    "no-such-key": "1",
    "namespace-ownership": "Loose",
    "pinned-hosts": "shop.example.com=Shop",
    "canary": "true",
    "proxy": "dedicated",
  };
  const { settings, problems } = parse({ ...hostile, "timeout-client": "30s" });
  assert.deepEqual(problems.map((p) => p.key).sort(), Object.keys(hostile).sort());
  for (const p of problems) assert.doesNotMatch(p.message, /\n/, "one line");
  assert.match(problems.find((p) => p.key === "max-connections")!.message, /^max-connections: "0" .*default applies/);
  assert.deepEqual(settings.proxy, {
    ...defaultGlobalSettings.proxy,
    timeouts: { ...defaultGlobalSettings.proxy.timeouts, client: "30s" },
  });
  assert.equal(settings.defaultCertificateRef, null);
  assert.equal(settings.annotationRiskLimit, null);
  assert.deepEqual(settings.ownership, defaultGlobalSettings.ownership);
  assert.match(problems.find((p) => p.key === "canary")!.message, /only on an Ingress/);
  // Without the key (or with a bad value) Ingresses may still ask for a proxy of their own.
  assert.equal(settings.dedicatedProxies, true);
  assert.equal(defaultGlobalSettings.dedicatedProxies, true);
  assert.deepEqual(settings.annotations, { "timeout-client": "30s" });
});

Deno.test("class parameters override the global values for the same keys; the rest stays global", () => {
  const global = parse({ "max-connections": "100", "access-log": "json", "ssl-min-version": "TLSv1.3" }).settings;
  const { settings, problems } = parseGlobalSettings(
    {
      "max-connections": "200",
      "access-log": "off",
      "annotation-risk-limit": "low",
      "dedicated-proxies": "false",
      "replicas": "2",
      "access-log-sample": "x",
    },
    global,
    "class",
    "ops",
  );
  assert.equal(settings.proxy.maxconn, 200);
  assert.equal(settings.proxy.accessLog, "off");
  assert.equal(settings.proxy.sslMinVersion, "TLSv1.3");
  assert.equal(settings.proxy.accessLogSample, 100);
  // Global-only key refused in a class; the class's other keys (replicas) are class_params.ts's.
  assert.deepEqual(problems.map((p) => p.key), ["access-log-sample", "annotation-risk-limit", "dedicated-proxies"]);
  assert.equal(settings.dedicatedProxies, true, "a class cannot turn dedicated proxies off (or on)");
  assert.match(problems[0].message, /global value applies/);
  assert.deepEqual(parseClassParams({ "replicas": "2", "access-log": "off", "hsts": "true" }).problems, []);
  assert.ok(isSettingKey("access-log") && isSettingKey("hsts") && !isSettingKey("replicas"));
});

Deno.test("accept-proxy-protocol: trusted sources from the global ConfigMap, replaced by a class's; a bad list is reported once and the lower layer applies", () => {
  const global = parse({ "accept-proxy-protocol": "10.0.0.0/8, 2001:db8::/32" });
  assert.deepEqual(global.problems, []);
  assert.deepEqual(global.settings.proxy.acceptProxy, [
    { family: 4, address: "10.0.0.0", bits: 8 },
    { family: 6, address: "2001:db8::", bits: 32 },
  ]);
  const cls = parseGlobalSettings({ "accept-proxy-protocol": "192.0.2.10" }, global.settings, "class", "ops");
  assert.deepEqual(cls.settings.proxy.acceptProxy, [{ family: 4, address: "192.0.2.10", bits: 32 }]);
  const bad = parseGlobalSettings(
    { "accept-proxy-protocol": "10.0.0.0/8 if TRUE\n    bind :1" },
    global.settings,
    "class",
    "ops",
  );
  assert.equal(bad.problems.length, 1);
  assert.match(bad.problems[0].message, /^accept-proxy-protocol: ".*" has .*; the global value applies$/);
  assert.deepEqual(bad.settings.proxy.acceptProxy, global.settings.proxy.acceptProxy);
  assert.ok(isSettingKey("accept-proxy-protocol"));
  assert.deepEqual(parseClassParams({ "accept-proxy-protocol": "10.0.0.1" }).problems, [], "a class key, not unknown");
});

Deno.test("dedicated proxies: the Ingress's frontend annotations as settings, risk-limited; other keys are not settings", () => {
  const annotations = {
    "ingress-controller.io/timeout-client": "2m",
    "ingress-controller.io/accept-proxy-protocol": "10.0.0.0/8",
    "ingress-controller.io/hsts": "true",
    "ingress-controller.io/proxy": "dedicated",
  };
  assert.deepEqual(dedicatedFrontendData(annotations, null), {
    data: { "timeout-client": "2m", "accept-proxy-protocol": "10.0.0.0/8" },
    problems: [],
  });
  const limited = dedicatedFrontendData(annotations, "high");
  assert.deepEqual(limited.data, { "timeout-client": "2m" });
  assert.deepEqual(limited.problems.map((p) => p.key), ["accept-proxy-protocol"]);
  assert.match(limited.problems[0].message, /^accept-proxy-protocol is disabled \(risk high\)/);
});

Deno.test("auth-url-allowed-hosts: a checked host list in the layer's values; a class's replaces the global one", () => {
  const global = parse({ "auth-url-allowed-hosts": "oauth2-proxy.auth.svc.cluster.local, *.sso.svc.cluster.local" });
  assert.deepEqual(global.problems, []);
  assert.equal(
    global.settings.annotations["auth-url-allowed-hosts"],
    "oauth2-proxy.auth.svc.cluster.local, *.sso.svc.cluster.local",
  );
  const cls = parseGlobalSettings(
    { "auth-url-allowed-hosts": "dex.sso.svc.cluster.local" },
    global.settings,
    "class",
    "ops",
  );
  assert.deepEqual([cls.problems, cls.settings.annotations], [[], {
    "auth-url-allowed-hosts": "dex.sso.svc.cluster.local",
  }]);
  assert.ok(isSettingKey("auth-url-allowed-hosts"));
  assert.deepEqual(parseClassParams({ "auth-url-allowed-hosts": "a.example.com" }).problems, []);
  for (const bad of ["", "auth.example.com/x", "*", "a.example.com,'b'", "${HOME}.example.com"]) {
    const r = parse({ "auth-url-allowed-hosts": bad });
    assert.equal(r.problems.length, 1, bad);
    assert.match(r.problems[0].message, /^auth-url-allowed-hosts: .* is not a comma-separated list of host names/);
    assert.equal(r.settings.annotations["auth-url-allowed-hosts"], undefined, "a bad list is not used");
  }
});

Deno.test("server-header: the Server value of the proxies, checked with an anchored pattern; empty turns it off", () => {
  assert.equal(defaultGlobalSettings.proxy.serverHeader, "ingress-controller");
  assert.equal(parse({ "server-header": "nginx" }).settings.proxy.serverHeader, "nginx");
  assert.equal(parse({ "server-header": "shop/2.1 (edge)" }).settings.proxy.serverHeader, "shop/2.1 (edge)");
  assert.equal(parse({ "server-header": "" }).settings.proxy.serverHeader, "");
  for (
    const value of ["a'b", "x%[src]", 'say "hi"', "a\nX-Evil: 1", " lead", "trail ", "two  spaces", "a".repeat(129)]
  ) {
    const bad = parse({ "server-header": value });
    assert.equal(bad.settings.proxy.serverHeader, "ingress-controller", value);
    assert.match(bad.problems[0].message, /^server-header: .* is not a Server header value .*; the default applies$/);
  }
  const cls = parseGlobalSettings(
    { "server-header": "" },
    parse({ "server-header": "nginx" }).settings,
    "class",
    "ops",
  );
  assert.equal(cls.settings.proxy.serverHeader, "", "a class's value overrides the global one");
  assert.ok(isSettingKey("server-header"));
  assert.deepEqual(parseClassParams({ "server-header": "nginx" }).problems, [], "a class key, not unknown");
});
