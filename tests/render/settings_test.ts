/**
 * The settings of a route as lib/render/settings.ts reads them: the order the features are read in
 * is the order their problems are reported in, and the fields' order is part of a variant's name
 * (settingsHash hashes their JSON): another order would rename every variant of every proxy.
 */
import assert from "node:assert/strict";
import { ANNOTATIONS } from "../../lib/annotations/table.ts";
import { DEFAULT_SETTINGS, resolveBackendSettings, settingsHash } from "../../lib/render/settings.ts";
import type { SecretScope } from "../../lib/render/settings_reader.ts";
import { FULL_INGRESS, FULL_SERVICE, usableSecrets } from "./settings_fixtures.ts";

Deno.test("settings: a route setting every feature has its fields in a fixed order and a fixed variant name", () => {
  const problems: string[] = [];
  const s = resolveBackendSettings(
    FULL_INGRESS,
    FULL_SERVICE,
    { path: "/api", match: "prefix" },
    (_, m) => problems.push(m),
    undefined,
    usableSecrets,
  );
  assert.deepEqual(problems, []);
  // DEFAULT_SETTINGS's fields, then the optional ones in the order they are read
  assert.deepEqual(Object.keys(s), [
    ...Object.keys(DEFAULT_SETTINGS),
    "serviceUpstream",
    "basicAuth",
    "clientCert",
    "errorPages",
  ]);
  assert.deepEqual(Object.keys(DEFAULT_SETTINGS), [
    "balance",
    "timeouts",
    "hsts",
    "redirectTo",
    "appRoot",
    "maxBody",
    "allow",
    "deny",
    "rate",
    "request",
    "response",
    "cors",
    "sticky",
    "proxyProtocol",
    "protocol",
    "backendTls",
    "rewrite",
    "wwwRedirectTo",
    "defaultBackend",
    "extAuth",
  ]);
  assert.equal(settingsHash(s), "c2730e8f0d");
});

Deno.test("settings: refused values are reported in the order the features are read", () => {
  const all = Object.fromEntries(ANNOTATIONS.map((a) => [`ingress-controller.io/${a.key}`, "bad value"]));
  const none: SecretScope = { namespace: "shop", secret: () => undefined };
  const problems: string[] = [];
  resolveBackendSettings(all, {}, { path: "/", match: "prefix" }, (_, m) => problems.push(m), undefined, none);
  assert.deepEqual(problems.map((m) => /^annotation ingress-controller\.io\/([a-z-]+)/.exec(m)?.[1]), [
    "load-balance",
    "timeout-connect",
    "timeout-server",
    "timeout-queue",
    "timeout-tunnel",
    "timeout-sse",
    "hsts",
    "redirect-to",
    "app-root",
    "max-body-size",
    "allow-list",
    "deny-list",
    "rate-limit-rps",
    "rate-limit-rpm",
    "rate-limit-connections",
    "request-headers-set",
    "request-headers-add",
    "request-headers-delete",
    "response-headers-set",
    "response-headers-add",
    "response-headers-delete",
    "cors-enable",
    "sticky-cookie",
    "service-upstream",
    "backend-proxy-protocol",
    "backend-protocol",
    "backend-ca-secret",
    "auth-url",
    "auth-signin",
    "auth-response-headers",
    "auth-request-headers",
    "auth-basic-secret",
    "client-cert-ca-secret",
    "client-cert-header",
    "rewrite-target",
    "default-backend",
    "error-codes",
  ]);
});
