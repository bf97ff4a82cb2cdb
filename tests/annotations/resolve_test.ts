/**
 * Reading and validating the table's keys: legacy aliases, the one-line messages the webhook and
 * the controller share, unknown keys of our prefix, scope (frontend keys only on an Ingress with a
 * dedicated proxy; only backend keys on a Service), risk-level disabling, and the precedence of
 * global < class ConfigMap < Ingress < Service with a bad layer falling through to the one below.
 */
import assert from "node:assert/strict";
import { readAnnotation, resolveSetting, riskDisabled, validateAnnotations } from "../../lib/annotations/resolve.ts";
import { ANNOTATIONS, specOfAnnotation } from "../../lib/annotations/table.ts";
import { buildModel, lookupFromLists } from "../../lib/render/model.ts";
import { ingress, service, tlsSecret } from "../render/fixtures.ts";

Deno.test("our key wins over its legacy alias; the alias alone is read", () => {
  const both = readAnnotation(
    { "ingress-controller.io/load-balance": "leastconn", "ingress.kubernetes.io/load-balance": "source" },
    "load-balance",
  );
  assert.equal(both?.name, "ingress-controller.io/load-balance");
  assert.deepEqual(both?.parsed, { ok: true, value: "leastconn" });
  const legacy = readAnnotation({ "ingress.kubernetes.io/load-balance": "source" }, "load-balance");
  assert.equal(legacy?.name, "ingress.kubernetes.io/load-balance");
  assert.equal(readAnnotation({}, "load-balance"), undefined);
  assert.throws(() => readAnnotation({}, "no-such-key"), /no annotation no-such-key/);
});

Deno.test("the table: unique keys, every legacy key of the model is an alias", () => {
  assert.equal(new Set(ANNOTATIONS.map((a) => a.key)).size, ANNOTATIONS.length);
  for (const k of ["ssl-redirect", "load-balance", "timeout-server"]) {
    assert.equal(specOfAnnotation(`ingress.kubernetes.io/${k}`)?.key, k);
    assert.equal(specOfAnnotation(`ingress-controller.io/${k}`)?.status, "served");
  }
  assert.equal(specOfAnnotation("nginx.ingress.kubernetes.io/ssl-redirect"), undefined);
});

Deno.test("validation: bad values, unknown keys of our prefix, one line each naming the annotation", () => {
  const problems = validateAnnotations({
    "ingress-controller.io/hsts-max-age": "one year",
    "ingress-controller.io/allow-list": "10.0.0.0/8\n    http-request allow",
    "ingress-controller.io/canary-weight": "50",
    "ingress-controller.io/ssl-redriect": "false",
    "ingress.kubernetes.io/timeout-server": "%[env(HOME)]",
    "example.com/other": "${anything}",
  });
  assert.deepEqual(problems.map((p) => p.message), [
    'annotation ingress-controller.io/allow-list: "10.0.0.0/8\\n    http-request allow" has "10.0.0.0/8\\n    http-request allow", which is not an IPv4/IPv6 address or CIDR',
    'annotation ingress-controller.io/hsts-max-age: "one year" is not an integer 0–2147483647',
    'annotation "ingress-controller.io/ssl-redriect" is not an annotation of this controller (see the README\'s reference)',
    'annotation ingress.kubernetes.io/timeout-server: "%[env(HOME)]" is not a duration like 30s',
  ]);
  for (const p of problems) assert.doesNotMatch(p.message, /\n/);
});

Deno.test("scope: frontend keys need a dedicated proxy; only backend keys apply on a Service", () => {
  const shared = validateAnnotations({ "ingress-controller.io/timeout-client": "1m" });
  assert.equal(shared.length, 1);
  assert.match(shared[0].message, /cannot be set on an Ingress sharing its class's proxy: .*proxy: dedicated/);
  assert.deepEqual(
    validateAnnotations({ "ingress-controller.io/timeout-client": "1m", "ingress-controller.io/proxy": "dedicated" }),
    [],
  );
  assert.deepEqual(validateAnnotations({ "ingress-controller.io/timeout-server": "1m" }, { onService: true }), []);
  const onService = validateAnnotations({ "ingress-controller.io/allow-list": "10.0.0.0/8" }, { onService: true });
  assert.match(onService[0].message, /cannot be set on a Service \(it is a path setting; set it on the Ingress\)/);
});

Deno.test("risk: a global setting disables keys at or above a level", () => {
  assert.equal(riskDisabled("high", "high"), true);
  assert.equal(riskDisabled("critical", "high"), true);
  assert.equal(riskDisabled("medium", "high"), false);
  assert.equal(riskDisabled("critical", null), false);
  const a = { "ingress-controller.io/auth-url": "http://auth.example/check", "ingress-controller.io/hsts": "true" };
  assert.deepEqual(validateAnnotations(a), []);
  const problems = validateAnnotations(a, { disableRiskAtOrAbove: "high" });
  assert.equal(problems.length, 1);
  assert.match(problems[0].message, /^annotation ingress-controller\.io\/auth-url is disabled: its risk is high/);
});

Deno.test("precedence: global < class < Ingress < Service (backend keys); bad layers fall through", () => {
  const layers = {
    global: { "timeout-connect": "1s" },
    class: { "timeout-connect": "2s" },
    ingress: { "ingress-controller.io/timeout-connect": "3s" },
    service: { "ingress-controller.io/timeout-connect": "4s" },
  };
  assert.deepEqual(resolveSetting("timeout-connect", layers), { value: "4s", source: "service", problems: [] });
  assert.equal(resolveSetting("timeout-connect", { ...layers, service: {} }).value, "3s");
  assert.equal(resolveSetting("timeout-connect", { global: layers.global, class: layers.class }).value, "2s");
  assert.deepEqual(resolveSetting("timeout-connect", {}), { value: "5s", source: "default", problems: [] });

  const bad = resolveSetting("timeout-connect", {
    ...layers,
    service: { "ingress-controller.io/timeout-connect": "soon" },
  });
  assert.equal(bad.value, "3s");
  assert.equal(bad.source, "ingress");
  assert.match(
    bad.problems[0].message,
    /^annotation ingress-controller\.io\/timeout-connect: "soon" is not a duration/,
  );

  // A path key on a Service is not used; the Ingress's applies.
  const path = resolveSetting("max-body-size", {
    ingress: { "ingress-controller.io/max-body-size": "1m" },
    service: { "ingress-controller.io/max-body-size": "9m" },
  });
  assert.equal(path.value, 1024 * 1024);
  assert.equal(path.problems.length, 1);

  // Disabled by risk in annotations, still taken from the class ConfigMap.
  const risky = resolveSetting("auth-url", {
    class: { "auth-url": "http://auth.example/a" },
    ingress: { "ingress-controller.io/auth-url": "http://evil.example/b" },
  }, { disableRiskAtOrAbove: "high" });
  assert.equal((risky.value as { url: string }).url, "http://auth.example/a");
  assert.equal(risky.source, "class");
  assert.match(risky.problems[0].message, /is disabled \(risk high\)/);

  const cm = resolveSetting("timeout-connect", { class: { "timeout-connect": "x" } });
  assert.match(cm.problems[0].message, /^annotation class ConfigMap key timeout-connect: "x"/);
});

Deno.test("the model reads our keys, and the legacy ones as aliases (ours win)", () => {
  const lookup = lookupFromLists({
    services: [service("web", [{ port: 80 }])],
    secrets: [tlsSecret("foo-tls")],
  });
  const build = (annotations: Record<string, string>) =>
    buildModel({
      lookup,
      ingresses: [ingress({
        name: "t",
        annotations,
        tls: [{ hosts: ["foo.example.com"], secretName: "foo-tls" }],
        rules: [{ host: "foo.example.com", paths: [{ path: "/", service: "web", port: 80 }] }],
      })],
    });
  const ours = build({
    "ingress-controller.io/ssl-redirect": "false",
    "ingress-controller.io/load-balance": "leastconn",
    "ingress-controller.io/timeout-server": "45s",
    "ingress.kubernetes.io/load-balance": "source",
  });
  assert.deepEqual(ours.problems, []);
  assert.deepEqual(ours.model.redirectHosts, []);
  assert.equal(ours.model.backends[0].balance, "leastconn");
  assert.equal(ours.model.backends[0].timeoutServer, "45s");
  const legacy = build({
    "ingress.kubernetes.io/ssl-redirect": "false",
    "ingress.kubernetes.io/load-balance": "source",
  });
  assert.deepEqual(legacy.model.redirectHosts, []);
  assert.equal(legacy.model.backends[0].balance, "source");
  const bad = build({ "ingress-controller.io/ssl-redirect": "nope" });
  assert.deepEqual(bad.model.redirectHosts, ["foo.example.com"]);
  assert.deepEqual(bad.problems.map((p) => p.message), [
    'annotation ingress-controller.io/ssl-redirect: "nope" is not "true" or "false"; using true',
  ]);
});

Deno.test("a refused value's message stays on one line, also when the parser's reason quotes the value", () => {
  const problems = validateAnnotations({ "ingress-controller.io/allow-list": "10.0.0.0/8, 1\u2028 {web" });
  assert.equal(problems.length, 1);
  assert.doesNotMatch(problems[0].message, /[\r\n\u2028\u2029]/);
  assert.match(problems[0].message, /^annotation ingress-controller.io\/allow-list: .*\\u2028/);
});
