/** ReferenceGrant (v1beta1 ReferenceGrant docs): who may refer to what across namespaces. */
import assert from "node:assert/strict";
import { referenceAllowed } from "../../lib/gateway/references.ts";
import { grant } from "./fixtures.ts";

const fromRoute = { group: "gateway.networking.k8s.io", kind: "HTTPRoute", namespace: "apps" };
const svc = (name: string, namespace = "backends") => ({ group: "", kind: "Service", namespace, name });

Deno.test("a reference within one namespace needs no grant", () => {
  assert.equal(referenceAllowed([], fromRoute, svc("web", "apps")), true);
});

Deno.test("a cross-namespace reference without a grant is refused", () => {
  assert.equal(referenceAllowed([], fromRoute, svc("web")), false);
});

Deno.test("a grant naming the target allows it, and only it", () => {
  const g = [grant("backends", { kind: "HTTPRoute", namespace: "apps" }, { kind: "Service", name: "web" })];
  assert.equal(referenceAllowed(g, fromRoute, svc("web")), true);
  assert.equal(referenceAllowed(g, fromRoute, svc("db")), false);
});

Deno.test("a grant without a name allows every object of that kind in its namespace", () => {
  const g = [grant("backends", { kind: "HTTPRoute", namespace: "apps" }, { kind: "Service" })];
  assert.equal(referenceAllowed(g, fromRoute, svc("web")), true);
  assert.equal(referenceAllowed(g, fromRoute, svc("db")), true);
});

Deno.test("a grant for another kind, another source kind, group, or namespace allows nothing", () => {
  const wrong = [
    grant("backends", { kind: "HTTPRoute", namespace: "apps" }, { kind: "Secret", name: "web" }), // wrong to-kind
    grant("backends", { kind: "Gateway", namespace: "apps" }, { kind: "Service", name: "web" }), // wrong from-kind
    grant("backends", { kind: "HTTPRoute", namespace: "other" }, { kind: "Service", name: "web" }), // wrong from-namespace
    grant("backends", { group: "example.com", kind: "HTTPRoute", namespace: "apps" }, { kind: "Service" }), // wrong group
    grant("backends", { kind: "HTTPRoute", namespace: "apps" }, { group: "example.com", kind: "Service" }), // wrong to-group
    grant("elsewhere", { kind: "HTTPRoute", namespace: "apps" }, { kind: "Service", name: "web" }), // not in the target's namespace
  ];
  assert.equal(referenceAllowed(wrong, fromRoute, svc("web")), false);
});
