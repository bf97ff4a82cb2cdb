/**
 * A Gateway's model with BackendTLSPolicies (lib/gateway/model.ts through lib/gateway/backends.ts):
 * the Service backend a policy targets carries its TLS check, an unusable policy holds its port
 * (tls null: never reached), and the policies reaching the Gateway are listed (their ancestor).
 */
import assert from "node:assert/strict";
import { BackendTlsPolicies, type BackendTLSPolicy } from "../../lib/gateway/backend_tls.ts";
import { buildGateway } from "../../lib/gateway/model.ts";
import { lookupFromLists } from "../../lib/render/model.ts";
import { createCA } from "../../lib/pki/certs.ts";
import { backends, gateway, http, NS, route, routeCondition, toService } from "./fixtures.ts";

const CA = (await createCA({ commonName: "test CA" })).certPem;

function policy(name: string, service: string, caName: string): BackendTLSPolicy {
  return {
    metadata: { namespace: NS, name, creationTimestamp: "2026-01-01T00:00:00Z" },
    spec: {
      targetRefs: [{ group: "", kind: "Service", name: service }],
      validation: { hostname: "backend.example", caCertificateRefs: [{ group: "", kind: "ConfigMap", name: caName }] },
    },
  };
}

Deno.test("the backend of a Service a BackendTLSPolicy targets carries its check; the policy's ancestor is the Gateway", () => {
  const world = backends("secure", "broken", "plain");
  const tls = new BackendTlsPolicies(
    [policy("secure-tls", "secure", "ca"), policy("broken-tls", "broken", "absent")],
    (ns, name) => ns === NS && name === "ca" ? { data: { "ca.crt": CA } } : undefined,
    false,
  );
  const b = buildGateway({
    gateway: gateway([http("web")]),
    gatewayClass: { metadata: { name: "ours" }, spec: { controllerName: "ingress-controller.io/gateway-controller" } },
    routes: [
      route("r", [toService("secure"), toService("broken"), toService("plain")]),
    ],
    grants: [],
    namespaceLabels: (ns) => ns === NS ? { "kubernetes.io/metadata.name": NS } : undefined,
    lookup: lookupFromLists({ services: world.services, endpointSlices: world.endpointSlices }),
    backendTls: tls,
  });
  const byService = new Map(b.proxy.backends.map((x) => [x.service, x]));
  const secure = byService.get("secure")!.tls;
  assert.equal(secure?.policy, `${NS}/secure-tls`);
  assert.equal(secure?.sni, "backend.example");
  assert.equal(byService.get("broken")!.tls, null, "an unusable policy holds its port");
  assert.equal(byService.get("plain")!.tls, undefined, "no policy: plain HTTP");
  assert.deepEqual(b.tlsPolicies, [`${NS}/broken-tls`, `${NS}/secure-tls`]);
});

/** The model of one HTTPRoute to `services` with `policies` (CA ConfigMap `ca` holds a CA). */
function modelWith(services: ReturnType<typeof backends>, names: string[], policies: BackendTLSPolicy[]) {
  return buildGateway({
    gateway: gateway([http("web")]),
    gatewayClass: { metadata: { name: "ours" }, spec: { controllerName: "ingress-controller.io/gateway-controller" } },
    routes: [route("r", names.map((n) => toService(n)))],
    grants: [],
    namespaceLabels: (ns) => ns === NS ? { "kubernetes.io/metadata.name": NS } : undefined,
    lookup: lookupFromLists({ services: services.services, endpointSlices: services.endpointSlices }),
    backendTls: new BackendTlsPolicies(
      policies,
      (ns, name) => ns === NS && name === "ca" ? { data: { "ca.crt": CA } } : undefined,
      false,
    ),
  });
}

Deno.test("a conflicted policy on a port a route reaches also names the Gateway as its ancestor; the oldest applies", () => {
  const older = policy("b-older", "secure", "ca");
  const newer = { ...policy("a-newer", "secure", "ca"), metadata: { ...older.metadata, name: "a-newer" } };
  newer.metadata.creationTimestamp = "2026-01-02T00:00:00Z";
  const b = modelWith(backends("secure"), ["secure"], [newer, older]);
  assert.equal(b.proxy.backends[0].tls?.policy, `${NS}/b-older`);
  assert.deepEqual(b.tlsPolicies, [`${NS}/a-newer`, `${NS}/b-older`]);
});

Deno.test("appProtocol HTTPS: HTTP/1.1 over TLS with a BackendTLSPolicy; without one UnsupportedProtocol", () => {
  const world = backends("secure", "bare");
  for (const svc of world.services ?? []) (svc.spec!.ports![0] as { appProtocol?: string }).appProtocol = "HTTPS";
  const b = modelWith(world, ["secure", "bare"], [policy("secure-tls", "secure", "ca")]);
  assert.deepEqual(b.proxy.backends.map((x) => [x.service, x.tls?.policy, x.proto]), [
    ["secure", `${NS}/secure-tls`, undefined],
  ]);
  const resolved = routeCondition(b, "r", "ResolvedRefs");
  assert.equal(resolved?.reason, "UnsupportedProtocol");
  assert.match(resolved!.message, /bare port 8080 has appProtocol "HTTPS"; supported: .*HTTPS with a BackendTLSPolicy/);
});
