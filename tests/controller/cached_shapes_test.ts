/**
 * The controller's cached Ingresses, Services and EndpointSlices keep every field something reads: the
 * same Ingresses over the API server's objects and over the cached shapes give the same configuration,
 * maps and problems; and what the shapes drop (per-Pod endpoint fields, IP families) is gone.
 */
import assert from "node:assert/strict";
import type { V1EndpointSlice, V1Service } from "@kubernetes/client-node";
import {
  cachedIngress,
  cachedService,
  cachedSlice,
  CARRIED_FIELD,
  ownedShape,
} from "../../lib/controller/cached_shapes.ts";
import { configDigest, sha256Hex } from "../../lib/transport/parts.ts";
import { loadBalancerOf } from "../../lib/controller/status.ts";
import type { KubeObject } from "../../lib/cluster/resources.ts";
import { buildModel, lookupFromLists } from "../../lib/render/model.ts";
import { loadTemplates, render } from "../../lib/render/render.ts";
import { endpointSlice, ingress, service } from "../render/fixtures.ts";

const A = "ingress-controller.io/";

/** A Service as the API server returns it: defaulted fields, managedFields, a status. */
function served(s: V1Service, extra: Record<string, unknown> = {}): V1Service {
  return {
    ...s,
    metadata: {
      ...s.metadata,
      uid: `uid-${s.metadata!.name}`,
      resourceVersion: "42",
      creationTimestamp: new Date("2026-01-01T00:00:00Z"),
      managedFields: [{ manager: "kubectl", operation: "Update" }],
      labels: { "app.kubernetes.io/name": s.metadata!.name!, "app.kubernetes.io/managed-by": "Helm" },
    },
    spec: {
      clusterIP: "10.96.0.10",
      clusterIPs: ["10.96.0.10"],
      ipFamilies: ["IPv4"],
      ipFamilyPolicy: "SingleStack",
      internalTrafficPolicy: "Cluster",
      sessionAffinity: "None",
      selector: { app: s.metadata!.name! },
      type: "ClusterIP",
      ...s.spec,
      ...extra,
    },
    status: { loadBalancer: {} },
  };
}

/** An EndpointSlice as the EndpointSlice controller writes it: per-Pod fields on every endpoint. */
function perPod(s: V1EndpointSlice): V1EndpointSlice {
  return {
    ...s,
    metadata: {
      ...s.metadata,
      uid: `uid-${s.metadata!.name}`,
      resourceVersion: "7",
      generateName: "x-",
      // The EndpointSlice controller's own label and the Service's, copied.
      labels: {
        ...s.metadata!.labels,
        "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
        "app.kubernetes.io/managed-by": "Helm",
      },
    },
    endpoints: (s.endpoints ?? []).map((e, i) => ({
      ...e,
      nodeName: "node-1",
      zone: "z1",
      targetRef: { kind: "Pod", namespace: "default", name: `pod-${i}`, uid: `pod-uid-${i}` },
      hints: { forZones: [{ name: "z1" }] },
    })),
  };
}

Deno.test("the cached Ingresses, Services and EndpointSlices render exactly what the API server's objects render", async () => {
  const web = served(service("web", [{ name: "http", port: 80, targetPort: "http" }]));
  web.metadata!.annotations = { [`${A}load-balance`]: "leastconn", [`${A}timeout-server`]: "7s" };
  const api = served(service("api", [{ port: 8080, targetPort: 9090 }]));
  const upstream = served(service("upstream", [{ name: "http", port: 80, targetPort: 8080 }]), {
    clusterIP: "10.96.0.77",
    clusterIPs: ["10.96.0.77"],
  });
  const external = served(service("ext", [{ port: 80 }]), { type: "ExternalName", externalName: "db.example.org" });
  const services = [web, api, upstream, external];
  const slices = [
    perPod(endpointSlice("web", [{ name: "http", port: 8080 }], [
      { address: "10.1.0.1" },
      { address: "10.1.0.2", ready: false },
      { address: "10.1.0.3", ready: true },
    ])),
    perPod(endpointSlice("api", [{ port: 9090 }], [{ address: "fd00::5" }], { addressType: "IPv6" })),
    perPod(endpointSlice("api", [{ port: 9090 }], [{ address: "10.1.1.1" }], { name: "api-def" })),
    perPod(endpointSlice("upstream", [{ name: "http", port: 8080 }], [{ address: "10.1.2.1" }])),
  ];
  const route = (host: string, svc: string, port: number | string) => ({
    host,
    paths: [{ path: "/", service: svc, port }],
  });
  const ingresses = [
    ingress({ name: "web", rules: [route("web.example", "web", "http")] }),
    ingress({ name: "api", rules: [route("api.example", "api", 8080)] }),
    ingress({
      name: "up",
      annotations: { [`${A}service-upstream`]: "true" },
      rules: [route("up.example", "upstream", 80)],
    }),
    ingress({ name: "ext", rules: [route("ext.example", "ext", 80)] }),
    ingress({ name: "none", rules: [route("none.example", "missing", 80)] }),
  ];
  const templates = await loadTemplates(null);
  const outcome = (lists: { services: V1Service[]; endpointSlices: V1EndpointSlice[] }, ings = ingresses) => {
    const { model, problems } = buildModel({ ingresses: ings, lookup: lookupFromLists(lists) });
    const r = render(model, templates);
    return { config: r.config, maps: r.maps, problems: problems.map((p) => `${p.object} ${p.reason} ${p.message}`) };
  };
  const cached = {
    services: services.map((s) => cachedService(structuredClone(s) as KubeObject) as V1Service),
    endpointSlices: slices.map((s) => cachedSlice(structuredClone(s) as KubeObject) as V1EndpointSlice),
  };
  const want = outcome({ services, endpointSlices: slices });
  assert.ok(want.config.includes("10.1.0.3:8080"), "the fixture reaches the endpoints");
  assert.ok(want.config.includes("10.96.0.77:80"), "and service-upstream's cluster IP");
  assert.ok(want.problems.some((p) => p.includes("ExternalName")), "and the ExternalName refusal");
  assert.match(want.config, /balance leastconn/, "and the Service's annotations");
  assert.ok(!want.config.includes("10.1.0.2:8080"), "and the endpoints' conditions");
  assert.deepEqual(outcome(cached), want);
  // The cached Ingresses (their Service ports shared) with the cached Services and slices: the same again.
  const cachedIngresses = ingresses.map((i) => cachedIngress(structuredClone(i) as KubeObject) as typeof i);
  assert.deepEqual(outcome(cached, cachedIngresses), want);

  const [c] = cached.endpointSlices;
  assert.deepEqual(Object.keys(c.endpoints![0]).sort(), ["addresses", "conditions"]);
  // Of a user's slice's labels only the Service name is kept, and none of a user's Service.
  assert.deepEqual(c.metadata!.labels, { "kubernetes.io/service-name": "web" });
  assert.equal(cached.services[0].metadata!.labels, undefined);
  assert.equal((c.metadata as Record<string, unknown>).generateName, undefined);
  const s = cached.services[0];
  assert.equal(s.spec!.ipFamilies, undefined);
  assert.equal(s.spec!.selector, undefined);
  assert.equal((s.metadata as Record<string, unknown>).managedFields, undefined);
  assert.deepEqual(s.metadata!.annotations, web.metadata!.annotations);
  // A user's Service or slice keeps no identity or version (nothing reads them), nor a one-address clusterIPs.
  assert.equal(s.metadata!.uid, undefined);
  assert.equal(c.metadata!.resourceVersion, undefined);
  assert.equal(s.spec!.clusterIPs, undefined);
});

Deno.test("equal ports and conditions are one frozen value for all the cached objects holding them", () => {
  const port80 = () => served(service("a", [{ name: "http", port: 80, targetPort: 8080 }]));
  const [a, b] = [port80(), port80()].map((s) => cachedService(s as KubeObject));
  assert.equal(a.spec.ports, b.spec.ports);
  assert.ok(Object.isFrozen(a.spec.ports[0]));
  const other = cachedService(served(service("c", [{ name: "http", port: 81, targetPort: 8080 }])) as KubeObject);
  assert.notEqual(other.spec.ports, a.spec.ports);
  const slice = cachedSlice(perPod(endpointSlice("a", [{ port: 8080 }], [
    { address: "10.1.0.1" },
    { address: "10.1.0.2" },
  ])) as KubeObject);
  assert.equal(slice.endpoints[0].conditions, slice.endpoints[1].conditions);
  assert.deepEqual(slice.endpoints.map((e: { addresses: string[] }) => e.addresses), [["10.1.0.1"], ["10.1.0.2"]]);
});

Deno.test("the controller's own Services keep their uid and version: it updates and deletes them by uid", () => {
  const own = served(service("proxy", [{ port: 80 }]));
  own.metadata!.labels = { "app.kubernetes.io/managed-by": "ingress-controller" };
  const c = cachedService(own as KubeObject);
  assert.equal(c.metadata.uid, "uid-proxy");
  assert.equal(c.metadata.resourceVersion, "42");
});

Deno.test("a cached Service keeps what the Ingress status is made of: the load-balancer, else the cluster IPs", () => {
  const lb = served(service("proxy", [{ port: 80 }]), { type: "LoadBalancer" });
  lb.status = { loadBalancer: { ingress: [{ ip: "203.0.113.7" }, { hostname: "lb.example" }] } };
  const cluster = served(service("proxy2", [{ port: 80 }]), { clusterIPs: ["10.96.0.10", "fd00::10"] });
  for (const s of [lb, cluster]) {
    assert.deepEqual(loadBalancerOf(cachedService(structuredClone(s) as KubeObject)), loadBalancerOf(s as KubeObject));
  }
  assert.deepEqual(loadBalancerOf(cachedService(structuredClone(cluster) as KubeObject)), [
    { ip: "10.96.0.10" },
    { ip: "fd00::10" },
  ]);
});

Deno.test("an owned object keeps its identity, labels, owner, what the controller sets, and a Deployment its availability", () => {
  const kept = {
    name: "p",
    namespace: "ns",
    uid: "u",
    resourceVersion: "3",
    labels: { a: "b" },
    annotations: { h: "1" },
    ownerReferences: [{ apiVersion: "v1", kind: "X", name: "o", uid: "ou" }],
  };
  const d = ownedShape({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { ...kept, managedFields: [{}] } as KubeObject["metadata"],
    spec: { replicas: 2 },
    status: { availableReplicas: 1, replicas: 2 },
  });
  assert.deepEqual(d, {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: kept,
    spec: { replicas: 2 },
    status: { availableReplicas: 1 },
  });
  const role = ownedShape({ apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role", metadata: kept, rules: [] });
  assert.deepEqual(role.rules, []);
});

Deno.test("an owned ConfigMap keeps the digests of its data, never the data", () => {
  const data = { "haproxy.cfg": "global\n", "crt-list": "" };
  const cm = ownedShape({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "p", namespace: "ns" }, data });
  assert.equal(cm.data, undefined);
  assert.deepEqual(cm[CARRIED_FIELD], { config: configDigest(data), part: null });
  const part = ownedShape({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "p-part-0", namespace: "ns" },
    data: { part: "backend x\n" },
  });
  assert.equal(part[CARRIED_FIELD].part, sha256Hex("backend x\n"));
});

Deno.test("the controller's own Services keep their selector; a user's Service does not", () => {
  const own = served(service("proxy", [{ port: 80 }]));
  own.metadata!.labels = { "app.kubernetes.io/managed-by": "ingress-controller" };
  own.spec!.selector = { app: "haproxy" };
  assert.deepEqual(cachedService(own as KubeObject).spec.selector, { app: "haproxy" });
  const user = served(service("web", [{ port: 80 }]));
  user.spec!.selector = { app: "web" };
  assert.equal(cachedService(user as KubeObject).spec.selector, undefined);
});

Deno.test("Ingresses showing the same status share one frozen status; the rest of each stays its own", () => {
  const shown = (name: string, ip: string): KubeObject => ({
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: { name, namespace: "apps", managedFields: [{}] } as KubeObject["metadata"],
    spec: { rules: [{ host: `${name}.example` }] },
    status: { loadBalancer: { ingress: [{ ip }] } },
  });
  const [a, b, c] = [shown("a", "10.0.0.1"), shown("b", "10.0.0.1"), shown("c", "10.0.0.2")].map(cachedIngress);
  assert.equal(a.status, b.status);
  assert.notEqual(a.status, c.status);
  assert.deepEqual(c.status, { loadBalancer: { ingress: [{ ip: "10.0.0.2" }] } });
  assert.ok(Object.isFrozen(a.status.loadBalancer.ingress[0]));
  assert.throws(() => a.status.loadBalancer.ingress.push({ ip: "10.0.0.9" }), TypeError);
  assert.notEqual(a.spec, b.spec);
  assert.ok(!("managedFields" in a.metadata));
  const bare = cachedIngress({ metadata: { name: "d", namespace: "apps" }, spec: {} });
  assert.equal(bare.status, undefined);
});

Deno.test("Ingresses naming the same Service port share one frozen port; other ports stay apart", () => {
  const routed = (name: string, port: number | string, defaultPort?: number) =>
    cachedIngress(
      structuredClone(ingress({
        name,
        rules: [{ host: `${name}.example`, paths: [{ path: "/", service: name, port }] }],
        defaultBackend: defaultPort === undefined ? undefined : { service: "fallback", port: defaultPort },
      })) as KubeObject,
    );
  const portOf = (i: KubeObject) => i.spec.rules[0].http.paths[0].backend.service.port;
  const [a, b, c, d] = [routed("a", 80), routed("b", 80, 80), routed("c", 8080), routed("d", "http")];
  assert.equal(portOf(a), portOf(b));
  assert.equal(b.spec.defaultBackend.service.port, portOf(a));
  assert.notEqual(portOf(a), portOf(c));
  assert.deepEqual(portOf(c), { number: 8080 });
  assert.deepEqual(portOf(d), { name: "http" });
  assert.ok(Object.isFrozen(portOf(a)));
  assert.notEqual(a.spec.rules[0].http.paths[0].backend.service, b.spec.rules[0].http.paths[0].backend.service);
  // Odd specs are left as they are (the model reports them).
  const odd = cachedIngress({ metadata: { name: "e", namespace: "apps" }, spec: { rules: [null, { http: {} }] } });
  assert.deepEqual(odd.spec, { rules: [null, { http: {} }] });
});
