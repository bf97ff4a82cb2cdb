import assert from "node:assert/strict";
import { anySecretRef, layerSecretNames, refsOf, ReverseIndex, sliceServiceRef } from "../../lib/controller/refs.ts";

const ingress = {
  metadata: { name: "web", namespace: "shop" },
  spec: {
    defaultBackend: { service: { name: "fallback", port: { number: 80 } } },
    tls: [{ hosts: ["a.example.com"], secretName: "cert" }],
    rules: [
      {
        host: "a.example.com",
        http: { paths: [{ path: "/", backend: { service: { name: "front", port: { number: 80 } } } }] },
      },
      { http: { paths: [{ path: "/x", backend: { resource: { kind: "Bucket", name: "b" } } }] } },
    ],
  },
};

Deno.test("refs: services of rules and default backend, TLS secrets", () => {
  assert.deepEqual(refsOf(ingress), ["secret:shop/cert", "service:shop/fallback", "service:shop/front"]);
  assert.deepEqual(refsOf({ metadata: { name: "e", namespace: "n" } }), []);
});

Deno.test("refs: an EndpointSlice maps to its service", () => {
  assert.equal(
    sliceServiceRef({
      metadata: { name: "front-abc", namespace: "shop", labels: { "kubernetes.io/service-name": "front" } },
    }),
    "service:shop/front",
  );
  assert.equal(sliceServiceRef({ metadata: { name: "x", namespace: "shop" } }), null);
});

Deno.test("reverse index: only the ingresses that use a reference, updated on change and delete", () => {
  const ix = new ReverseIndex();
  ix.set("shop/a", ["service:shop/front", "secret:shop/cert"]);
  ix.set("shop/b", ["service:shop/front"]);
  ix.set("shop/c", ["service:shop/other"]);
  assert.deepEqual(ix.users("service:shop/front"), ["shop/a", "shop/b"]);
  ix.set("shop/b", ["service:shop/other"]);
  assert.deepEqual(ix.users("service:shop/front"), ["shop/a"]);
  assert.deepEqual(ix.users("service:shop/other"), ["shop/b", "shop/c"]);
  ix.delete("shop/a");
  assert.deepEqual(ix.users("service:shop/front"), []);
  assert.deepEqual(ix.users("secret:shop/cert"), []);
  assert.deepEqual(ix.refs("shop/c"), ["service:shop/other"]);
  // One user, several, back to one (the one left, not the one gone), none, and one again.
  ix.set("shop/d", ["service:shop/other"]);
  assert.deepEqual(ix.users("service:shop/other"), ["shop/b", "shop/c", "shop/d"]);
  ix.delete("shop/b");
  ix.delete("shop/d");
  assert.deepEqual(ix.users("service:shop/other"), ["shop/c"]);
  ix.set("shop/c", ["service:shop/other"]);
  assert.deepEqual(ix.users("service:shop/other"), ["shop/c"]);
  ix.delete("shop/c");
  assert.deepEqual(ix.users("service:shop/other"), []);
  ix.set("shop/e", ["service:shop/other"]);
  assert.deepEqual(ix.users("service:shop/other"), ["shop/e"]);
});

Deno.test("reverse index: a group's settings Secrets count while set, and stop counting once replaced or deleted", () => {
  const ix = new ReverseIndex();
  ix.set("class:edge", ["secret:ops/default-cert", anySecretRef("users")]);
  ix.set("shop/web", [anySecretRef("users")]);
  assert.ok(ix.used("secret:ops/default-cert") && ix.used(anySecretRef("users")));
  assert.ok(!ix.used("secret:shop/users"), "a namespaced ref is not the any-namespace one");
  // The global setting removed: the next computation of each group replaces its refs.
  ix.set("class:edge", ["secret:ops/default-cert"]);
  assert.ok(ix.used(anySecretRef("users")), "still used by shop/web");
  ix.delete("shop/web");
  assert.ok(!ix.used(anySecretRef("users")));
  assert.ok(ix.used("secret:ops/default-cert"));
});

Deno.test("refs: Secrets named by annotations, ours and ingress-nginx's (never another namespace's)", () => {
  const annotated = (annotations: Record<string, string>) =>
    refsOf({ metadata: { name: "web", namespace: "shop", annotations } });
  assert.deepEqual(
    annotated({
      "ingress-controller.io/auth-basic-secret": "users",
      "ingress-controller.io/backend-ca-secret": " backend-ca ",
      "ingress-controller.io/client-cert-ca-secret": "clients",
      "ingress-controller.io/backend-protocol": "h1-tls",
    }),
    ["secret:shop/backend-ca", "secret:shop/clients", "secret:shop/users"],
  );
  assert.deepEqual(
    annotated({
      "nginx.ingress.kubernetes.io/auth-secret": "shop/htpasswd",
      "nginx.ingress.kubernetes.io/auth-tls-secret": "other/ca",
      "nginx.ingress.kubernetes.io/proxy-ssl-secret": "upstream-ca",
      "nginx.ingress.kubernetes.io/proxy-ssl-verify": "on",
      "nginx.ingress.kubernetes.io/auth-secret-type": "auth-file",
      "nginx.ingress.kubernetes.io/auth-type": "basic",
    }),
    ["secret:shop/htpasswd", "secret:shop/upstream-ca"],
  );
});

Deno.test("refs: the Secret names a settings layer gives Secret-valued keys (bare keys, any namespace)", () => {
  assert.deepEqual(
    layerSecretNames({
      "auth-basic-secret": " users ",
      "backend-ca-secret": "ca",
      "backend-protocol": "h1-tls",
      "client-cert-ca-secret": "",
    }).sort(),
    ["ca", "users"],
  );
});
